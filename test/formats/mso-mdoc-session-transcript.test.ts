import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { cborEncode } from '@owf/mdoc';
import * as cborg from 'cborg';
import { oid4vpSessionTranscript } from '../../src/formats/mso-mdoc/session-transcript.ts';

/**
 * The SessionTranscript builder that the hosted wallet and the verifier share, against the
 * examples of OpenID4VP 1.0 B.2.6.1 and B.2.6.2, read from ../shared/spec (never copied): the
 * handover info is decoded from the spec's hex, and the transcript must be the spec's bytes.
 */

const SPEC = readFileSync(path.resolve(import.meta.dirname, '../../../shared/spec/openid4vp-1.0.md'), 'utf8');

/** The hex of every "non-normative example of the `name` structure", in the order of the spec. */
function examplesOf(name: string): Uint8Array[] {
  const heading = `The following is a non-normative example of the \`${name}\` structure:`;
  const examples: Uint8Array[] = [];
  for (let at = SPEC.indexOf(heading); at >= 0; at = SPEC.indexOf(heading, at + 1)) {
    const block = SPEC.slice(at + heading.length);
    const hex = block.slice(block.indexOf('Hex:') + 4, block.indexOf('CBOR diagnostic:')).replace(/\s/g, '');
    assert.match(hex, /^[0-9a-f]+$/);
    examples.push(new Uint8Array(Buffer.from(hex, 'hex')));
  }
  return examples;
}

test('OpenID4VPHandover (B.2.6.1): the spec example transcript, byte for byte', () => {
  const [info] = examplesOf('OpenID4VPHandoverInfo');
  const [clientId, nonce, thumbprint, responseUri] = cborg.decode(info!) as [
    string,
    string,
    Uint8Array,
    string,
  ];
  const [redirects] = examplesOf('SessionTranscript');
  const transcript = oid4vpSessionTranscript({
    clientId,
    nonce,
    responseUri,
    encryptionJwkThumbprint: thumbprint,
  });
  assert.deepEqual(
    Buffer.from(cborEncode(transcript)).toString('hex'),
    Buffer.from(redirects!).toString('hex'),
  );
  assert.equal(transcript[2][0], 'OpenID4VPHandover');
  assert.deepEqual(cborEncode(transcript[2]), examplesOf('OpenID4VPHandover')[0]);
});

test('OpenID4VPDCAPIHandover (B.2.6.2): the spec example transcript, byte for byte; client_id and response_uri play no part', () => {
  const [info] = examplesOf('OpenID4VPDCAPIHandoverInfo');
  const [origin, nonce, thumbprint] = cborg.decode(info!) as [string, string, Uint8Array];
  const [, dcApi] = examplesOf('SessionTranscript');
  for (const clientId of ['origin:https://example.com', 'x509_hash:abc']) {
    const transcript = oid4vpSessionTranscript(
      { clientId, nonce, responseUri: 'https://ignored.example', encryptionJwkThumbprint: thumbprint },
      origin,
    );
    assert.deepEqual(
      Buffer.from(cborEncode(transcript)).toString('hex'),
      Buffer.from(dcApi!).toString('hex'),
    );
  }
});

test('without a response encryption key the thumbprint is null, which changes the transcript', () => {
  const audience = {
    clientId: 'x509_san_dns:example.com',
    nonce: 'n-0S6_WzA2Mj',
    responseUri: 'https://example.com/response',
  };
  const plain = oid4vpSessionTranscript({ ...audience, encryptionJwkThumbprint: null });
  const info = cborg.encode([audience.clientId, audience.nonce, null, audience.responseUri]);
  const hash = new Uint8Array(createHash('sha256').update(info).digest());
  assert.deepEqual(plain, [null, null, ['OpenID4VPHandover', hash]]);
  assert.notDeepEqual(
    plain,
    oid4vpSessionTranscript({ ...audience, encryptionJwkThumbprint: new Uint8Array(32) }),
  );
});
