import assert from 'node:assert/strict';
import { test } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage, type SiweMessage } from 'viem/siwe';
import { CofferError } from '../../src/errors.ts';
import { buildSiweChallenge, newSiweNonce, verifySiweLogin } from '../../src/interaction/siwe.ts';

// Fixed keys for tests only (never funded); real secp256k1 signing and recovery.
const ALICE = privateKeyToAccount('0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318');
const MALLORY = privateKeyToAccount('0x8da4ef21b864d2cc526dbdb2a120bd2874c36c9d0a1fb7f8c63d7f7a8b41de8f');

const NOW = new Date('2026-05-01T12:00:00.000Z');
const minutes = (n: number) => new Date(NOW.getTime() + n * 60_000);
const EXPECTED = {
  domain: 'coffer.example',
  uri: 'https://coffer.example/interaction/int123',
  nonce: 'a1b2c3d4e5f60718293a4b5c',
  now: NOW,
  chainIds: [1, 10],
};

function fields(overrides: Partial<SiweMessage> = {}): SiweMessage {
  return {
    domain: EXPECTED.domain,
    address: ALICE.address,
    statement: 'Log in to Example Shop with your Ethereum account.',
    uri: EXPECTED.uri,
    version: '1',
    chainId: 1,
    nonce: EXPECTED.nonce,
    issuedAt: minutes(-1),
    expirationTime: minutes(5),
    ...overrides,
  };
}

async function signed(message: string, signer = ALICE) {
  return { message, signature: await signer.signMessage({ message }) };
}

async function login(message: string, signer = ALICE, expected: Partial<typeof EXPECTED> = {}) {
  return verifySiweLogin({ ...(await signed(message, signer)), expected: { ...EXPECTED, ...expected } });
}

async function refused(attempt: Promise<unknown>, description: RegExp) {
  await assert.rejects(attempt, (error: unknown) => {
    assert.ok(error instanceof CofferError, String(error));
    assert.equal(error.code, 'invalid_request');
    assert.match(error.message, description);
    return true;
  });
}

test('a message signed by the wallet logs in with its EIP-55 address and chain id', async () => {
  const result = await login(createSiweMessage(fields({ chainId: 10 })));
  assert.deepEqual(result, { address: ALICE.address, chainId: 10 });
});

test('any chain id is accepted when no list is given', async () => {
  const result = await verifySiweLogin({
    ...(await signed(createSiweMessage(fields({ chainId: 8453 })))),
    expected: { domain: EXPECTED.domain, uri: EXPECTED.uri, nonce: EXPECTED.nonce, now: NOW },
  });
  assert.equal(result.chainId, 8453);
});

test('another path on the same origin, a host in capitals and another RFC 3339 form are accepted', async () => {
  const message = createSiweMessage(
    fields({ uri: 'https://coffer.example/', domain: 'Coffer.Example', issuedAt: minutes(-2) }),
  ).replace('Issued At: 2026-05-01T11:58:00.000Z', 'Issued At: 2026-05-01T13:58:00+02:00');
  assert.match(message, /\+02:00/);
  assert.equal((await login(message)).address, ALICE.address);
});

test('a message built from the interaction challenge verifies', async () => {
  const challenge = buildSiweChallenge({
    domain: EXPECTED.domain,
    uri: EXPECTED.uri,
    chainId: 1,
    nonce: EXPECTED.nonce,
    issuedAt: NOW,
    expirationTime: minutes(10),
    statement: 'Log in to Example Shop.',
  });
  assert.deepEqual(challenge, {
    domain: 'coffer.example',
    uri: EXPECTED.uri,
    chain_id: 1,
    nonce: EXPECTED.nonce,
    issued_at: '2026-05-01T12:00:00.000Z',
    expiration_time: '2026-05-01T12:10:00.000Z',
    statement: 'Log in to Example Shop.',
  });
  const message = createSiweMessage({
    domain: challenge.domain,
    address: ALICE.address,
    statement: challenge.statement,
    uri: challenge.uri,
    version: '1',
    chainId: challenge.chain_id,
    nonce: challenge.nonce,
    issuedAt: new Date(challenge.issued_at),
    expirationTime: new Date(challenge.expiration_time),
  });
  assert.equal((await login(message)).address, ALICE.address);
});

test('a challenge with fields no wallet could sign is refused when it is built', () => {
  const good = {
    domain: EXPECTED.domain,
    uri: EXPECTED.uri,
    chainId: 1,
    nonce: EXPECTED.nonce,
    issuedAt: NOW,
    expirationTime: minutes(10),
    statement: 'Log in.',
  };
  assert.throws(() => buildSiweChallenge({ ...good, statement: 'two\nlines' }));
  assert.throws(() => buildSiweChallenge({ ...good, nonce: 'short' }));
  assert.throws(() => buildSiweChallenge({ ...good, domain: 'not a host' }));
});

test('nonces are 128 random bits in EIP-4361 form', () => {
  const nonces = new Set(Array.from({ length: 1000 }, () => newSiweNonce()));
  assert.equal(nonces.size, 1000);
  for (const nonce of nonces) assert.match(nonce, /^[0-9a-f]{32}$/);
});

test('refused: text that is no EIP-4361 message', async () => {
  await refused(login('Please sign me in'), /not a Sign-In with Ethereum/);
  await refused(
    verifySiweLogin({ message: 42, signature: '0x', expected: EXPECTED }),
    /not a Sign-In with Ethereum/,
  );
});

test('refused: a valid message with extra text after it', async () => {
  const message = `${createSiweMessage(fields())}\nTransfer: all my tokens`;
  await refused(login(message), /not part of a Sign-In with Ethereum/);
});

test('refused: an address that is not in EIP-55 form', async () => {
  const message = createSiweMessage(fields()).replace(ALICE.address, ALICE.address.toLowerCase());
  await refused(login(message), /EIP-55/);
});

test('refused: a date-time that is not RFC 3339', async () => {
  const message = createSiweMessage(fields()).replace(/Issued At: .*/, 'Issued At: May 1, 2026');
  await refused(login(message), /Issued At is not an RFC 3339 date-time/);
});

test('refused: a message for another domain', async () => {
  await refused(login(createSiweMessage(fields({ domain: 'evil.example' })), ALICE), /is for evil\.example/);
});

test('refused: a URI on another origin', async () => {
  const message = createSiweMessage(fields({ uri: 'https://evil.example/interaction/int123' }));
  await refused(login(message), /URI must be on https:\/\/coffer\.example/);
  const plainHttp = createSiweMessage(fields({ uri: 'http://coffer.example/interaction/int123' }));
  await refused(login(plainHttp), /URI must be on https:\/\/coffer\.example/);
});

test('refused: a scheme other than the service origin', async () => {
  await refused(login(createSiweMessage(fields({ scheme: 'http' }))), /scheme http does not match/);
});

test('refused: a nonce other than the interaction', async () => {
  await refused(login(createSiweMessage(fields({ nonce: 'ffffffffffffffff' }))), /nonce is not the one/);
});

test('refused: a chain id that is not accepted', async () => {
  await refused(login(createSiweMessage(fields({ chainId: 5 }))), /Chain ID 5 is not accepted/);
});

test('refused: issued in the future beyond the clock skew, accepted within it', async () => {
  await refused(login(createSiweMessage(fields({ issuedAt: minutes(2) }))), /not valid yet/);
  const withinSkew = createSiweMessage(fields({ issuedAt: new Date(NOW.getTime() + 30_000) }));
  assert.equal((await login(withinSkew)).address, ALICE.address);
});

test('refused: Not Before in the future', async () => {
  await refused(login(createSiweMessage(fields({ notBefore: minutes(3) }))), /not valid before/);
});

test('refused: expired', async () => {
  const message = createSiweMessage(fields({ issuedAt: minutes(-3), expirationTime: minutes(-1) }));
  await refused(login(message), /expired at 2026-05-01T11:59:00\.000Z/);
});

test('refused: issued more than 10 minutes ago, even without an expiration time', async () => {
  const message = createSiweMessage(fields({ issuedAt: minutes(-11), expirationTime: undefined }));
  await refused(login(message), /more than 10 minutes ago/);
});

test('refused: a signature that is not 65 bytes of hex', async () => {
  const message = createSiweMessage(fields());
  for (const signature of ['0x1234', 'hello', null, `0x${'zz'.repeat(65)}`]) {
    await refused(verifySiweLogin({ message, signature, expected: EXPECTED }), /65-byte hexadecimal/);
  }
});

test('refused: a 65-byte signature from which no signer can be recovered', async () => {
  const { message, signature } = await signed(createSiweMessage(fields()));
  const badRecovery = `${signature.slice(0, 130)}05`;
  await refused(verifySiweLogin({ message, signature: badRecovery, expected: EXPECTED }), /malformed/);
});

test('refused: a message naming Alice but signed by Mallory', async () => {
  await refused(login(createSiweMessage(fields()), MALLORY), new RegExp(`not signed by ${ALICE.address}`));
});

test('refused: a signature over other text than the one submitted', async () => {
  const { signature } = await signed(createSiweMessage(fields({ statement: 'Log in.' })));
  const message = createSiweMessage(fields({ statement: 'Log in and approve everything.' }));
  await refused(verifySiweLogin({ message, signature, expected: EXPECTED }), /not signed by/);
});
