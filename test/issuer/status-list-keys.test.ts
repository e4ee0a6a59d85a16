// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { compactVerify, decodeProtectedHeader } from 'jose';
import { dropSpentRetiredKeys } from '../../src/issuer/issuer-repository.ts';
import { coffer } from '../helpers/cli.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { type SecondInstance, startSecondInstance } from '../helpers/server.ts';
import { makeCertificate, privateKeyPem } from '../oid4vp/certificates.ts';
import { bitstringStatusOf, tokenStatusOf, verifySdJwtVc } from './independent-checks.ts';
import { type InteropIssuer, startInteropIssuer } from './test-wallet.ts';

/**
 * Status lists belong to their signing key (issue #39): after `coffer issuer enable` with a new
 * key, new credentials are signed by it at once and get lists of their own, and the lists of the
 * earlier credentials keep being signed by the earlier key — each list checks against the key
 * of the credential that points to it, as a verifier holding only that credential checks it. The
 * ETag names what is served on every instance; spent earlier keys and their lists go.
 */

const DEGREE = { given_name: 'Ada', degree: 'BSc Mathematics' };
const CLAIMS = [{ path: ['given_name'], mandatory: true }, { path: ['degree'] }];

/** The leaf certificate of a JWS's x5c header: the key a verifier checks it with. */
const x5cLeaf = (jws: string) =>
  new X509Certificate(Buffer.from(decodeProtectedHeader(jws).x5c![0]!, 'base64'));

/** Verifies a status list JWT with the public key of the credential that points to it. */
async function listSignedByKeyOf(listJwt: string, credentialJws: string) {
  const key = x5cLeaf(credentialJws).publicKey;
  await compactVerify(listJwt, key);
}

for (const kind of DATABASE_KINDS) {
  describe(`issuer status lists across a key change (${kind})`, () => {
    let world: InteropIssuer;
    let second: SecondInstance;
    let dir: string;

    before(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'coffer-status-keys-'));
      world = await startInteropIssuer(kind);
      for (const [id, configuration] of Object.entries({
        'degree-sd': { format: 'dc+sd-jwt', vct: 'https://example.edu/degree', claims: CLAIMS, status: true },
        'degree-jwt': {
          format: 'jwt_vc_json',
          type: 'UniversityDegreeCredential',
          claims: CLAIMS.map((claim) => ({ ...claim, path: ['credentialSubject', ...claim.path] })),
          status: true,
        },
      })) {
        const put = await world.api('PUT', `/v1/issuer/configurations/${id}`, configuration);
        assert.equal(put.status, 201, put.text);
      }
      second = await startSecondInstance(world.server);
    });
    after(async () => {
      await second.close();
      await world.close();
      await rm(dir, { recursive: true, force: true });
    });

    async function issued(configurationId: string) {
      const offer = await world.offer({
        configuration_ids: [configurationId],
        claims: {
          [configurationId]: configurationId === 'degree-jwt' ? { credentialSubject: DEGREE } : DEGREE,
        },
      });
      const { credentials } = await world.wallet.receive(offer.offer_link);
      const records = await world.api('GET', `/v1/issuer/credentials?offer=${offer.id}`);
      return { credential: credentials[0] as string, record: records.body.data[0] };
    }

    /** `coffer issuer enable` again, with a new key and certificate from the same CA. */
    async function renewKey(name: string) {
      const leaf = await makeCertificate({
        subject: `C=GB, O=University, CN=${name}`,
        issuer: world.ca,
        ipAddresses: ['127.0.0.1'],
      });
      await writeFile(path.join(dir, `${name}.key.pem`), await privateKeyPem(leaf.keys.privateKey));
      await writeFile(path.join(dir, `${name}.chain.pem`), leaf.pem);
      const enabled = await coffer(
        world.server,
        'issuer',
        'enable',
        '--client',
        String(world.clientId),
        '--key',
        path.join(dir, `${name}.key.pem`),
        '--chain',
        path.join(dir, `${name}.chain.pem`),
        '--json',
      );
      assert.equal(enabled.code, 0, enabled.stderr);
      return leaf;
    }

    const fetchList = async (uri: string, init: { etag?: string; via?: string } = {}) => {
      const url = init.via ? uri.replace(new URL(uri).origin, init.via) : uri;
      const response = await (init.via ? fetch : world.front.fetch)(url, {
        headers: init.etag ? { 'if-none-match': init.etag } : {},
      });
      return { status: response.status, etag: response.headers.get('etag'), body: await response.text() };
    };
    const setStatus = (id: string, status: string) =>
      world.api('POST', `/v1/issuer/credentials/${encodeURIComponent(id)}/status`, { status });

    it('dc+sd-jwt: each list is signed by the key of its own credentials, before and after a revocation', async () => {
      const before = await issued('degree-sd');
      const beforeList = (await fetchList(before.record.status_list.uri)).body;
      await listSignedByKeyOf(beforeList, before.credential);

      const renewed = await renewKey('Renewed Issuer');
      const after = await issued('degree-sd');
      assert.equal(
        x5cLeaf(after.credential).fingerprint256,
        new X509Certificate(renewed.pem).fingerprint256,
        'a credential issued after the key change is signed by the new key at once',
      );
      assert.notEqual(after.record.status_list.uri, before.record.status_list.uri, 'a list of its own');

      // The earlier list is still signed by the earlier key; the new one by the new key.
      const earlier = await fetchList(before.record.status_list.uri);
      await listSignedByKeyOf(earlier.body, before.credential);
      const later = await fetchList(after.record.status_list.uri);
      await listSignedByKeyOf(later.body, after.credential);
      await assert.rejects(listSignedByKeyOf(earlier.body, after.credential), 'not the new key');

      // An independent verifier (@sd-jwt/sd-jwt-vc with its status check) takes both.
      await verifySdJwtVc(before.credential, world.ca, world.front.fetch);
      await verifySdJwtVc(after.credential, world.ca, world.front.fetch);

      // Revoking the earlier credential changes its list, still signed by the earlier key.
      assert.equal((await setStatus(before.record.id, 'revoked')).status, 200);
      const revoked = await fetchList(before.record.status_list.uri, { etag: earlier.etag! });
      assert.equal(revoked.status, 200, 'the changed list does not keep its ETag');
      assert.notEqual(revoked.etag, earlier.etag);
      await listSignedByKeyOf(revoked.body, before.credential);
      assert.equal(await tokenStatusOf(revoked.body, world.ca, before.record.status_list.index), 1);
      const untouched = await fetchList(after.record.status_list.uri, { etag: later.etag! });
      assert.equal(untouched.status, 304, 'the other list did not change');
    });

    it('jwt_vc_json: the Bitstring Status List credential follows its credential key too', async () => {
      const before = await issued('degree-jwt');
      await renewKey('Third Issuer');
      const after = await issued('degree-jwt');
      assert.notEqual(after.record.status_list.uri, before.record.status_list.uri);
      const earlier = await fetchList(before.record.status_list.uri);
      const later = await fetchList(after.record.status_list.uri);
      await listSignedByKeyOf(earlier.body, before.credential);
      await listSignedByKeyOf(later.body, after.credential);
      assert.equal(await bitstringStatusOf(earlier.body, world.ca, before.record.status_list.index), 0);
    });

    it('names the same list version by the same ETag on every instance, and 304s across them', async () => {
      const { record } = await issued('degree-sd');
      const here = await fetchList(record.status_list.uri);
      const there = await fetchList(record.status_list.uri, { via: second.url });
      assert.equal(there.status, 200);
      assert.equal(there.etag, here.etag, 'one version, key and iat: one ETag');
      assert.match(
        here.etag!,
        /^W\/"/,
        'weak: two instances sign the same content with different signatures',
      );
      assert.equal(JSON.stringify(decodePayload(there.body)), JSON.stringify(decodePayload(here.body)));
      assert.equal(
        (await fetchList(record.status_list.uri, { via: second.url, etag: here.etag! })).status,
        304,
      );
      assert.equal((await setStatus(record.id, 'suspended')).status, 200);
      const changed = await fetchList(record.status_list.uri, { via: second.url, etag: here.etag! });
      assert.equal(changed.status, 200, 'the other instance saw the change');
      assert.notEqual(changed.etag, here.etag);
    });

    it('drops an earlier key and its lists once their last credential has expired, not before', async () => {
      const before = await issued('degree-sd');
      await renewKey('Fourth Issuer');
      const db = world.server.database.db;
      const retired = await db
        .selectFrom('issuer_retired_keys')
        .select('id')
        .where('client_id', '=', world.clientId)
        .execute();
      assert.ok(retired.length >= 1);
      // A day on: the credential (valid for a year) still holds its list and key.
      await dropSpentRetiredKeys(db, new Date(Date.now() + 86_400_000));
      assert.equal((await fetchList(before.record.status_list.uri)).status, 200);
      // Past every credential's expiry: the earlier keys and their lists are gone.
      await dropSpentRetiredKeys(db, new Date(Date.now() + 20 * 365 * 86_400_000));
      assert.equal((await fetchList(before.record.status_list.uri)).status, 404);
      const left = await db
        .selectFrom('issuer_retired_keys')
        .select('id')
        .where('client_id', '=', world.clientId)
        .execute();
      assert.equal(left.length, 0);
      // The current key's lists stay, whatever their credentials' expiry.
      const current = await issued('degree-sd');
      await dropSpentRetiredKeys(db, new Date(Date.now() + 20 * 365 * 86_400_000));
      assert.equal((await fetchList(current.record.status_list.uri)).status, 200);
    });
  });
}

const decodePayload = (jws: string) => JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString());
