import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestFederation, type TestEntity, type TestFederation } from '../trust/test-federation.ts';
import type { Key } from './certificates.ts';
import { checkVpToken } from './presentation-check.ts';
import {
  type EncryptionKey,
  type KeySigner,
  LDP_VC_FORMATS,
  newEncryptionKey,
  type Transaction,
} from './verifier.ts';
import { ENC } from './verifier-responses.ts';
import {
  approve,
  authorize,
  consentView,
  errorPage,
  logInWithSiweInConsent,
  personWithCredential,
  startConsent,
  startWalletWorld,
  type WalletWorld,
} from './wallet-helpers.ts';

/**
 * The hosted wallet answers a verifier identified as `openid_federation:<entity id>` (OpenID4VP
 * 1.0 §5.9.3): its request object, made by @openid4vc/openid4vp, is checked with the keys of the
 * verifier's `openid_credential_verifier` metadata resolved through a federation made in the test
 * (anchor, intermediate, leaf; statements signed with jose, served over HTTPS) up to an anchor of
 * FEDERATION_TRUST_ANCHORS; the answer is encrypted to the federation metadata's key, never the
 * request's client_metadata. A broken, expired or foreign chain is refused with nothing sent; a
 * federation that cannot be reached is a 502.
 */

interface FederationVerifierKeys {
  signing: { privateKey: Key; publicJwk: JWK };
  encryption: EncryptionKey;
}

async function verifierKeys(): Promise<FederationVerifierKeys> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid: 'request-1', alg: 'ES256', use: 'sig' };
  return { signing: { privateKey: privateKey as Key, publicJwk }, encryption: await newEncryptionKey() };
}

const verifierMetadata = (keys: FederationVerifierKeys, name: string) => ({
  openid_credential_verifier: {
    client_name: name,
    jwks: { keys: [keys.signing.publicJwk, keys.encryption.publicJwk] },
    vp_formats_supported: LDP_VC_FORMATS,
    encrypted_response_enc_values_supported: [ENC],
  },
});

const signerOf = (entity: TestEntity, keys: FederationVerifierKeys): KeySigner => ({
  clientId: `openid_federation:${entity.id}`,
  ...keys.signing,
  jwtSigner: { method: 'federation', kid: 'request-1', alg: 'ES256' },
});

for (const kind of DATABASE_KINDS) {
  describe(`hosted wallet: openid_federation verifiers, on ${kind}`, () => {
    let world: WalletWorld;
    let federation: TestFederation;
    let anchor: TestEntity;
    let intermediate: TestEntity;
    let ada: Awaited<ReturnType<typeof personWithCredential>>;
    let cookie: string | undefined;
    let anchorsFile: string;

    before(async () => {
      federation = await startTestFederation();
      anchor = await federation.entity('anchor');
      intermediate = await federation.entity('intermediate', { superiors: [anchor] });
      anchorsFile = path.join(tmpdir(), `coffer-federation-${randomBytes(6).toString('hex')}.json`);
      const { entityId, jwks } = federation.anchorOf(anchor);
      await writeFile(anchorsFile, JSON.stringify([{ entity_id: entityId, jwks }]));
      world = await startWalletWorld(kind, { FEDERATION_TRUST_ANCHORS: anchorsFile }, [federation.ca.pem]);
      ada = await personWithCredential(world, privateKeyToAccount(generatePrivateKey()));
    });
    after(async () => {
      await world?.close();
      await federation?.close();
      await rm(anchorsFile, { force: true });
    });

    async function member(name: string, superiors = [intermediate]) {
      const keys = await verifierKeys();
      const entity = await federation.entity(`${name.toLowerCase().replaceAll(' ', '-')}-leaf`, {
        superiors,
        metadata: verifierMetadata(keys, name),
      });
      return { entity, keys };
    }

    const request = (entity: TestEntity, keys: FederationVerifierKeys, signer = signerOf(entity, keys)) =>
      world.verifier.createRequest({ keySigner: signer, encryptionKey: keys.encryption });

    const refused = async (transaction: Transaction, pattern: RegExp) =>
      errorPage(await authorize(world.server, transaction.query), transaction, pattern);

    test('a member of a trusted federation: the consent page names it and its anchor; the answer reaches it', async () => {
      const { entity, keys } = await member('City Library');
      // A decoy in the request's client_metadata: the answer must be encrypted to the federation's key.
      const decoy = await newEncryptionKey();
      const transaction = await world.verifier.createRequest({
        keySigner: signerOf(entity, keys),
        encryptionKey: keys.encryption,
        parameters: {
          client_metadata: { vp_formats_supported: LDP_VC_FORMATS, jwks: { keys: [decoy.publicJwk] } },
        },
      });
      const consentPath = await startConsent(world.server, transaction.query, cookie);
      if (!cookie)
        cookie = (await logInWithSiweInConsent(world.server, consentPath, ada.account)).cookie ?? undefined;
      const consent = await consentView(world.server, consentPath);
      assert.equal(consent.verifier.prefix, 'openid_federation');
      assert.equal(consent.verifier.client_id, `openid_federation:${entity.id}`);
      assert.equal(consent.verifier.name, 'City Library');
      assert.equal(consent.verifier.verified, true);
      assert.deepEqual(consent.verifier.federation, { entity_id: entity.id, trust_anchor: anchor.id });
      const html = await (await fetch(world.server.url + consentPath)).text();
      assert.match(html, /Trust anchor: <strong>https:\/\/127\.0\.0\.1:\d+\/anchor<\/strong>/);
      assert.doesNotMatch(html, /Unverified/);
      const received = await approve(world.server, consentPath, transaction);
      const [checked] = await checkVpToken(received.vpToken, {
        nonce: transaction.nonce,
        clientId: transaction.clientId,
        claims: { person: [['first_name']] },
      });
      assert.deepEqual(checked!.subject, { id: ada.did, first_name: 'Ada' });
    });

    test('a trust_chain header is validated as given, and must be the chain of the client_id', async () => {
      const { entity, keys } = await member('Museum');
      const chain = [
        await federation.configuration(entity),
        await federation.statement(intermediate, entity),
        await federation.statement(anchor, intermediate),
        await federation.configuration(anchor),
      ] as [string, ...string[]];
      const withChain: KeySigner = {
        ...signerOf(entity, keys),
        jwtSigner: { method: 'federation', kid: 'request-1', alg: 'ES256', trustChain: chain },
      };
      const served = federation.served.length;
      const transaction = await request(entity, keys, withChain);
      await startConsent(world.server, transaction.query, cookie);
      assert.equal(federation.served.length, served, 'nothing fetched: the chain came with the request');
      const { entity: other, keys: otherKeys } = await member('Other');
      const wrong: KeySigner = { ...signerOf(other, otherKeys), jwtSigner: withChain.jwtSigner };
      await refused(await request(other, otherKeys, wrong), /trust_chain header is the chain of/);
    });

    test('a request signed by a key the federation does not list is refused', async () => {
      const { entity, keys } = await member('Impostor');
      const stranger = await verifierKeys();
      const signer: KeySigner = { ...signerOf(entity, keys), ...stranger.signing };
      await refused(await request(entity, keys, signer), /signature does not verify/);
    });

    test('a broken, expired or foreign chain is refused, with nothing sent', async () => {
      const rogue = await member('Rogue');
      const stolen = await generateKeyPair('ES256', { extractable: true });
      rogue.entity.configurationClaims = {
        jwks: { keys: [{ ...(await exportJWK(stolen.publicKey)), kid: 'stolen', alg: 'ES256' }] },
      };
      rogue.entity.signConfigurationWith = { keys: stolen, kid: 'stolen' };
      await refused(await request(rogue.entity, rogue.keys), /trust chain is not valid/);

      const stale = await member('Stale');
      const past = Math.floor(Date.now() / 1000) - 7200;
      stale.entity.about.set(intermediate.id, { iat: past - 3600, exp: past });
      await refused(await request(stale.entity, stale.keys), /trust chain is not valid/);

      const elsewhere = await federation.entity('elsewhere-anchor');
      const foreign = await member('Foreign', [elsewhere]);
      await refused(await request(foreign.entity, foreign.keys), /no trust chain to/);
    });

    test('a federation that cannot be reached is a 502, with nothing sent', async () => {
      const { keys } = await member('Ghost');
      const ghost = { id: `${federation.url}/nowhere` } as TestEntity;
      const transaction = await request(ghost, keys);
      const answer = await authorize(world.server, transaction.query);
      assert.equal(answer.status, 502, answer.text);
      assert.match(answer.text, /could not be fetched|answered HTTP 404/);
      assert.equal(transaction.received.length, 0);
    });
  });
}
