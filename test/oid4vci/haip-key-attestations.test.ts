import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, type JsonWebKey, type KeyObject, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { startTestIssuer, type TestIssuer } from '../helpers/issuers/openid4vci-issuer.ts';
import { createWalletProvider, type WalletProviderFiles } from './haip-helpers.ts';

/**
 * The HAIP test issuer's credential endpoint, driven by hand with jose as a wallet would, so
 * that each way a key attestation can fall short is sent exactly once: the issuer that Coffer
 * passes elsewhere is shown to refuse all of them, and to accept the one correct request.
 */

interface HolderKey {
  privateKey: KeyObject;
  jwk: JsonWebKey;
}

const newHolderKey = (): HolderKey => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateKey, jwk: publicKey.export({ format: 'jwk' }) };
};

const seconds = () => Math.floor(Date.now() / 1000);

describe('the HAIP test issuer refuses credential requests whose key attestations fall short', () => {
  let provider: WalletProviderFiles;
  let stranger: WalletProviderFiles;
  let issuer: TestIssuer;
  let dpop: HolderKey;
  let accessToken: string;

  before(async () => {
    [provider, stranger] = await Promise.all([createWalletProvider(), createWalletProvider('Stranger')]);
    issuer = await startTestIssuer({ haip: { walletProviders: provider.rootPem }, batchSize: 3 });
    dpop = newHolderKey();
    accessToken = await issuer.mintAccessToken(['pid-sd-jwt'], dpop.jwk);
  });
  after(async () => {
    await issuer?.close();
    await rm(provider.dir, { recursive: true, force: true });
    await rm(stranger.dir, { recursive: true, force: true });
  });

  async function post(endpoint: string, headers: Record<string, string>, body: string) {
    const https = await import('node:https');
    return new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
      const request = https.request(
        new URL(`${issuer.credentialIssuer}${endpoint}`),
        { method: 'POST', headers, ca: issuer.tlsCaPem },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
            }),
          );
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  }

  async function cNonce(): Promise<string> {
    const answer = await post('/nonce', {}, '');
    return answer.body['c_nonce'] as string;
  }

  function keyAttestation(
    keys: HolderKey[],
    nonce: string,
    options: { typ?: string; by?: WalletProviderFiles } = {},
  ): Promise<string> {
    const by = options.by ?? provider;
    return new SignJWT({
      iat: seconds(),
      exp: seconds() + 600,
      nonce,
      attested_keys: keys.map((k) => k.jwk),
    })
      .setProtectedHeader({ alg: 'ES256', typ: options.typ ?? 'key-attestation+jwt', x5c: by.x5c })
      .sign(by.privateKey);
  }

  function proof(key: HolderKey, nonce: string, attestation?: string): Promise<string> {
    return new SignJWT({ aud: issuer.credentialIssuer, iat: seconds(), nonce })
      .setProtectedHeader({
        alg: 'ES256',
        typ: 'openid4vci-proof+jwt',
        jwk: key.jwk,
        ...(attestation ? { key_attestation: attestation } : {}),
      })
      .sign(key.privateKey);
  }

  async function requestCredentials(proofs: Record<string, string[]>) {
    const url = `${issuer.credentialIssuer}/credential`;
    const dpopProof = await new SignJWT({
      htm: 'POST',
      htu: url,
      iat: seconds(),
      jti: randomUUID(),
      ath: createHash('sha256').update(accessToken).digest('base64url'),
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: dpop.jwk })
      .sign(dpop.privateKey);
    return post(
      '/credential',
      { 'content-type': 'application/json', authorization: `DPoP ${accessToken}`, dpop: dpopProof },
      JSON.stringify({ credential_configuration_id: 'pid-sd-jwt', proofs }),
    );
  }

  const refusedWith = (answer: { status: number; body: Record<string, unknown> }, pattern: RegExp) => {
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.equal(answer.body['error'], 'invalid_proof', JSON.stringify(answer.body));
    assert.match(String(answer.body['error_description']), pattern);
  };

  test('no key attestation at all', async () => {
    const nonce = await cNonce();
    const keys = [newHolderKey(), newHolderKey()];
    refusedWith(
      await requestCredentials({ jwt: await Promise.all(keys.map((k) => proof(k, nonce))) }),
      /key attestation is required/,
    );
  });

  test('a key attestation that does not cover every key of the batch', async () => {
    const nonce = await cNonce();
    const keys = [newHolderKey(), newHolderKey()];
    const attestation = await keyAttestation([keys[0]!], nonce);
    const answer = await requestCredentials({
      jwt: await Promise.all(keys.map((k) => proof(k, nonce, attestation))),
    });
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.match(JSON.stringify(answer.body), /not signed with a key in the 'key_attestation'/);
  });

  test('a key attestation per key instead of one for the batch', async () => {
    const nonce = await cNonce();
    const keys = [newHolderKey(), newHolderKey()];
    const jwts = await Promise.all(keys.map(async (k) => proof(k, nonce, await keyAttestation([k], nonce))));
    refusedWith(await requestCredentials({ jwt: jwts }), /one key attestation for every key of the batch/);
  });

  test("another request's nonce, the draft typ, or a wallet provider the issuer does not trust", async () => {
    const key = newHolderKey();
    const nonce = await cNonce();
    refusedWith(
      await requestCredentials({ jwt: [await proof(key, nonce, await keyAttestation([key], 'stale'))] }),
      /does not carry the c_nonce/,
    );
    const nonce2 = await cNonce();
    refusedWith(
      await requestCredentials({
        jwt: [await proof(key, nonce2, await keyAttestation([key], nonce2, { typ: 'keyattestation+jwt' }))],
      }),
      /typ keyattestation\+jwt/,
    );
    const nonce3 = await cNonce();
    const answer = await requestCredentials({
      jwt: [await proof(key, nonce3, await keyAttestation([key], nonce3, { by: stranger }))],
    });
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.match(JSON.stringify(answer.body), /verif\w* key attestation/i);
  });

  test('the correct request, one attestation naming every key: a credential per key', async () => {
    const nonce = await cNonce();
    const keys = [newHolderKey(), newHolderKey(), newHolderKey()];
    const attestation = await keyAttestation(keys, nonce);
    const answer = await requestCredentials({
      jwt: await Promise.all(keys.map((k) => proof(k, nonce, attestation))),
    });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal((answer.body['credentials'] as unknown[]).length, 3);
  });
});
