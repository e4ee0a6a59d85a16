import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { describe, test } from 'node:test';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { CofferError } from '../../src/errors.ts';
import type { KeyRing, PublishedKey, SigningKey } from '../../src/keys/signing-keys.ts';
import { signTokens, type TokenGrant, verifyAccessToken } from '../../src/oidc/tokens.ts';

const ISSUER = 'https://coffer.test';

/** A key ring over one ES256 key whose publication the test switches on and off. */
async function keyRing() {
  const pair = await generateKeyPair('ES256', { extractable: true });
  const publicJwk = (await exportJWK(pair.publicKey)) as JWK;
  const privateJwk = (await exportJWK(pair.privateKey)) as JWK;
  const signing: SigningKey = {
    kid: 'k1',
    alg: 'ES256',
    privateKey: pair.privateKey,
    privateKeyObject: createPrivateKey({ key: privateJwk as never, format: 'jwk' }),
    publicJwk,
  };
  const published: PublishedKey = {
    kid: 'k1',
    publicKey: pair.publicKey,
    publicKeyObject: createPublicKey({ key: publicJwk as never, format: 'jwk' }),
    publicJwk,
  };
  const state = { published: true, lookups: 0 };
  const keys: KeyRing = {
    current: async () => signing,
    find: async (kid) => {
      state.lookups++;
      return state.published && kid === 'k1' ? published : undefined;
    },
    jwks: async () => ({ keys: state.published ? [publicJwk] : [] }),
  };
  return { keys, state };
}

const grant = (overrides: Partial<TokenGrant> = {}): TokenGrant => ({
  issuer: ISSUER,
  clientId: '7',
  subject: '42',
  scope: 'openid email',
  authTime: 1_000,
  nonce: null,
  loginType: 'wallet',
  ethAddress: null,
  didWalletAddress: 'did:pkh:eip155:1:0x0',
  jti: 'jti-1',
  lifetimeSeconds: 3600,
  jkt: null,
  ...overrides,
});

const refusedAs = (why: RegExp) => (error: unknown) =>
  error instanceof CofferError && error.code === 'invalid_token' && why.test(error.message);

describe('access tokens', () => {
  test('a token verifies again and again until it expires, then is refused however often it was seen', async () => {
    const { keys } = await keyRing();
    const now = Math.floor(Date.now() / 1000);
    const { accessToken } = await signTokens(keys, grant({ jkt: 'thumb' }), now);
    const first = await verifyAccessToken(keys, ISSUER, accessToken, now);
    assert.deepEqual(
      { ...first },
      {
        subject: '42',
        clientId: '7',
        scope: 'openid email',
        jti: 'jti-1',
        expiresAt: now + 3600,
        jkt: 'thumb',
      },
    );
    assert.equal(await verifyAccessToken(keys, ISSUER, accessToken, now + 10), first);
    await assert.rejects(verifyAccessToken(keys, ISSUER, accessToken, now + 3600), refusedAs(/expired/));
    await assert.rejects(verifyAccessToken(keys, ISSUER, accessToken, now + 3600), refusedAs(/expired/));
  });

  test('a token seen before is refused once its key is no longer published', async () => {
    const { keys, state } = await keyRing();
    const now = Math.floor(Date.now() / 1000);
    const { accessToken } = await signTokens(keys, grant(), now);
    await verifyAccessToken(keys, ISSUER, accessToken, now);
    state.published = false;
    await assert.rejects(verifyAccessToken(keys, ISSUER, accessToken, now), refusedAs(/unknown key/));
  });

  test('a token remembered for one issuer is checked afresh for another, and refused', async () => {
    const { keys } = await keyRing();
    const now = Math.floor(Date.now() / 1000);
    const { accessToken } = await signTokens(keys, grant(), now);
    await verifyAccessToken(keys, ISSUER, accessToken, now);
    await assert.rejects(verifyAccessToken(keys, 'https://other.test', accessToken, now), refusedAs(/iss/));
  });

  test('another key ring does not share what this one verified', async () => {
    const one = await keyRing();
    const other = await keyRing();
    const now = Math.floor(Date.now() / 1000);
    const { accessToken } = await signTokens(one.keys, grant(), now);
    await verifyAccessToken(one.keys, ISSUER, accessToken, now);
    // Same kid, another key: the signature decides.
    await assert.rejects(verifyAccessToken(other.keys, ISSUER, accessToken, now), refusedAs(/not valid/));
  });

  test('a changed token is refused: payload, header, signature, typ, alg', async () => {
    const { keys } = await keyRing();
    const now = Math.floor(Date.now() / 1000);
    const { accessToken, idToken } = await signTokens(keys, grant(), now);
    const [header, payload, signature] = accessToken.split('.') as [string, string, string];
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const cases = [
      `${header}.${encode({ ...claims, sub: '43' })}.${signature}`,
      `${encode({ alg: 'ES256', typ: 'at+jwt', kid: 'k2' })}.${payload}.${signature}`,
      `${header}.${payload}.${signature.slice(0, -4)}AAAA`,
      idToken,
      `${encode({ alg: 'none', typ: 'at+jwt', kid: 'k1' })}.${payload}.`,
      `${encode({ alg: 'HS256', typ: 'at+jwt', kid: 'k1' })}.${payload}.${signature}`,
      'not-a-token',
    ];
    for (const token of cases)
      await assert.rejects(verifyAccessToken(keys, ISSUER, token, now), refusedAs(/./), token);
  });
});
