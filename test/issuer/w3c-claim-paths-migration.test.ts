// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import { createPrivateKey, createSecretKey, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { createClient } from '../../src/clients/client-admin.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createMigrator, migrateToLatest } from '../../src/db/migrate.ts';
import { generateBbsKey } from '../../src/formats/credential-issuance.ts';
import { sealIssuerKeys } from '../../src/issuer/issuer-keys.ts';
import { preAuthorizedCodeOf, sha256 } from '../../src/issuer/offer-document.ts';
import { offerClaimsContext } from '../../src/issuer/offers.ts';
import { deriveKey } from '../../src/keys/derive-key.ts';
import { createFieldCipher } from '../../src/keys/field-cipher.ts';
import { createTestDatabase, DATABASE_KINDS, type DatabaseKind } from '../helpers/databases.ts';
import { startTestServer } from '../helpers/server.ts';
import { makeCertificate, privateKeyPem } from '../oid4vp/certificates.ts';
import { startTlsFront } from '../verifier/tls-front.ts';
import { verifyVcJwt } from './independent-checks.ts';
import { TestWallet } from './test-wallet.ts';

/**
 * Migration 0017: configurations of jwt_vc_json and ldp_vc stored with paths from a claim name
 * get `credentialSubject` in front (paths from it already stay), and offers whose claims were
 * sealed before it are marked, so they still issue their claims once under credentialSubject.
 */

/** A database of the given kind, migrated up to (and including) 0016, as before the upgrade. */
async function databaseBeforeUpgrade(kind: DatabaseKind) {
  const testDatabase = await createTestDatabase(kind);
  const database = openDatabase({
    databaseUrl: testDatabase.databaseUrl,
    dataDir: testDatabase.dataDir,
    schema: testDatabase.schema,
  });
  const migrator = await createMigrator(database.db, database.dialect);
  assert.equal((await migrator.migrateTo('0016-edges')).error, undefined);
  return { testDatabase, database, db: database.db as Kysely<any> };
}

const now = () => new Date().toISOString();

const configurationRow = (clientId: number, id: string, configuration: object) => ({
  client_id: clientId,
  configuration_id: id,
  configuration: JSON.stringify(configuration),
  scope: null,
  updated_at: now(),
});

/** An offer row as Coffer wrote it before the upgrade (pre-authorized code, no tx_code). */
const offerRow = (clientId: number, id: string, configurationIds: string[], claimsSealed: string | null) => ({
  id,
  client_id: clientId,
  configuration_ids: JSON.stringify(configurationIds),
  grant_type: 'pre-authorized_code',
  pre_authorized_code_hash: null,
  issuer_state: null,
  tx_code_hash: null,
  tx_code_spec: null,
  claims_sealed: claimsSealed,
  user_id: null,
  status: 'offered',
  callback_url: null,
  transaction_id_hash: null,
  deferred_sealed: null,
  created_at: now(),
  expires_at: new Date(Date.now() + 3600_000).toISOString(),
  redeemed_at: null,
});

const OLD_DEGREE = {
  format: 'jwt_vc_json',
  type: 'UniversityDegreeCredential',
  claims: [{ path: ['given_name'], mandatory: true }, { path: ['degree', 'name'] }],
};

for (const kind of DATABASE_KINDS) {
  describe(`migration 0017: W3C claim paths (${kind})`, () => {
    it('rewrites stored W3C configurations and marks offers whose claims are sealed', async (t) => {
      const { testDatabase, database, db } = await databaseBeforeUpgrade(kind);
      t.after(async () => {
        await database.close();
        await testDatabase.drop();
      });
      const { client_id: clientId } = await createClient(db, { name: 'University', master: true });
      await db
        .insertInto('issuers')
        .values({
          client_id: clientId,
          key_sealed: 'x',
          chain_pem: 'x',
          bbs_key_sealed: 'x',
          bbs_did: 'x',
          created_at: now(),
        })
        .execute();
      const sdJwt = {
        format: 'dc+sd-jwt',
        vct: 'https://example.edu/pid',
        claims: [{ path: ['given_name'] }],
      };
      const mdoc = { format: 'mso_mdoc', doctype: 'org.iso.18013.5.1.mDL', claims: [{ path: ['ns', 'el'] }] };
      const mixed = {
        format: 'ldp_vc',
        type: 'Badge',
        claims: [{ path: ['credentialSubject', 'name'], display: [{ name: 'Name' }] }, { path: ['email'] }],
        from_profile: { email: 'email_address' },
      };
      await db
        .insertInto('issuer_configurations')
        .values([
          configurationRow(clientId, 'degree', OLD_DEGREE),
          configurationRow(clientId, 'mixed', mixed),
          configurationRow(clientId, 'pid', sdJwt),
          configurationRow(clientId, 'mdl', mdoc),
        ])
        .execute();
      await db
        .insertInto('issuer_offers')
        .values([
          offerRow(clientId, 'sealed', ['degree'], 'sealed-claims'),
          offerRow(clientId, 'deferred', ['degree'], null),
        ])
        .execute();

      await migrateToLatest(db, database.dialect);

      const rows = await db
        .selectFrom('issuer_configurations')
        .select(['configuration_id', 'configuration'])
        .orderBy('configuration_id')
        .execute();
      const read = Object.fromEntries(
        rows.map((r: any) => [r.configuration_id, JSON.parse(r.configuration)]),
      );
      assert.deepEqual(read['degree'], {
        ...OLD_DEGREE,
        claims: [
          { path: ['credentialSubject', 'given_name'], mandatory: true },
          { path: ['credentialSubject', 'degree', 'name'] },
        ],
      });
      assert.deepEqual(read['mixed'], {
        ...mixed,
        claims: [
          { path: ['credentialSubject', 'name'], display: [{ name: 'Name' }] },
          { path: ['credentialSubject', 'email'] },
        ],
      });
      assert.deepEqual(read['pid'], sdJwt, 'dc+sd-jwt paths stay');
      assert.deepEqual(read['mdl'], mdoc, 'mso_mdoc paths stay');
      const offers = await db
        .selectFrom('issuer_offers')
        .select(['id', 'legacy_w3c_claims'])
        .orderBy('id')
        .execute();
      assert.deepEqual(
        offers.map((o: any) => [o.id, Number(o.legacy_w3c_claims)]),
        [
          ['deferred', 0],
          ['sealed', 1],
        ],
      );
    });

    it('an offer made before the upgrade issues its claims once under credentialSubject', async (t) => {
      const { testDatabase, database, db } = await databaseBeforeUpgrade(kind);
      const masterKey = randomBytes(32);
      const cipher = createFieldCipher(masterKey);
      const ca = await makeCertificate({ subject: 'C=GB, CN=Test Issuer CA', ca: true });
      const leaf = await makeCertificate({
        subject: 'C=GB, O=University, CN=University Issuer',
        issuer: ca,
        ipAddresses: ['127.0.0.1'],
      });
      const { client_id: clientId, api_token: token } = await createClient(db, {
        name: 'University',
        master: true,
      });
      // The issuer's row as `coffer issuer enable` wrote it before the upgrade (today's enable
      // writes columns later migrations add).
      const privateJwk = createPrivateKey(await privateKeyPem(leaf.keys.privateKey)).export({
        format: 'jwk',
      });
      await db
        .insertInto('issuers')
        .values({
          client_id: clientId,
          key_sealed: sealIssuerKeys.es256(cipher, clientId, privateJwk),
          chain_pem: leaf.pem,
          ...(await sealIssuerKeys.bbs(cipher, clientId, await generateBbsKey())),
          haip: 0,
          created_at: now(),
        })
        .execute();
      // One configuration as the API stored it before, one whose tenant wrote the spec's paths.
      await db
        .insertInto('issuer_configurations')
        .values([
          configurationRow(clientId, 'degree', OLD_DEGREE),
          configurationRow(clientId, 'spec', {
            ...OLD_DEGREE,
            claims: [{ path: ['credentialSubject', 'given_name'] }],
          }),
        ])
        .execute();
      const preAuthorizedKey = createSecretKey(deriveKey(masterKey, 'issuer-pre-authorized-code/v1'));
      const offer = async (id: string, configurationId: string, claims: object) => {
        const sealed = cipher.encrypt(JSON.stringify({ [configurationId]: claims }), offerClaimsContext(id));
        await db
          .insertInto('issuer_offers')
          .values({
            ...offerRow(clientId, id, [configurationId], sealed),
            pre_authorized_code_hash: sha256(preAuthorizedCodeOf(preAuthorizedKey, id)),
          })
          .execute();
      };
      const subject = { given_name: 'Ada', degree: { name: 'BSc Mathematics' } };
      const degreeOffer = randomBytes(16).toString('base64url');
      await offer(degreeOffer, 'degree', subject);
      const specOffer = randomBytes(16).toString('base64url');
      await offer(specOffer, 'spec', { credentialSubject: { given_name: 'Grace' } });
      await database.close();

      // The upgrade: the server starts over the same database and key, migrating it.
      const front = await startTlsFront();
      const server = await startTestServer(
        kind,
        { ALLOW_PRIVATE_TARGETS: 'true', PUBLIC_URL: front.url },
        { existing: { testDatabase, masterKey } },
      );
      front.target = server.url;
      t.after(async () => {
        await server.close();
        await front.close();
      });
      const wallet = new TestWallet(front.fetch);
      const issuerId = `${front.url}/issuers/${clientId}`;
      const link = (id: string) =>
        `openid-credential-offer://?credential_offer_uri=${encodeURIComponent(`${issuerId}/offers/${id}`)}`;

      const got = await wallet.receive(link(degreeOffer));
      const { payload } = await verifyVcJwt(got.credentials[0] as string, ca);
      assert.deepEqual((payload['vc'] as any).credentialSubject, { id: payload.sub, ...subject });
      const claims: any[] = (got.metadata.credentialIssuer.credential_configurations_supported as any)[
        'degree'
      ].credential_metadata.claims;
      assert.deepEqual(
        claims.map((c: any) => c.path),
        [
          ['credentialSubject', 'given_name'],
          ['credentialSubject', 'degree', 'name'],
        ],
      );

      const spec = await wallet.receive(link(specOffer));
      const { payload: specPayload } = await verifyVcJwt(spec.credentials[0] as string, ca);
      assert.deepEqual((specPayload['vc'] as any).credentialSubject, {
        id: specPayload.sub,
        given_name: 'Grace',
      });

      const listed = await server.request('GET', '/v1/issuer/configurations', {
        headers: { 'x-api-token': token },
      });
      assert.deepEqual(
        listed.body.data.find((c: any) => c.id === 'degree').claims.map((c: any) => c.path),
        claims.map((c: any) => c.path),
        'the tenant reads what the metadata says',
      );
    });
  });
}
