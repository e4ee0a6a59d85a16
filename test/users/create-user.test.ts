import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from '../../src/clients/client-admin.ts';
import { createFieldCipher } from '../../src/keys/field-cipher.ts';
import { didOfPrivateJwk } from '../../src/keys/holder-key.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { leaksInternals, startTestServer, type TestServer } from '../helpers/server.ts';
import { fullProfile, minimalProfile, normalizedFullProfile, readStoredUser } from './helpers.ts';

const CHECKSUMMED = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

for (const kind of DATABASE_KINDS) {
  describe(`POST /v1/user/create on ${kind}`, () => {
    let server: TestServer;
    let master: { clientId: number; token: string };
    let otherMaster: { clientId: number; token: string };
    const as = (token: string, extra: Record<string, string> = {}) => ({ 'x-api-token': token, ...extra });
    const create = (body: unknown, token = master.token, extra: Record<string, string> = {}) =>
      server.request('POST', '/v1/user/create', { headers: as(token, extra), body });

    before(async () => {
      server = await startTestServer(kind);
      master = await server.createMaster('Master A');
      otherMaster = await server.createMaster('Master B');
    });
    after(async () => {
      for (const body of server.bodies) assert.equal(leaksInternals(body), false, body);
      await server.close();
    });

    test('creates a user whose encrypted profile reads back as the normalised input', async () => {
      const r = await create({ profile: fullProfile, wallet: { address: CHECKSUMMED, chain_id: '1' } });
      assert.equal(r.status, 201, r.text);
      assert.deepEqual(Object.keys(r.body), ['data']);
      assert.deepEqual(Object.keys(r.body.data), ['user_id']);
      assert.ok(Number.isInteger(r.body.data.user_id) && r.body.data.user_id > 0);

      const { row, profile } = await readStoredUser(server, r.body.data.user_id);
      assert.deepEqual(profile, normalizedFullProfile);
      assert.equal(row.tenant_id, master.clientId);
      assert.equal(row.wallet_address, CHECKSUMMED.toLowerCase());
      assert.equal(row.wallet_chain_id, '1');
      assert.match(row.did, /^did:key:z6Mk/);
      assert.match(row.email_index ?? '', /^[A-Za-z0-9_-]{43}$/);
      // The sealed holder key opens only with its user's DID as associated data, and is that DID's key.
      const cipher = createFieldCipher(server.masterKey);
      const jwk = JSON.parse(cipher.decrypt(row.holder_key_sealed, `users/${row.did}/holder_key`));
      assert.equal(didOfPrivateJwk(jwk), row.did);
      assert.throws(() => cipher.decrypt(row.holder_key_sealed, 'users/did:key:z6Mkother/holder_key'));
    });

    test('a minimal profile without a wallet is enough, and each user gets its own DID', async () => {
      const a = await create({ profile: minimalProfile() });
      const b = await create({ profile: minimalProfile() });
      assert.equal(a.status, 201, a.text);
      assert.equal(b.status, 201, b.text);
      const rowA = (await readStoredUser(server, a.body.data.user_id)).row;
      const rowB = (await readStoredUser(server, b.body.data.user_id)).row;
      assert.notEqual(rowA.did, rowB.did);
      assert.equal(rowA.wallet_address, null);
    });

    test('no personal data is kept in plaintext', async () => {
      const email = 'Plaintext.Canary.q8z3@leak-check.example';
      const lastName = 'Xylophonecanary';
      const r = await create({
        profile: minimalProfile({ email_address: email, last_name: lastName, residence_city: 'Canarytown' }),
      });
      assert.equal(r.status, 201, r.text);
      const needles = [email, email.toLowerCase(), lastName, 'Canarytown'].map((s) => Buffer.from(s));
      if (kind === 'sqlite') {
        const { readdir, readFile } = await import('node:fs/promises');
        const path = await import('node:path');
        const dir = server.testDatabase.dataDir;
        const files = (await readdir(dir, { recursive: true, withFileTypes: true }))
          .filter((entry) => entry.isFile())
          .map((entry) => path.join(entry.parentPath, entry.name));
        assert.ok(
          files.some((file) => file.includes(`${path.sep}blocks${path.sep}`)),
          'blocks were written',
        );
        assert.ok(files.some((file) => file.endsWith('coffer.sqlite')));
        for (const file of files) {
          const bytes = await readFile(file);
          for (const needle of needles)
            assert.equal(bytes.includes(needle), false, `${needle} found in ${file}`);
        }
      } else {
        const { sql } = await import('kysely');
        const rows = await sql<{ text: string }>`select u::text as text from users u`.execute(
          server.database.db,
        );
        assert.ok(rows.rows.length > 0);
        for (const { text } of rows.rows) {
          for (const needle of needles) assert.equal(text.includes(needle.toString()), false, text);
        }
      }
      // The profile is still there, behind the CID.
      assert.equal(
        ((await readStoredUser(server, r.body.data.user_id)).profile as { last_name: string }).last_name,
        lastName,
      );
    });

    describe('uniqueness in a tenant', () => {
      test('the same e-mail in another case → 409 conflict', async () => {
        const profile = minimalProfile({ email_address: 'Dup.Case@Example.org' });
        assert.equal((await create({ profile })).status, 201);
        const again = await create({
          profile: minimalProfile({ email_address: '  dup.case@EXAMPLE.ORG'.trim() }),
        });
        assert.equal(again.status, 409, again.text);
        assert.equal(again.body.error, 'conflict');
        assert.match(again.body.error_description, /e-mail/);
      });

      test('the same wallet, checksummed or lower-case → 409 conflict', async () => {
        const address = '0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359';
        const first = await create({ profile: minimalProfile(), wallet: { address, chain_id: '1' } });
        assert.equal(first.status, 201, first.text);
        const again = await create({
          profile: minimalProfile(),
          wallet: { address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', chain_id: '137' },
        });
        assert.equal(again.status, 409, again.text);
        assert.equal(again.body.error, 'conflict');
        assert.match(again.body.error_description, /wallet/);
      });

      test('20 concurrent creates of one e-mail → exactly one 201, the rest 409', async () => {
        const profile = minimalProfile();
        const results = await Promise.all(Array.from({ length: 20 }, () => create({ profile })));
        const statuses = results.map((r) => r.status).sort();
        assert.equal(statuses.filter((s) => s === 201).length, 1, statuses.join(','));
        assert.equal(statuses.filter((s) => s === 409).length, 19, statuses.join(','));
      });

      test('20 concurrent creates of one wallet with different e-mails → exactly one 201', async () => {
        const wallet = { address: '0x00000000000000000000000000000000000000a1', chain_id: '1' };
        const results = await Promise.all(
          Array.from({ length: 20 }, () => create({ profile: minimalProfile(), wallet })),
        );
        const statuses = results.map((r) => r.status);
        assert.equal(statuses.filter((s) => s === 201).length, 1, statuses.join(','));
        assert.ok(
          statuses.every((s) => s === 201 || s === 409),
          statuses.join(','),
        );
      });
    });

    describe('tenancy', () => {
      test('the same e-mail in different tenants is fine', async () => {
        const sub = await createClient(server.database.db, { name: 'Sub', parentId: master.clientId });
        const profile = minimalProfile();
        const own = await create({ profile });
        const scoped = await create({ profile }, master.token, {
          'x-api-subclient-id': String(sub.client_id),
        });
        const other = await create({ profile }, otherMaster.token);
        const bySub = await create({ profile: { ...profile } }, sub.api_token);
        assert.deepEqual([own.status, scoped.status, other.status], [201, 201, 201], scoped.text);
        assert.equal(
          bySub.status,
          409,
          "the sub-client's own token creates in the same tenant as the header",
        );
        assert.equal((await readStoredUser(server, own.body.data.user_id)).row.tenant_id, master.clientId);
        assert.equal((await readStoredUser(server, scoped.body.data.user_id)).row.tenant_id, sub.client_id);
        assert.equal(
          (await readStoredUser(server, other.body.data.user_id)).row.tenant_id,
          otherMaster.clientId,
        );
      });

      test('a sub-client without the header creates users in its own tenant', async () => {
        const sub = await createClient(server.database.db, { name: 'Sub 2', parentId: master.clientId });
        const r = await create({ profile: minimalProfile() }, sub.api_token);
        assert.equal(r.status, 201, r.text);
        assert.equal((await readStoredUser(server, r.body.data.user_id)).row.tenant_id, sub.client_id);
      });

      test("x-api-subclient-id naming another master's sub-client, or an unknown one → 403", async () => {
        const theirs = await createClient(server.database.db, {
          name: 'Theirs',
          parentId: otherMaster.clientId,
        });
        for (const id of [
          String(theirs.client_id),
          '999999',
          String(otherMaster.clientId),
          String(master.clientId),
        ]) {
          const r = await create({ profile: minimalProfile() }, master.token, { 'x-api-subclient-id': id });
          assert.equal(r.status, 403, `${id}: ${r.text}`);
          assert.equal(r.body.error, 'forbidden');
        }
        const malformed = await create({ profile: minimalProfile() }, master.token, {
          'x-api-subclient-id': '1x',
        });
        assert.equal(malformed.status, 400);
        assert.equal(malformed.body.details[0].path, '/headers/x-api-subclient-id');
      });

      test('a client that is not a master, with x-api-subclient-id → 403', async () => {
        const sub = await createClient(server.database.db, { name: 'Sub 3', parentId: master.clientId });
        const plain = await createClient(server.database.db, { name: 'Plain' });
        for (const token of [sub.api_token, plain.api_token]) {
          const r = await create({ profile: minimalProfile() }, token, {
            'x-api-subclient-id': String(sub.client_id),
          });
          assert.equal(r.status, 403, r.text);
        }
      });
    });

    describe('transport', () => {
      test('missing or unknown token → 401 unauthorized', async () => {
        const none = await server.request('POST', '/v1/user/create', { body: { profile: minimalProfile() } });
        assert.equal(none.status, 401);
        assert.equal(none.body.error, 'unauthorized');
        const bad = await create({ profile: minimalProfile() }, 'cfr_at_unknown');
        assert.equal(bad.status, 401);
        assert.equal(bad.body.error, 'unauthorized');
      });

      test('a body over the limit → 413; not JSON → 415; broken JSON → 400', async () => {
        const big = await create({
          profile: minimalProfile({ avatar: `https://x.example/${'a'.repeat(300_000)}` }),
        });
        assert.equal(big.status, 413);
        assert.equal(big.body.error, 'payload_too_large');
        for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
          const r = await server.request('POST', '/v1/user/create', {
            headers: as(master.token, { 'content-type': type }),
            body: 'profile=1',
          });
          assert.equal(r.status, 415, type);
          assert.equal(r.body.error, 'unsupported_media_type');
        }
        const broken = await server.request('POST', '/v1/user/create', {
          headers: as(master.token, { 'content-type': 'application/json' }),
          body: '{"profile": {',
        });
        assert.equal(broken.status, 400);
        assert.equal(broken.body.error, 'invalid_request');
      });

      test('the endpoint is described in /openapi.json', async () => {
        const r = await server.request('GET', '/openapi.json');
        const operation = r.body.paths['/v1/user/create'].post;
        assert.ok(operation.requestBody);
        assert.ok(operation.responses['201']);
        assert.ok(operation.responses['409']);
      });

      test('/readyz checks storage', async () => {
        const r = await server.request('GET', '/readyz');
        assert.equal(r.status, 200);
        assert.equal(r.body.checks.storage, 'ok');
      });
    });
  });
}
