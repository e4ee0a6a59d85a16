import assert from 'node:assert/strict';
import { KeyObject, verify, X509Certificate } from 'node:crypto';
import { before, describe, test } from 'node:test';
import { getListFromStatusListJWT, StatusList } from '@sd-jwt/jwt-status-list';
import * as cborg from 'cborg';
import { compactVerify, decodeProtectedHeader } from 'jose';
import type { ListSigner } from '../../src/status/list-signer.ts';
import {
  drawFreeIndex,
  emptyTokenList,
  LIST_SIZE,
  setTokenStatus,
  TOKEN_STATUS,
} from '../../src/status/status-list-bits.ts';
import {
  tokenStatusAt,
  verifyTokenStatusList,
  verifyTokenStatusListCwt,
} from '../../src/status/token-status-list.ts';
import {
  signTokenStatusListCwt,
  signTokenStatusListJwt,
} from '../../src/status/token-status-list-publish.ts';
import { chainOf, makeIssuerIdentity } from '../helpers/issuers/issuer-ca.ts';

/**
 * Token Status Lists as Coffer publishes them, read by code that is not Coffer's:
 * @sd-jwt/jwt-status-list for the JWT, cborg and node:crypto (the COSE Sig_structure written out
 * here) for the CWT; then by Coffer's own readers, which the hosted wallet uses.
 */

const URI = 'https://issuer.example/v1/status-lists/7';
const now = new Date();
let signer: ListSigner;
let publicKey: KeyObject;
let otherKey: KeyObject;

before(async () => {
  const [identity, other] = await Promise.all([
    makeIssuerIdentity('List Issuer', { intermediate: true }),
    makeIssuerIdentity('Another Issuer'),
  ]);
  signer = { privateKey: KeyObject.from(identity.signer.keys.privateKey), x5c: chainOf(identity) };
  publicKey = KeyObject.from(identity.signer.keys.publicKey);
  otherKey = KeyObject.from(other.signer.keys.publicKey);
});

/** A full-size 2-bit list with `index` set to `status`. */
function listWith(index: number, status: number) {
  const bytes = emptyTokenList(2);
  setTokenStatus(bytes, 2, index, status);
  return { uri: URI, bits: 2 as const, bytes, iat: now, exp: new Date(now.getTime() + 3600_000), ttl: 300 };
}

describe('statuslist+jwt', () => {
  test('@sd-jwt/jwt-status-list reads the entry as VALID, then INVALID once set; jose verifies the x5c leaf', async () => {
    const index = drawFreeIndex(new Set())!;
    const valid = signTokenStatusListJwt(listWith(index, TOKEN_STATUS.VALID), signer);
    const invalid = signTokenStatusListJwt(listWith(index, TOKEN_STATUS.INVALID), signer);
    assert.equal(getListFromStatusListJWT(valid).getStatus(index), 0);
    const read = getListFromStatusListJWT(invalid);
    assert.equal(read.getStatus(index), 1);
    assert.equal(read.getBitsPerStatus(), 2);
    assert.equal(read.statusList.length, LIST_SIZE);
    assert.equal(read.statusList.filter((status) => status !== 0).length, 1);

    const header = decodeProtectedHeader(invalid);
    assert.equal(header.typ, 'statuslist+jwt');
    assert.deepEqual(header.x5c, signer.x5c);
    const leaf = new X509Certificate(Buffer.from(header.x5c![0]!, 'base64'));
    const { payload } = await compactVerify(invalid, leaf.publicKey, { algorithms: ['ES256'] });
    const claims = JSON.parse(Buffer.from(payload).toString());
    assert.equal(claims.sub, URI);
    assert.equal(claims.iat, Math.floor(now.getTime() / 1000));
    assert.equal(claims.exp, claims.iat + 3600);
    assert.equal(claims.ttl, 300);
  });

  test("Coffer's reader accepts it with the issuer's key only, and reads the status", async () => {
    const jwt = signTokenStatusListJwt(listWith(1234, TOKEN_STATUS.SUSPENDED), signer);
    const list = await verifyTokenStatusList(jwt, URI, publicKey, now);
    assert.deepEqual(tokenStatusAt(list, 1234), { state: 'suspended' });
    assert.deepEqual(tokenStatusAt(list, 1235), { state: 'valid' });
    assert.equal(list.ttlMs, 300_000);
    await assert.rejects(verifyTokenStatusList(jwt, URI, otherKey, now), /does not verify/);
  });

  test('a full 131,072-entry list, a thousand of them revoked at random, stays small', () => {
    const bytes = emptyTokenList(2);
    const taken = new Set<number>();
    const empty = signTokenStatusListJwt({ uri: URI, bits: 2, bytes, iat: now, ttl: 300 }, signer);
    for (let i = 0; i < 1000; i++) {
      const index = drawFreeIndex(taken)!;
      taken.add(index);
      setTokenStatus(bytes, 2, index, TOKEN_STATUS.INVALID);
    }
    const revoked = signTokenStatusListJwt({ uri: URI, bits: 2, bytes, iat: now, ttl: 300 }, signer);
    const lst = (jwt: string) =>
      JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()).status_list.lst;
    assert.ok(lst(empty).length < 200, `empty: ${lst(empty).length} characters of lst`);
    assert.ok(lst(revoked).length < 8 * 1024, `1000 revoked: ${lst(revoked).length} characters of lst`);
    const read = StatusList.decompressStatusList(lst(revoked), 2);
    assert.ok([...taken].every((index) => read.getStatus(index) === 1));
  });

  test('ttl must be a positive number of seconds', () => {
    assert.throws(() => signTokenStatusListJwt({ ...listWith(0, 0), ttl: 0 }, signer), RangeError);
  });
});

describe('application/statuslist+cwt', () => {
  /** The COSE_Sign1 read and verified by hand: tag 18, four members, the Sig_structure of RFC 9052 §4.4. */
  function openByHand(cwt: Uint8Array) {
    const tags: cborg.TagDecoder[] = [];
    tags[18] = (inner: unknown) => ({ sign1: inner });
    const { sign1 } = cborg.decode(cwt, { tags, useMaps: true }) as {
      sign1: [Uint8Array, Map<number, unknown>, Uint8Array, Uint8Array];
    };
    const [protectedBytes, unprotected, payload, signature] = sign1;
    const sigStructure = cborg.encode(['Signature1', protectedBytes, new Uint8Array(), payload]);
    return {
      protectedHeader: cborg.decode(protectedBytes, { useMaps: true }) as Map<number, unknown>,
      unprotected,
      claims: cborg.decode(payload, { useMaps: true }) as Map<number, unknown>,
      verifiesWith: (key: KeyObject) =>
        verify('sha256', sigStructure, { key, dsaEncoding: 'ieee-p1363' }, signature),
    };
  }

  test('a tagged COSE_Sign1, ES256 over the CWT claims, verified with the x5chain leaf by node:crypto', () => {
    const index = drawFreeIndex(new Set())!;
    const cwt = signTokenStatusListCwt(listWith(index, TOKEN_STATUS.INVALID), signer);
    assert.equal(cwt[0], 0xd2, 'COSE_Sign1_Tagged, not wrapped in the CWT tag');
    const opened = openByHand(cwt);
    assert.deepEqual(
      opened.protectedHeader,
      new Map<number, unknown>([
        [1, -7],
        [16, 'application/statuslist+cwt'],
      ]),
    );
    const chain = opened.unprotected.get(33) as Uint8Array[];
    assert.deepEqual(
      chain.map((der) => Buffer.from(der).toString('base64')),
      signer.x5c,
    );
    const leaf = new X509Certificate(chain[0]!);
    assert.equal(opened.verifiesWith(leaf.publicKey), true);
    assert.equal(opened.verifiesWith(otherKey), false);

    const { claims } = opened;
    assert.equal(claims.get(2), URI);
    assert.equal(claims.get(6), Math.floor(now.getTime() / 1000));
    assert.equal(claims.get(4), (claims.get(6) as number) + 3600);
    assert.equal(claims.get(65534), 300);
    const statusList = claims.get(65533) as Map<string, unknown>;
    assert.equal(statusList.get('bits'), 2);
    const lst = statusList.get('lst') as Uint8Array;
    assert.ok(lst instanceof Uint8Array);
    // The same compressed bytes as the JWT form's lst, read by @sd-jwt/jwt-status-list.
    const read = StatusList.decompressStatusList(Buffer.from(lst).toString('base64url'), 2);
    assert.equal(read.getStatus(index), 1);
  });

  test('one certificate is carried as a bstr, not an array (RFC 9360)', () => {
    const cwt = signTokenStatusListCwt(listWith(0, 0), { ...signer, x5c: signer.x5c.slice(0, 1) });
    assert.ok(openByHand(cwt).unprotected.get(33) instanceof Uint8Array);
  });

  test("Coffer's CWT reader accepts it with the issuer's key and refuses what is wrong", () => {
    const cwt = signTokenStatusListCwt(listWith(99, TOKEN_STATUS.INVALID), signer);
    const list = verifyTokenStatusListCwt(cwt, URI, publicKey, now);
    assert.deepEqual(tokenStatusAt(list, 99), { state: 'revoked' });
    assert.deepEqual(tokenStatusAt(list, 98), { state: 'valid' });
    assert.equal(list.ttlMs, 300_000);
    assert.equal(list.expiresAt, Math.floor(now.getTime() / 1000) * 1000 + 3600_000);

    assert.throws(() => verifyTokenStatusListCwt(cwt, URI, otherKey, now), /does not verify/);
    assert.throws(() => verifyTokenStatusListCwt(cwt, `${URI}0`, publicKey, now), /is for/);
    const later = new Date(now.getTime() + 2 * 3600_000);
    assert.throws(() => verifyTokenStatusListCwt(cwt, URI, publicKey, later), /expired/);
    const tampered = Uint8Array.from(cwt);
    tampered[tampered.length - 1]! ^= 1;
    assert.throws(() => verifyTokenStatusListCwt(tampered, URI, publicKey, now), /does not verify/);
    assert.throws(() => verifyTokenStatusListCwt(cwt.subarray(1), URI, publicKey, now), /not a CWT/);
  });
});
