import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import type { AuthorizationServerMetadata } from '@openid4vc/oauth2';
import type { IssuerMetadataResult } from '@openid4vc/openid4vci';
import { compactVerify, decodeJwt, decodeProtectedHeader, importX509 } from 'jose';
import { loadWalletProvider, type WalletProvider } from '../../src/config/wallet-provider.ts';
import { CofferError } from '../../src/errors.ts';
import { planProofs } from '../../src/oid4vci/credential-request.ts';
import {
  authenticationFor,
  keyAttestation,
  walletAttestation,
} from '../../src/oid4vci/wallet-attestation.ts';
import { createWalletProvider, type WalletProviderFiles } from './haip-helpers.ts';

/** Issuer metadata with one configuration whose proof types are these. */
const metadataWith = (proofTypes: object, batchSize?: number) =>
  ({
    credentialIssuer: {
      credential_issuer: 'https://issuer.example',
      credential_endpoint: 'https://issuer.example/credential',
      ...(batchSize ? { batch_credential_issuance: { batch_size: batchSize } } : {}),
      credential_configurations_supported: {
        pid: {
          format: 'dc+sd-jwt',
          scope: 'pid',
          cryptographic_binding_methods_supported: ['jwk'],
          proof_types_supported: proofTypes,
        },
      },
    },
    authorizationServers: [],
  }) as unknown as IssuerMetadataResult;

const refusedBecause = (plan: () => unknown, pattern: RegExp) =>
  assert.throws(
    plan,
    (error) => error instanceof CofferError && error.status === 400 && pattern.test(error.message),
  );

describe('what the wallet proves to an issuer, decided from its metadata alone', () => {
  test('jwt proofs; with key_attestations_required a key attestation goes in them, only with a provider key', () => {
    const plain = planProofs(
      metadataWith({ jwt: { proof_signing_alg_values_supported: ['ES256'] } }, 3),
      'pid',
      'dc+sd-jwt',
    );
    assert.deepEqual(plain, {
      type: 'jwt',
      algorithm: 'ES256',
      accountDid: false,
      copies: 3,
      keyAttestation: false,
    });
    const attested = metadataWith({
      jwt: { proof_signing_alg_values_supported: ['ES256'], key_attestations_required: {} },
    });
    assert.equal(planProofs(attested, 'pid', 'dc+sd-jwt', true).keyAttestation, true);
    refusedBecause(
      () => planProofs(attested, 'pid', 'dc+sd-jwt', false),
      /needs key attestations.*WALLET_PROVIDER_KEY/,
    );
  });

  test('an issuer that demands an attack-resistance level, or another algorithm, is refused: Coffer claims none', () => {
    for (const required of [
      { key_storage: ['iso_18045_high'] },
      { user_authentication: ['iso_18045_moderate'] },
    ]) {
      refusedBecause(
        () =>
          planProofs(
            metadataWith({
              jwt: { proof_signing_alg_values_supported: ['ES256'], key_attestations_required: required },
            }),
            'pid',
            'dc+sd-jwt',
            true,
          ),
        /attested as iso_18045_(high|moderate).*claims none/,
      );
    }
    refusedBecause(
      () =>
        planProofs(
          metadataWith({
            jwt: { proof_signing_alg_values_supported: ['EdDSA'], key_attestations_required: {} },
          }),
          'pid',
          'dc+sd-jwt',
          true,
        ),
      /key attestations signed with EdDSA; this wallet's provider signs with ES256/,
    );
  });

  test('an issuer that takes only attestation proofs gets one; one that takes neither proof is refused', () => {
    const only = metadataWith(
      { attestation: { proof_signing_alg_values_supported: ['ES256'], key_attestations_required: {} } },
      2,
    );
    assert.deepEqual(planProofs(only, 'pid', 'dc+sd-jwt', true), {
      type: 'attestation',
      algorithm: 'ES256',
      accountDid: false,
      copies: 2,
      keyAttestation: true,
    });
    refusedBecause(() => planProofs(only, 'pid', 'dc+sd-jwt', false), /needs key attestations/);
    refusedBecause(
      () =>
        planProofs(
          metadataWith({ di_vp: { proof_signing_alg_values_supported: ['eddsa-rdfc-2022'] } }),
          'pid',
          'dc+sd-jwt',
          true,
        ),
      /neither a jwt key proof nor a key attestation/,
    );
  });

  test('a Wallet Attestation is used where the server takes it and a provider key exists; required without one, refused', () => {
    const server = (methods?: string[]) =>
      ({
        issuer: 'https://as.example',
        ...(methods ? { token_endpoint_auth_methods_supported: methods } : {}),
      }) as AuthorizationServerMetadata;
    assert.equal(authenticationFor(server(), true), 'none');
    assert.equal(authenticationFor(server(['attest_jwt_client_auth']), true), 'attestation');
    assert.equal(authenticationFor(server(['attest_jwt_client_auth', 'none']), false), 'none');
    assert.equal(authenticationFor(server(['none']), true), 'none');
    refusedBecause(
      () => authenticationFor(server(['attest_jwt_client_auth']), false),
      /admits only wallets that authenticate with a Wallet Attestation/,
    );
  });
});

describe('the attestations as an issuer reads them (checked with jose against the provider certificate)', () => {
  let files: WalletProviderFiles;
  let provider: WalletProvider;
  before(async () => {
    files = await createWalletProvider();
    provider = (await loadWalletProvider(files.keyFile, files.chainFile, new Date()))!;
  });
  after(async () => {
    await rm(files.dir, { recursive: true, force: true });
  });

  const input = (now = new Date()) => ({
    provider,
    providerId: 'https://wallet.example',
    clientId: 'https://wallet.example',
    now,
  });
  const instanceJwk = () =>
    generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
  const signerKey = () =>
    importX509(`-----BEGIN CERTIFICATE-----\n${files.x5c[0]}\n-----END CERTIFICATE-----`, 'ES256');

  test('a Wallet Attestation: typed, signed by the provider certificate, cnf the instance key, ten minutes, nothing else', async () => {
    const jwk = instanceJwk();
    const jwt = await walletAttestation(input(), { ...jwk, kid: 'leaks', d: 'secret' } as never);
    await compactVerify(jwt, await signerKey());
    assert.deepEqual(decodeProtectedHeader(jwt), {
      typ: 'oauth-client-attestation+jwt',
      alg: 'ES256',
      x5c: files.x5c,
    });
    const payload = decodeJwt(jwt);
    assert.deepEqual(Object.keys(payload).sort(), ['cnf', 'exp', 'iat', 'iss', 'sub']);
    assert.deepEqual(payload['cnf'], { jwk: { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y } });
    assert.equal(payload.exp! - payload.iat!, 600);
  });

  test('a key attestation: OpenID4VCI 1.0 typ, every key, the nonce, an expiry, no claimed levels', async () => {
    const keys = [instanceJwk(), instanceJwk()];
    const jwt = await keyAttestation(input(), keys, 'c-nonce-1');
    await compactVerify(jwt, await signerKey());
    assert.equal(decodeProtectedHeader(jwt).typ, 'key-attestation+jwt');
    const payload = decodeJwt(jwt);
    assert.deepEqual(
      payload['attested_keys'],
      keys.map((k) => ({ kty: 'EC', crv: 'P-256', x: k.x, y: k.y })),
    );
    assert.equal(payload['nonce'], 'c-nonce-1');
    assert.equal(typeof payload.exp, 'number');
    assert.equal(payload['key_storage'], undefined);
    assert.equal(payload['user_authentication'], undefined);
    assert.equal(decodeJwt(await keyAttestation(input(), keys, undefined))['nonce'], undefined);
  });

  test('a provider certificate that has expired signs nothing: the operator is told to renew it', async () => {
    const later = new Date(Date.now() + 2 * 365 * 24 * 3600 * 1000);
    await assert.rejects(walletAttestation(input(later), instanceJwk()), /WALLET_PROVIDER_CHAIN.*renew it/);
    await assert.rejects(keyAttestation(input(later), [instanceJwk()], 'n'), /renew it/);
  });
});
