import assert from 'node:assert/strict';
import { test } from 'node:test';
import { shapeOf } from '../../src/formats/value-shape.ts';

const JWS = 'eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJ4In0.c2lnbmF0dXJl';

test('each credential shape is told apart by syntax alone, and the shapes do not overlap', () => {
  assert.equal(shapeOf({ '@context': [] }), 'json-object');
  assert.equal(shapeOf(JWS), 'compact-jws');
  assert.equal(shapeOf(`${JWS}~`), 'compact-sd-jwt', 'an SD-JWT without disclosures');
  assert.equal(shapeOf(`${JWS}~WyJzYWx0IiwibmFtZSIsMV0~`), 'compact-sd-jwt');
  assert.equal(shapeOf(`${JWS}~WyJzYWx0IiwibmFtZSIsMV0~${JWS}`), 'compact-sd-jwt', 'with a key binding JWT');
  assert.equal(shapeOf('omdkb2NUeXBl'), 'base64url');
  assert.equal(shapeOf('AAA'), 'base64url', 'a length of 4n+3 encodes two bytes');
});

test('values of no shape: other JSON types, padding, stray characters, wrong dots or tildes', () => {
  for (const value of [
    null,
    42,
    true,
    [],
    ['a'],
    '',
    'not a credential',
    'QUJD=',
    'AAAAA',
    'a.b',
    'a.b.c.d',
    'a..c',
    `${JWS}~~`,
    `~${JWS}`,
    `${JWS}~a~b`,
    'a~b~',
    `${JWS}\n`,
  ]) {
    assert.equal(shapeOf(value), null, JSON.stringify(value));
  }
});
