import assert from 'node:assert/strict';
import { KeyObject } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { deflateSync } from 'node:zlib';
import { generateKeyPair, SignJWT } from 'jose';
import { fastBbs } from '../../src/bbs/index.ts';
import type { IssuerPublicKey, StatusReference } from '../../src/formats/credential-format.ts';
import { inProcessOperations } from '../../src/formats/ldp-vc/bbs-2023/operations.ts';
import { createDocumentLoader } from '../../src/formats/ldp-vc/contexts/document-loader.ts';
import { createOutboundClient } from '../../src/http/outbound.ts';
import { createStatusChecker, type StatusCheckerDeps } from '../../src/status/status-checker.ts';
import { emptyTokenList, setTokenStatus } from '../../src/status/status-list-bits.ts';
import { signTokenStatusListCwt } from '../../src/status/token-status-list-publish.ts';
import { createStockIssuer, type StockIssuer } from '../credentials/stock-issuer.ts';
import { freePort } from '../helpers/free-port.ts';
import {
  bitstringListCredential,
  bitstringListJwt,
  type ListServer,
  startListServer,
  tokenStatusListJwt,
} from './status-lists.ts';

/**
 * The status checker against a real HTTPS list server, through the real outbound client: lists
 * made with @sd-jwt/jwt-status-list and jose, bbs-2023 lists signed by the stock Digital Bazaar
 * issuer and verified by Coffer's own bbs-2023 operations.
 */

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;

const HOUR = 3600_000;
const operations = inProcessOperations({
  bbs: fastBbs,
  jsonLd: { documentLoader: createDocumentLoader(async () => undefined) },
});

let server: ListServer;
let issuer: KeyPair;
let other: KeyPair;
let stock: StockIssuer;
let path = 0;
/** A fresh path, so that no test sees another's cached list. */
const nextPath = () => `/lists/${++path}`;

/** A checker with its own cache and a clock the test moves. */
function checker(options: { allowPrivateTargets?: boolean } = {}) {
  let offset = 0;
  const deps: StatusCheckerDeps = {
    outbound: createOutboundClient({
      allowPrivateTargets: options.allowPrivateTargets ?? true,
      ca: server.ca,
    }),
    now: () => new Date(Date.now() + offset),
    verifyBaseProof: (document, key) => operations.verifyBaseProof(document, key),
  };
  return Object.assign(createStatusChecker(deps), { advance: (ms: number) => (offset += ms) });
}

const joseKey = (pair: KeyPair): IssuerPublicKey => ({ kind: 'jose', key: KeyObject.from(pair.publicKey) });
const token = (uri: string, index: number, key = joseKey(issuer)): StatusReference => ({
  list: 'token',
  uri,
  index,
  issuerKey: key,
});
const bitstring = (
  uri: string,
  index: number,
  purpose: string,
  issuerKey: IssuerPublicKey,
): StatusReference => ({
  list: 'bitstring',
  uri,
  index,
  purpose,
  issuerKey,
});

/** Serves a token list at a fresh path; returns its address and path. */
async function serveTokenList(
  options: Partial<Parameters<typeof tokenStatusListJwt>[0]> & { headers?: Record<string, string> } = {},
) {
  const at = nextPath();
  const uri = `${server.origin}${at}`;
  const body = await tokenStatusListJwt({
    uri,
    statuses: [0, 1, 2, 3, 0, 0, 0, 0],
    bits: 2,
    key: issuer.privateKey,
    ...options,
  });
  server.serve(at, { body, headers: { 'content-type': 'application/statuslist+jwt', ...options.headers } });
  return { uri, at };
}

before(async () => {
  [server, issuer, other, stock] = await Promise.all([
    startListServer(),
    generateKeyPair('ES256'),
    generateKeyPair('ES256'),
    createStockIssuer(),
  ]);
});
after(() => server.close());

describe('Token Status List', () => {
  test('0 is valid, 1 revoked, 2 suspended (2 bits per status); others and missing entries are unknown', async () => {
    const { uri, at } = await serveTokenList();
    const status = checker();
    assert.deepEqual(await status.check(token(uri, 0)), { state: 'valid' });
    assert.deepEqual(await status.check(token(uri, 1)), { state: 'revoked' });
    assert.deepEqual(await status.check(token(uri, 2)), { state: 'suspended' });
    const three = await status.check(token(uri, 3));
    assert.equal(three.state, 'unknown');
    assert.match(three.reason!, /status 3/);
    const beyond = await status.check(token(uri, 400));
    assert.equal(beyond.state, 'unknown');
    assert.match(beyond.reason!, /no entry 400/);
    assert.equal(server.acceptOf(at), 'application/statuslist+jwt, application/statuslist+cwt');
    assert.equal(server.fetches(at), 1, 'one list, fetched once for every index');
  });

  test('1 bit per status: the least significant bit of the first byte is index 0', async () => {
    const statuses = Array.from({ length: 16 }, (_, i) => (i === 9 ? 1 : 0));
    const { uri } = await serveTokenList({ statuses, bits: 1 });
    const status = checker();
    assert.deepEqual(await status.check(token(uri, 9)), { state: 'revoked' });
    assert.deepEqual(await status.check(token(uri, 8)), { state: 'valid' });
  });

  test("a list signed with another key than the credential issuer's is unknown", async () => {
    const { uri } = await serveTokenList({ key: other.privateKey });
    const outcome = await checker().check(token(uri, 1));
    assert.equal(outcome.state, 'unknown');
    assert.match(outcome.reason!, /signature does not verify/);
  });

  test('a list whose sub is another address is unknown', async () => {
    const { uri } = await serveTokenList({ sub: `${server.origin}/lists/other` });
    const outcome = await checker().check(token(uri, 1));
    assert.equal(outcome.state, 'unknown');
    assert.match(outcome.reason!, /is for .*\/lists\/other/);
  });

  test('an expired list is unknown', async () => {
    const { uri } = await serveTokenList({ exp: new Date(Date.now() - 2 * 60_000) });
    const outcome = await checker().check(token(uri, 1));
    assert.equal(outcome.state, 'unknown');
    assert.match(outcome.reason!, /expired/);
  });

  test('a list that decompresses beyond 4 MiB is refused, not inflated', async () => {
    const at = nextPath();
    const uri = `${server.origin}${at}`;
    const body = await new SignJWT({
      sub: uri,
      iat: Math.floor(Date.now() / 1000),
      status_list: { bits: 1, lst: deflateSync(Buffer.alloc(5 * 1024 * 1024)).toString('base64url') },
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'statuslist+jwt' })
      .sign(issuer.privateKey);
    server.serve(at, { body });
    assert.match((await checker().check(token(uri, 0))).reason!, /larger than 4 MiB/);
  });

  test('a list of another typ, or no JWT at all, is unknown', async () => {
    const at = nextPath();
    const uri = server.serve(at, { body: '{"status_list":{}}' });
    assert.match((await checker().check(token(uri, 0))).reason!, /not a JWT/);
  });
});

describe('Token Status List as a CWT', () => {
  /** A CWT list published with Coffer's issuer side, served with its media type unless told otherwise. */
  async function serveCwtList(
    statuses: Record<number, number>,
    options: { key?: KeyPair['privateKey']; contentType?: string; exp?: Date } = {},
  ) {
    const at = nextPath();
    const uri = `${server.origin}${at}`;
    const bytes = emptyTokenList(2, 64);
    for (const [index, status] of Object.entries(statuses)) setTokenStatus(bytes, 2, Number(index), status);
    const body = signTokenStatusListCwt(
      { uri, bits: 2, bytes, iat: new Date(), ttl: 60, ...(options.exp ? { exp: options.exp } : {}) },
      { privateKey: KeyObject.from(options.key ?? issuer.privateKey), x5c: [] },
    );
    server.serve(at, {
      body,
      headers: { 'content-type': options.contentType ?? 'application/statuslist+cwt' },
    });
    return { uri, at };
  }

  test("served as application/statuslist+cwt: verified with the issuer's key, statuses read", async () => {
    const { uri, at } = await serveCwtList({ 3: 1, 5: 2 });
    const status = checker();
    assert.deepEqual(await status.check(token(uri, 3)), { state: 'revoked' });
    assert.deepEqual(await status.check(token(uri, 5)), { state: 'suspended' });
    assert.deepEqual(await status.check(token(uri, 4)), { state: 'valid' });
    assert.equal(server.acceptOf(at), 'application/statuslist+jwt, application/statuslist+cwt');
    assert.equal(server.fetches(at), 1);
    status.advance(61_000);
    await status.check(token(uri, 3));
    assert.equal(server.fetches(at), 2, 'fetched again after its ttl');
  });

  test('signed by another key, expired, or served under another media type: unknown', async () => {
    const forged = await serveCwtList({ 3: 1 }, { key: other.privateKey });
    assert.match((await checker().check(token(forged.uri, 3))).reason!, /signature does not verify/);
    const expired = await serveCwtList({}, { exp: new Date(Date.now() - 2 * 60_000) });
    assert.match((await checker().check(token(expired.uri, 3))).reason!, /expired/);
    const unlabelled = await serveCwtList({}, { contentType: 'application/octet-stream' });
    assert.match((await checker().check(token(unlabelled.uri, 3))).reason!, /not a JWT/);
  });
});

describe('Bitstring Status List', () => {
  test('VC-JWT lists (the credential as payload, or under vc): a set bit is revoked, a clear one valid', async () => {
    for (const underVc of [false, true]) {
      const at = nextPath();
      const uri = `${server.origin}${at}`;
      const body = await bitstringListJwt({
        uri,
        issuer: 'did:example:issuer',
        purpose: 'revocation',
        setIndexes: [5, 1000],
        key: issuer.privateKey,
        underVc,
      });
      server.serve(at, { body, headers: { 'content-type': 'application/vc+jwt' } });
      const status = checker();
      assert.deepEqual(await status.check(bitstring(uri, 5, 'revocation', joseKey(issuer))), {
        state: 'revoked',
      });
      assert.deepEqual(await status.check(bitstring(uri, 1000, 'revocation', joseKey(issuer))), {
        state: 'revoked',
      });
      assert.deepEqual(await status.check(bitstring(uri, 6, 'revocation', joseKey(issuer))), {
        state: 'valid',
      });
      assert.match(server.acceptOf(at)!, /^application\/vc\+jwt, /);
    }
  });

  test('a suspension list gives suspended; an entry of another purpose than the list is unknown', async () => {
    const at = nextPath();
    const uri = `${server.origin}${at}`;
    const body = await bitstringListJwt({
      uri,
      issuer: 'did:example:issuer',
      purpose: 'suspension',
      setIndexes: [3],
      key: issuer.privateKey,
    });
    server.serve(at, { body });
    const status = checker();
    assert.deepEqual(await status.check(bitstring(uri, 3, 'suspension', joseKey(issuer))), {
      state: 'suspended',
    });
    const mismatch = await status.check(bitstring(uri, 3, 'revocation', joseKey(issuer)));
    assert.equal(mismatch.state, 'unknown');
    assert.match(mismatch.reason!, /for suspension, not revocation/);
  });

  test('a VC-JWT list signed by another key, or past its validUntil, is unknown', async () => {
    const signedByOther = nextPath();
    const otherUri = `${server.origin}${signedByOther}`;
    server.serve(signedByOther, {
      body: await bitstringListJwt({
        uri: otherUri,
        issuer: 'did:example:issuer',
        purpose: 'revocation',
        setIndexes: [],
        key: other.privateKey,
      }),
    });
    const expired = nextPath();
    const expiredUri = `${server.origin}${expired}`;
    server.serve(expired, {
      body: await bitstringListJwt({
        uri: expiredUri,
        issuer: 'did:example:issuer',
        purpose: 'revocation',
        setIndexes: [],
        key: issuer.privateKey,
        validUntil: new Date(Date.now() - HOUR),
      }),
    });
    const status = checker();
    const bad = await status.check(bitstring(otherUri, 1, 'revocation', joseKey(issuer)));
    assert.equal(bad.state, 'unknown');
    assert.match(bad.reason!, /signature does not verify/);
    const old = await status.check(bitstring(expiredUri, 1, 'revocation', joseKey(issuer)));
    assert.equal(old.state, 'unknown');
    assert.match(old.reason!, /expired/);
  });

  test('bbs-2023 lists of an ldp_vc issuer: verified with its key, revoked or valid by the bit', async () => {
    const at = nextPath();
    const uri = `${server.origin}${at}`;
    const signed = await stock.issue(
      bitstringListCredential({ uri, issuer: stock.did, purpose: 'revocation', setIndexes: [42] }),
    );
    server.serve(at, { body: JSON.stringify(signed), headers: { 'content-type': 'application/vc+ld+json' } });
    const key: IssuerPublicKey = { kind: 'bbs', publicKey: stock.publicKey, issuer: stock.did };
    const status = checker();
    assert.deepEqual(await status.check(bitstring(uri, 42, 'revocation', key)), { state: 'revoked' });
    assert.deepEqual(await status.check(bitstring(uri, 41, 'revocation', key)), { state: 'valid' });

    const impostor = await createStockIssuer();
    const wrongKey: IssuerPublicKey = { kind: 'bbs', publicKey: impostor.publicKey, issuer: stock.did };
    const notVerified = await checker().check(bitstring(uri, 42, 'revocation', wrongKey));
    assert.equal(notVerified.state, 'unknown');
    assert.match(notVerified.reason!, /proof does not verify/);
    const wrongIssuer: IssuerPublicKey = { kind: 'bbs', publicKey: stock.publicKey, issuer: impostor.did };
    assert.match((await checker().check(bitstring(uri, 42, 'revocation', wrongIssuer))).reason!, /issued by/);
  });

  test('a bbs-2023 list changed after signing is unknown', async () => {
    const at = nextPath();
    const uri = `${server.origin}${at}`;
    const signed = await stock.issue(
      bitstringListCredential({ uri, issuer: stock.did, purpose: 'revocation', setIndexes: [42] }),
    );
    const altered = structuredClone(signed) as { credentialSubject: { encodedList: string } };
    const cleared = bitstringListCredential({
      uri,
      issuer: stock.did,
      purpose: 'revocation',
      setIndexes: [],
    });
    altered.credentialSubject.encodedList = (
      cleared['credentialSubject'] as { encodedList: string }
    ).encodedList;
    server.serve(at, { body: JSON.stringify(altered) });
    const key: IssuerPublicKey = { kind: 'bbs', publicKey: stock.publicKey, issuer: stock.did };
    const outcome = await checker().check(bitstring(uri, 42, 'revocation', key));
    assert.equal(outcome.state, 'unknown');
    assert.match(outcome.reason!, /proof does not verify/);
  });
});

describe('fetching', () => {
  test('a 404, an unreachable server and a refused private target are unknown, with the reason', async () => {
    const missing = await checker().check(token(`${server.origin}/lists/none`, 0));
    assert.deepEqual(missing, {
      state: 'unknown',
      reason: `the status list at ${new URL(server.origin).host} answered HTTP 404`,
    });

    const unreachable = await checker().check(token(`https://127.0.0.1:${await freePort()}/list`, 0));
    assert.equal(unreachable.state, 'unknown');
    assert.match(unreachable.reason!, /could not be fetched/);

    const { uri } = await serveTokenList();
    const refused = await checker({ allowPrivateTargets: false }).check(token(uri, 0));
    assert.equal(refused.state, 'unknown');
    assert.match(refused.reason!, /could not be fetched: .*private or loopback/);
  });

  test('a failure is remembered for 10 s: a page of credentials on a dead list makes one request', async () => {
    const at = nextPath();
    const uri = `${server.origin}${at}`;
    const status = checker();
    for (let i = 0; i < 5; i++) assert.equal((await status.check(token(uri, i))).state, 'unknown');
    assert.equal(server.fetches(at), 1);
    status.advance(11_000);
    await serveTokenListAt(at);
    assert.deepEqual(await status.check(token(uri, 1)), { state: 'revoked' });
    assert.equal(server.fetches(at), 2);
  });

  test('concurrent checks of one list share one request', async () => {
    const { uri, at } = await serveTokenList();
    const status = checker();
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => status.check(token(uri, i % 3))));
    assert.deepEqual(
      outcomes.map((outcome) => outcome.state),
      Array.from({ length: 20 }, (_, i) => ['valid', 'revoked', 'suspended'][i % 3]),
    );
    assert.equal(server.fetches(at), 1);
  });

  test('a list is reused within its ttl and fetched again after it', async () => {
    const { uri, at } = await serveTokenList({ ttl: 300, statuses: [0, 0, 0, 0] });
    const status = checker();
    assert.deepEqual(await status.check(token(uri, 1)), { state: 'valid' });
    await serveTokenListAt(at, { statuses: [0, 1, 0, 0] });
    status.advance(299_000);
    assert.deepEqual(
      await status.check(token(uri, 1)),
      { state: 'valid' },
      'within the ttl: the list as fetched',
    );
    status.advance(2_000);
    assert.deepEqual(await status.check(token(uri, 1)), { state: 'revoked' }, 'after the ttl: the new list');
    assert.equal(server.fetches(at), 2);
  });

  test('Cache-Control: max-age shortens the reuse, no-store prevents it; 60 s without either', async () => {
    const maxAge = await serveTokenList({ ttl: 300, headers: { 'cache-control': 'public, max-age=30' } });
    const noStore = await serveTokenList({ ttl: 300, headers: { 'cache-control': 'no-store' } });
    const plain = await serveTokenList();
    const status = checker();
    for (const { uri } of [maxAge, noStore, plain]) await status.check(token(uri, 0));
    await status.check(token(noStore.uri, 0));
    assert.equal(server.fetches(noStore.at), 2, 'no-store: fetched for every check');
    status.advance(31_000);
    for (const { uri } of [maxAge, plain]) await status.check(token(uri, 0));
    assert.equal(server.fetches(maxAge.at), 2, 'max-age=30 is shorter than the ttl');
    assert.equal(server.fetches(plain.at), 1, 'no ttl, no max-age: 60 s');
    status.advance(30_000);
    await status.check(token(plain.uri, 0));
    assert.equal(server.fetches(plain.at), 2);
  });

  test('a list is kept per verification key: one that failed with a wrong key does not hide the right one', async () => {
    const { uri, at } = await serveTokenList();
    const status = checker();
    assert.equal((await status.check(token(uri, 1, joseKey(other)))).state, 'unknown');
    assert.deepEqual(await status.check(token(uri, 1)), { state: 'revoked' });
    assert.equal(server.fetches(at), 2);
  });
});

/** Replaces the list at `at` (ttl 300 s). */
async function serveTokenListAt(at: string, options: { statuses?: number[] } = {}) {
  const uri = `${server.origin}${at}`;
  const body = await tokenStatusListJwt({
    uri,
    statuses: options.statuses ?? [0, 1, 2, 3],
    bits: 2,
    key: issuer.privateKey,
    ttl: 300,
  });
  server.serve(at, { body });
}
