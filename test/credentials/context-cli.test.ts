import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { coffer } from '../helpers/cli.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { registerRelyingParty } from '../oidc/flow-helpers.ts';
import { logInUser } from './helpers.ts';
import { createStockIssuer, PERSON_CONTEXT, personCredential } from './stock-issuer.ts';

for (const kind of DATABASE_KINDS) {
  describe(`coffer context add on ${kind}, while the server runs`, () => {
    // jsonld.js caches processed contexts per process, by URL: each server here gets its own URL.
    const CONTEXT_URL = `https://issuer.example/contexts/cli-${kind}/v1`;
    let server: TestServer;
    let file: string;
    before(async () => {
      server = await startTestServer(kind);
      file = path.join(server.testDatabase.dataDir, 'person-v1.jsonld');
      await writeFile(file, JSON.stringify(PERSON_CONTEXT, null, 2));
    });
    after(() => server.close());

    test('a credential using a context is refused until the context is registered, then accepted at once', async () => {
      const rp = await registerRelyingParty(server);
      const user = await logInUser(server, rp, privateKeyToAccount(generatePrivateKey()));
      const { token } = await server.createMaster('Issuer');
      const issuer = await createStockIssuer({ [CONTEXT_URL]: PERSON_CONTEXT });
      const signed = await issuer.issue({
        ...personCredential(issuer.did, user.did),
        '@context': ['https://www.w3.org/ns/credentials/v2', CONTEXT_URL],
      });
      const store = () =>
        server.request('POST', '/v1/vc/issuer/store', {
          headers: { 'x-api-token': token },
          body: { vc: signed },
        });

      const before = await store();
      assert.equal(before.status, 422);
      assert.match(
        before.body.error_description,
        /does not know \(an operator registers it with coffer context add\)/,
      );

      const added = await coffer(server, 'context', 'add', '--url', CONTEXT_URL, '--file', file, '--json');
      assert.equal(added.code, 0, added.stderr);
      assert.equal(JSON.parse(added.stdout).registered, true);
      assert.equal((await store()).status, 201);

      const again = await coffer(server, 'context', 'add', '--url', CONTEXT_URL, '--file', file);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /registered already with the same content/);
    });

    test('a registered context never changes; bundled URLs, bad files and bad contexts are refused', async () => {
      const changed = path.join(server.testDatabase.dataDir, 'changed.jsonld');
      await writeFile(changed, JSON.stringify({ '@context': { first_name: 'https://evil.example/name' } }));
      const conflict = await coffer(server, 'context', 'add', '--url', CONTEXT_URL, '--file', changed);
      assert.equal(conflict.code, 1);
      assert.match(conflict.stderr, /registered already with other content/);

      const bundled = await coffer(
        server,
        'context',
        'add',
        '--url',
        'https://www.w3.org/ns/credentials/v2',
        '--file',
        file,
      );
      assert.equal(bundled.code, 1);
      assert.match(bundled.stderr, /bundled contexts/);

      const notJson = path.join(server.testDatabase.dataDir, 'not.json');
      await writeFile(notJson, 'not json');
      const bad = await coffer(server, 'context', 'add', '--url', 'https://x.example/a', '--file', notJson);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /not JSON/);

      const broken = path.join(server.testDatabase.dataDir, 'broken.jsonld');
      await writeFile(broken, JSON.stringify({ '@context': { '@vocab': 5 } }));
      const invalid = await coffer(
        server,
        'context',
        'add',
        '--url',
        'https://x.example/b',
        '--file',
        broken,
      );
      assert.equal(invalid.code, 1);
      assert.match(invalid.stderr, /cannot be used/);

      const missing = await coffer(server, 'context', 'add', '--url', 'https://x.example/c');
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /--file is required/);
      const nofile = await coffer(
        server,
        'context',
        'add',
        '--url',
        'https://x.example/c',
        '--file',
        '/nonexistent',
      );
      assert.equal(nofile.code, 2);
      const relative = await coffer(server, 'context', 'add', '--url', 'ctx/v1', '--file', file);
      assert.equal(relative.code, 1);
    });
  });
}
