import assert from 'node:assert/strict';
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { ConfigError, readConfig } from '../../src/config/config.ts';
import { loadMasterKey } from '../../src/config/master-key.ts';

const KEY = Buffer.alloc(32, 7).toString('base64');

function refusal(env: Record<string, string>): ConfigError {
  try {
    readConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error;
  }
  assert.fail('readConfig accepted a bad configuration');
}

test('defaults run a development server on SQLite in ./data', () => {
  const config = readConfig({});
  assert.equal(config.environment, 'development');
  assert.equal(config.port, 8080);
  assert.equal(config.publicUrl, 'http://localhost:8080');
  assert.equal(config.dataDir, path.resolve('data'));
  assert.equal(config.databaseUrl, undefined);
  assert.equal(config.storage, 'fs');
  assert.equal(config.accessTokenTtl, 3600);
  assert.equal(config.allowPrivateTargets, false);
});

test('every malformed variable is refused with its name in the message', () => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ PUBLIC_URL: 'not a url' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'ftp://x.example' }, 'PUBLIC_URL'],
    [{ DATABASE_URL: 'mysql://localhost/x' }, 'DATABASE_URL'],
    [{ STORAGE: 's3' }, 'STORAGE'],
    [{ STORAGE: 'kubo' }, 'KUBO_API_URL'],
    [{ MASTER_KEY: 'c2hvcnQ=' }, 'MASTER_KEY'],
    [{ MASTER_KEY: 'not base64 at all!' }, 'MASTER_KEY'],
    [{ SMTP_URL: 'http://mail.example' }, 'SMTP_URL'],
    [{ ACCESS_TOKEN_TTL: '10' }, 'ACCESS_TOKEN_TTL'],
    [{ ALLOW_PRIVATE_TARGETS: 'yes' }, 'ALLOW_PRIVATE_TARGETS'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ LOG_FORMAT: 'yaml' }, 'LOG_FORMAT'],
    [{ NODE_ENV: 'staging' }, 'NODE_ENV'],
  ];
  for (const [env, variable] of cases) {
    const error = refusal(env);
    assert.equal(error.variable, variable, JSON.stringify(env));
    assert.match(error.message, new RegExp(`^${variable}: `));
  }
});

test('production refuses to start without MASTER_KEY, with an http: public URL, or with private targets', () => {
  assert.equal(refusal({ NODE_ENV: 'production', PUBLIC_URL: 'https://id.example' }).variable, 'MASTER_KEY');
  assert.equal(
    refusal({ NODE_ENV: 'production', MASTER_KEY: KEY, PUBLIC_URL: 'http://id.example' }).variable,
    'PUBLIC_URL',
  );
  assert.equal(refusal({ NODE_ENV: 'production', MASTER_KEY: KEY }).variable, 'PUBLIC_URL');
  assert.equal(
    refusal({
      NODE_ENV: 'production',
      MASTER_KEY: KEY,
      PUBLIC_URL: 'https://id.example',
      ALLOW_PRIVATE_TARGETS: 'true',
    }).variable,
    'ALLOW_PRIVATE_TARGETS',
  );
  const ok = readConfig({ NODE_ENV: 'production', MASTER_KEY: KEY, PUBLIC_URL: 'https://id.example/' });
  assert.equal(ok.environment, 'production');
  assert.equal(ok.publicUrl, 'https://id.example');
});

test('without MASTER_KEY a key is generated into DATA_DIR once, private to its owner, and reused', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'coffer-key-'));
  const first = await loadMasterKey(undefined, dir);
  assert.equal(first.generated, true);
  assert.equal(first.key.length, 32);
  assert.equal((await stat(first.file!)).mode & 0o777, 0o600);
  const second = await loadMasterKey(undefined, dir);
  assert.equal(second.generated, false);
  assert.deepEqual(second.key, first.key);
  assert.equal(Buffer.from((await readFile(first.file!, 'utf8')).trim(), 'base64').length, 32);
  const given = await loadMasterKey(KEY, dir);
  assert.deepEqual(given.key, Buffer.alloc(32, 7));
});

test("AUDIT_TRAIL=off, the benchmarks' switch, is refused in production and takes only on or off", () => {
  assert.equal(readConfig({}).auditTrail, true, 'the trail is on unless told otherwise');
  assert.equal(readConfig({ AUDIT_TRAIL: 'off' }).auditTrail, false);
  assert.equal(refusal({ AUDIT_TRAIL: 'no' }).variable, 'AUDIT_TRAIL');
  assert.equal(
    refusal({ NODE_ENV: 'production', MASTER_KEY: KEY, PUBLIC_URL: 'https://id.example', AUDIT_TRAIL: 'off' })
      .variable,
    'AUDIT_TRAIL',
  );
});
