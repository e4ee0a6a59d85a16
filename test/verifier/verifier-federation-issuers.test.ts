import assert from 'node:assert/strict';
import { type JsonWebKey, randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import type { IssuerIdentity } from '../helpers/issuers/issuer-ca.ts';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { makeCertificate } from '../oid4vp/certificates.ts';
import { startTestFederation, type TestEntity, type TestFederation } from '../trust/test-federation.ts';
import { answer, resolveRequest } from './test-wallet.ts';
import { presentSdJwt, sdJwtQuery, startVerifierWorld, type VerifierWorld } from './verifier-helpers.ts';

/**
 * A tenant's verifier trusts an issuer through a federation of FEDERATION_TRUST_ANCHORS: the
 * SD-JWT VC's `iss` is an entity whose trust chain (a federation made in the test, statements
 * signed with jose) reaches a configured anchor, and its signing key is one of the `jwks` of the
 * entity's resolved `openid_credential_issuer` metadata; the result says so (`trusted_by`,
 * `trust_anchor`). The issuer's certificate chains to no configured CA, so nothing else trusts it.
 * A key the federation does not list and an issuer anchored elsewhere are each refused.
 */

/** An issuer whose document signer is under a CA of its own, named for 127.0.0.1 (the entity's host). */
async function unanchoredIssuer(): Promise<IssuerIdentity> {
  const ca = await makeCertificate({
    subject: 'CN=Federated Issuer CA, C=IT',
    ca: true,
    keyIdentifiers: true,
  });
  const signer = await makeCertificate({
    subject: 'CN=Federated Issuer, O=Federated Issuer, C=IT',
    issuer: ca,
    keyIdentifiers: true,
    ipAddresses: ['127.0.0.1'],
  });
  return { ca, signer };
}

const publicJwkOf = async (identity: IssuerIdentity) => ({
  ...(await exportJWK(identity.signer.keys.publicKey)),
  kid: 'signer',
});

for (const kind of DATABASE_KINDS) {
  describe(`verifier: issuers trusted through a federation, on ${kind}`, () => {
    let world: VerifierWorld;
    let federation: TestFederation;
    let anchor: TestEntity;
    let intermediate: TestEntity;
    let holder: Awaited<ReturnType<typeof generateKeyPair>>;
    let anchorsFile: string;

    before(async () => {
      federation = await startTestFederation();
      anchor = await federation.entity('anchor');
      intermediate = await federation.entity('intermediate', { superiors: [anchor] });
      anchorsFile = path.join(tmpdir(), `coffer-federation-${randomBytes(6).toString('hex')}.json`);
      const { entityId, jwks } = federation.anchorOf(anchor);
      await writeFile(anchorsFile, JSON.stringify([{ entity_id: entityId, jwks }]));
      world = await startVerifierWorld(
        kind,
        { FEDERATION_TRUST_ANCHORS: anchorsFile },
        { trust: [federation.ca.pem] },
      );
      holder = await generateKeyPair('ES256', { extractable: true });
    });
    after(async () => {
      await world?.close();
      await federation?.close();
      await rm(anchorsFile, { force: true });
    });

    /** An issuer entity of the federation listing `listed` as its keys, and a credential it signs with `signing`. */
    async function federatedCredential(
      name: string,
      superiors: TestEntity[],
      signing: IssuerIdentity,
      listed = signing,
    ) {
      const entity = await federation.entity(`${name}-leaf`, {
        superiors,
        metadata: { openid_credential_issuer: { jwks: { keys: [await publicJwkOf(listed)] } } },
      });
      const credential = await issueSdJwtVc(signing, {
        holderJwk: (await exportJWK(holder.publicKey)) as JsonWebKey,
        iss: entity.id,
      });
      return { entity, credential };
    }

    async function present(credential: string, body: Record<string, unknown> = {}) {
      const created = await world.createRequest({
        dcql_query: sdJwtQuery(PID_VCT, [['given_name']]),
        ...body,
      });
      assert.equal(created.status, 201, created.text);
      const request = await resolveRequest(created.body.data.authorization_request);
      const presentation = await presentSdJwt(credential, { given_name: true }, holder, {
        aud: request.clientId,
        nonce: request.payload.nonce,
      });
      await answer(request, { pid: [presentation] });
      const result = await world.readResult(created.body.data.id);
      return result.body.data;
    }

    const failedCheck = (data: {
      credentials: Record<string, { checks: { name: string; ok: boolean; detail?: string }[] }[]>;
    }) => data.credentials['pid']![0]!.checks.find((check) => !check.ok);

    test('an issuer in the federation, signing with a key its metadata lists: verified, trusted_by openid_federation', async () => {
      const { entity, credential } = await federatedCredential(
        'university',
        [intermediate],
        await unanchoredIssuer(),
      );
      const data = await present(credential);
      assert.equal(data.status, 'verified', JSON.stringify(data));
      const [entry] = data.credentials.pid;
      assert.deepEqual(
        {
          id: entry.issuer.id,
          trusted: entry.issuer.trusted,
          by: entry.issuer.trusted_by,
          anchor: entry.issuer.trust_anchor,
        },
        { id: entity.id, trusted: true, by: 'openid_federation', anchor: anchor.id },
      );
      assert.equal(entry.claims.given_name, 'Ada');
    });

    test('the federation does not list the signing key: issuer_trusted fails', async () => {
      const { credential } = await federatedCredential(
        'impostor',
        [intermediate],
        await unanchoredIssuer(),
        await unanchoredIssuer(),
      );
      const data = await present(credential);
      assert.equal(data.status, 'rejected');
      const failed = failedCheck(data);
      assert.equal(failed?.name, 'issuer_trusted');
      assert.match(failed?.detail ?? '', /federation/);
    });

    test('an issuer anchored in another federation: issuer_trusted fails', async () => {
      const elsewhere = await federation.entity('elsewhere-anchor');
      const { credential } = await federatedCredential('foreign', [elsewhere], await unanchoredIssuer());
      const data = await present(credential);
      assert.equal(data.status, 'rejected');
      assert.equal(failedCheck(data)?.name, 'issuer_trusted');
    });
  });
}
