import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { coffer } from '../helpers/cli.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

for (const kind of DATABASE_KINDS) {
  describe(`admin CLI on ${kind}, while the server runs`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(kind);
    });
    after(() => server.close());

    test('client create --master --json gives a token that works over HTTP at once', async () => {
      const r = await coffer(server, 'client', 'create', '--name', 'CLI Master', '--master', '--json');
      assert.equal(r.code, 0, r.stderr);
      const created = JSON.parse(r.stdout);
      assert.deepEqual(Object.keys(created).sort(), ['api_token', 'client_id', 'client_secret']);
      assert.match(created.api_token, /^cfr_at_[A-Za-z0-9_-]{43}$/);
      assert.match(created.client_secret, /^cfr_cs_[A-Za-z0-9_-]{43}$/);
      const list = await server.request('GET', '/v1/sub_client', {
        headers: { 'x-api-token': created.api_token },
      });
      assert.equal(list.status, 200);
      const sub = await server.request('POST', '/v1/sub_client', {
        headers: { 'x-api-token': created.api_token },
        body: {
          name: 'From CLI',
          address_1: 'a',
          country: 'FR',
          province: 'FR-IDF',
          city: 'Paris',
          timezone: 'Europe/Paris',
          domain: 'cli.example.org',
          subdomain: `cli-${kind}`,
        },
      });
      assert.equal(sub.status, 201, sub.text);

      // A sub-client with its own parent, secret and redirect URI.
      const child = await coffer(
        server,
        ...['client', 'create', '--name', 'Child', '--parent', String(created.client_id)],
        ...['--redirect-uri', 'https://app.example/cb', '--json'],
      );
      assert.equal(child.code, 0, child.stderr);
      const childId = JSON.parse(child.stdout).client_id;
      const read = await server.request('GET', `/v1/sub_client/${childId}`, {
        headers: { 'x-api-token': created.api_token },
      });
      assert.equal(read.status, 200);
    });

    test('--post-logout-redirect-uri: repeatable on create, replaced by set, checked like redirect URIs', async () => {
      const created = await coffer(
        server,
        ...['client', 'create', '--name', 'Logout App', '--redirect-uri', 'https://app.example/cb'],
        ...[
          '--post-logout-redirect-uri',
          'https://app.example/bye',
          '--post-logout-redirect-uri',
          'https://app.example/ciao',
        ],
        '--json',
      );
      assert.equal(created.code, 0, created.stderr);
      const id = JSON.parse(created.stdout).client_id as number;
      const registered = async () => {
        const row = await server.database.db
          .selectFrom('clients')
          .select('post_logout_redirect_uris')
          .where('client_id', '=', id)
          .executeTakeFirstOrThrow();
        return JSON.parse(row.post_logout_redirect_uris);
      };
      assert.deepEqual(await registered(), ['https://app.example/bye', 'https://app.example/ciao']);
      const set = await coffer(
        server,
        'client',
        'set',
        String(id),
        '--post-logout-redirect-uri',
        'https://app.example/out',
      );
      assert.equal(set.code, 0, set.stderr);
      assert.deepEqual(await registered(), ['https://app.example/out']);
      const bad = await coffer(
        server,
        'client',
        'set',
        String(id),
        '--post-logout-redirect-uri',
        'https://app.example/#x',
      );
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr, /must not have a fragment/);
      assert.deepEqual(await registered(), ['https://app.example/out']);
    });

    test('--grant, --dpop-bound, --require-par and --public register what the token endpoint enforces', async () => {
      const created = await coffer(
        server,
        ...['client', 'create', '--name', 'Native App', '--redirect-uri', 'com.example.app:/cb'],
        ...['--public', '--grant', 'refresh_token', '--dpop-bound', '--require-par', '--json'],
      );
      assert.equal(created.code, 0, created.stderr);
      const made = JSON.parse(created.stdout) as { client_id: number; client_secret: string | null };
      assert.equal(made.client_secret, null, 'a public client gets no secret');
      const row = () =>
        server.database.db
          .selectFrom('clients')
          .select(['grant_types', 'dpop_bound', 'require_par', 'client_secret_hash'])
          .where('client_id', '=', made.client_id)
          .executeTakeFirstOrThrow();
      assert.deepEqual(await row(), {
        grant_types: '["authorization_code","refresh_token"]',
        dpop_bound: 1,
        require_par: 1,
        client_secret_hash: null,
      });
      const set = await coffer(
        server,
        ...['client', 'set', String(made.client_id), '--dpop-bound', 'false', '--require-par', 'false'],
      );
      assert.equal(set.code, 0, set.stderr);
      const cleared = await coffer(
        server,
        'client',
        'set',
        String(made.client_id),
        '--grant',
        'authorization_code',
      );
      assert.equal(cleared.code, 0, cleared.stderr);
      assert.deepEqual(await row(), {
        grant_types: '["authorization_code"]',
        dpop_bound: 0,
        require_par: 0,
        client_secret_hash: null,
      });
      const unknown = await coffer(server, 'client', 'set', String(made.client_id), '--grant', 'password');
      assert.notEqual(unknown.code, 0);
      assert.match(unknown.stderr, /Unknown grant "password"/);
      const notBoolean = await coffer(server, 'client', 'set', String(made.client_id), '--dpop-bound=yes');
      assert.notEqual(notBoolean.code, 0);
      assert.match(notBoolean.stderr, /--dpop-bound must be true or false/);
      const rotate = await coffer(server, 'client', 'secret-rotate', String(made.client_id));
      assert.notEqual(rotate.code, 0);
      assert.match(rotate.stderr, /public client/);
    });

    test('--dpop-bound and --require-par: bare, negated, true|false, =true|=false, on create and set', async () => {
      const flags = async (id: number) =>
        server.database.db
          .selectFrom('clients')
          .select(['dpop_bound', 'require_par'])
          .where('client_id', '=', id)
          .executeTakeFirstOrThrow();
      const create = async (...spelling: string[]) => {
        const r = await coffer(server, 'client', 'create', '--name', 'Switches', ...spelling, '--json');
        assert.equal(r.code, 0, `create ${spelling.join(' ')}: ${r.stderr}`);
        return JSON.parse(r.stdout).client_id as number;
      };
      for (const [spelling, expected] of [
        [['--dpop-bound', '--require-par'], { dpop_bound: 1, require_par: 1 }],
        [['--dpop-bound', 'true', '--require-par', 'true'], { dpop_bound: 1, require_par: 1 }],
        [['--dpop-bound=true', '--require-par=true'], { dpop_bound: 1, require_par: 1 }],
        [['--dpop-bound', 'false', '--require-par=false'], { dpop_bound: 0, require_par: 0 }],
        [['--no-dpop-bound', '--no-require-par'], { dpop_bound: 0, require_par: 0 }],
        [['--require-par'], { dpop_bound: 0, require_par: 1 }],
        [[], { dpop_bound: 0, require_par: 0 }],
      ] as const) {
        assert.deepEqual(await flags(await create(...spelling)), expected, `create ${spelling.join(' ')}`);
      }

      const id = await create();
      for (const [spelling, expected] of [
        // Bare, before another option: it was "argument is ambiguous".
        [['--dpop-bound', '--require-par'], { dpop_bound: 1, require_par: 1 }],
        [['--no-dpop-bound'], { dpop_bound: 0, require_par: 1 }],
        [['--no-require-par'], { dpop_bound: 0, require_par: 0 }],
        [['--dpop-bound', 'true'], { dpop_bound: 1, require_par: 0 }],
        [['--require-par=true'], { dpop_bound: 1, require_par: 1 }],
        [['--dpop-bound=false', '--require-par', 'false'], { dpop_bound: 0, require_par: 0 }],
        [['--require-par'], { dpop_bound: 0, require_par: 1 }],
        [['--from-email', 'rp@example.org'], { dpop_bound: 0, require_par: 1 }],
      ] as const) {
        const r = await coffer(server, 'client', 'set', String(id), ...spelling, '--json');
        assert.equal(r.code, 0, `set ${spelling.join(' ')}: ${r.stderr}`);
        assert.deepEqual(await flags(id), expected, `set ${spelling.join(' ')}`);
      }

      for (const [spelling, message] of [
        [['--dpop-bound=yes'], /--dpop-bound must be true or false/],
        [['--require-par='], /--require-par must be true or false/],
        [['--dpop-bound', '--no-dpop-bound'], /--dpop-bound and --no-dpop-bound contradict/],
        [['--dpop-bound', 'false', '--dpop-bound'], /--dpop-bound and --no-dpop-bound contradict/],
        [['--no-require-par=false'], /does not take an argument/],
        [['--dpop-bound', 'yes'], /unexpected argument yes/],
      ] as const) {
        for (const command of [
          ['create', '--name', 'Refused'],
          ['set', String(id)],
        ]) {
          const r = await coffer(server, 'client', ...command, ...spelling);
          assert.notEqual(r.code, 0, `${command[0]} ${spelling.join(' ')} succeeded`);
          assert.match(r.stderr, message, `${command[0]} ${spelling.join(' ')}`);
        }
      }
      assert.deepEqual(
        await flags(id),
        { dpop_bound: 0, require_par: 1 },
        'no refused line changed anything',
      );
    });

    test('client set --verifier-metadata: stored for a verifier, refused for any other client', async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'coffer-cli-metadata-'));
      const file = path.join(dir, 'metadata.json');
      await writeFile(file, JSON.stringify({ vp_formats_supported: { ldp_vc: {} } }));
      const create = async (...extra: string[]) =>
        JSON.parse((await coffer(server, 'client', 'create', '--name', 'V', ...extra, '--json')).stdout)
          .client_id as number;
      const verifier = await create('--verifier', '--redirect-uri', 'https://verifier.example/cb');
      const ok = await coffer(
        server,
        'client',
        'set',
        String(verifier),
        '--verifier-metadata',
        file,
        '--json',
      );
      assert.equal(ok.code, 0, ok.stderr);
      const app = await create('--redirect-uri', 'https://app.example/cb');
      const refused = await coffer(server, 'client', 'set', String(app), '--verifier-metadata', file);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /is not a verifier/);
      await rm(dir, { recursive: true, force: true });
    });

    test('client set stores secrets encrypted and the API shows them masked', async () => {
      const master = JSON.parse(
        (await coffer(server, 'client', 'create', '--name', 'M', '--master', '--json')).stdout,
      );
      const child = JSON.parse(
        (
          await coffer(
            server,
            'client',
            'create',
            '--name',
            'C',
            '--parent',
            String(master.client_id),
            '--json',
          )
        ).stdout,
      );
      const set = await coffer(
        server,
        ...[
          'client',
          'set',
          String(child.client_id),
          '--esp-token',
          'SG.secret-esp-9876',
          '--recaptcha-key',
          'rk-5555',
        ],
        ...[
          '--recaptcha-threshold',
          '0.3',
          '--recaptcha-enabled',
          'true',
          '--from-email',
          'no-reply@c.example',
        ],
        ...['--privacy-link', 'https://c.example/privacy', '--json'],
      );
      assert.equal(set.code, 0, set.stderr);
      const read = await server.request('GET', `/v1/sub_client/${child.client_id}`, {
        headers: { 'x-api-token': master.api_token },
      });
      assert.equal(read.body.data.esp_token, '••••9876');
      assert.equal(read.body.data.recaptcha_key, '••••5555');
      assert.equal(read.body.data.recaptcha_threshold, 0.3);
      assert.equal(read.body.data.recaptcha_enabled, true);
      const row = await server.database.db
        .selectFrom('clients')
        .select(['esp_token_sealed', 'recaptcha_key_sealed'])
        .where('client_id', '=', child.client_id)
        .executeTakeFirstOrThrow();
      assert.ok(!row.esp_token_sealed?.includes('secret-esp'));
      assert.ok(!row.recaptcha_key_sealed?.includes('rk-5555'));
    });

    test('token create adds a working token; token revoke stops it at once', async () => {
      const master = JSON.parse(
        (await coffer(server, 'client', 'create', '--name', 'T', '--master', '--json')).stdout,
      );
      const extra = await coffer(server, 'token', 'create', '--client', String(master.client_id), '--json');
      const token = JSON.parse(extra.stdout).api_token;
      assert.equal(
        (await server.request('GET', '/v1/sub_client', { headers: { 'x-api-token': token } })).status,
        200,
      );
      const revoked = await coffer(server, 'token', 'revoke', token, '--json');
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.deepEqual(JSON.parse(revoked.stdout), { revoked: true });
      assert.equal(
        (await server.request('GET', '/v1/sub_client', { headers: { 'x-api-token': token } })).status,
        401,
      );
      // The first token still works.
      assert.equal(
        (await server.request('GET', '/v1/sub_client', { headers: { 'x-api-token': master.api_token } }))
          .status,
        200,
      );
      const again = await coffer(server, 'token', 'revoke', token);
      assert.notEqual(again.code, 0);
    });

    test('client secret-rotate returns a new secret', async () => {
      const master = JSON.parse(
        (await coffer(server, 'client', 'create', '--name', 'R', '--master', '--json')).stdout,
      );
      const rotated = await coffer(server, 'client', 'secret-rotate', String(master.client_id), '--json');
      assert.equal(rotated.code, 0, rotated.stderr);
      const { client_secret } = JSON.parse(rotated.stdout);
      assert.match(client_secret, /^cfr_cs_/);
      assert.notEqual(client_secret, master.client_secret);
    });

    test('migrate --json reports nothing left to apply on a migrated database', async () => {
      const r = await coffer(server, 'migrate', '--json');
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), { applied: [] });
    });

    test('bad command lines fail with a message and a non-zero exit, never a stack trace', async () => {
      const cases: string[][] = [
        [],
        ['frobnicate'],
        ['client', 'create'],
        ['client', 'create', '--name', 'x', '--bogus'],
        ['client', 'create', '--name', 'x', '--parent', 'abc'],
        ['client', 'create', '--name', 'x', '--parent', '999999'],
        ['client', 'create', '--name', 'x', '--master', '--parent', '1'],
        ['client', 'create', '--name', 'x', '--redirect-uri', 'not a uri'],
        ['client', 'set', '999999', '--from-email', 'a@b.example'],
        ['client', 'set', '1', '--recaptcha-threshold', '2'],
        ['client', 'set', '1', '--recaptcha-enabled', 'maybe'],
        ['client', 'set', '1'],
        ['client', 'secret-rotate', '999999'],
        ['token', 'create'],
        ['token', 'create', '--client', '999999'],
        ['token', 'revoke'],
      ];
      for (const args of cases) {
        const r = await coffer(server, ...args);
        assert.notEqual(r.code, 0, `coffer ${args.join(' ')} succeeded`);
        assert.match(r.stderr, /coffer: |Usage/, args.join(' '));
        assert.doesNotMatch(r.stderr, /\n\s+at /, `stack trace for ${args.join(' ')}`);
      }
    });
  });
}
