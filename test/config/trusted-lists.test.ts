import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigError, readConfig } from '../../src/config/config.ts';
import { loadTrustedLists } from '../../src/config/trusted-lists.ts';
import { newListSigner } from '../trust/test-trusted-lists.ts';

/**
 * TRUSTED_LISTS: a JSON file naming each list, its kind and a PEM file of its signer
 * certificates. Every mistake an operator can make stops the start with a ConfigError naming the
 * variable and what is wrong.
 */
describe('TRUSTED_LISTS configuration', () => {
  let dir: string;
  let signerPem: string;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'coffer-tl-config-'));
    signerPem = (await newListSigner()).pem;
    await writeFile(path.join(dir, 'signers.pem'), signerPem);
    await writeFile(path.join(dir, 'empty.pem'), 'no certificate here\n');
  });
  after(() => rm(dir, { recursive: true, force: true }));

  async function load(content: string) {
    const file = path.join(dir, `lists-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(file, content);
    return loadTrustedLists(file);
  }
  async function refusal(content: string): Promise<string> {
    try {
      await load(content);
    } catch (error) {
      assert.ok(error instanceof ConfigError, String(error));
      assert.match(error.message, /TRUSTED_LISTS/);
      return error.message;
    }
    assert.fail('accepted');
  }

  test('the variable is read as a path, and no file means no lists', async () => {
    const config = readConfig({ TRUSTED_LISTS: 'lists.json', NODE_ENV: 'development' });
    assert.equal(config.trustedLists, path.resolve('lists.json'));
    assert.deepEqual(await loadTrustedLists(undefined), []);
  });

  test('a good file: each list with its kind and signer certificates (a PEM path relative to the file)', async () => {
    const lists = await load(
      JSON.stringify([
        { url: 'https://tl.example.eu/lotl.xml', signers: 'signers.pem', kind: 'etsi-119612' },
        { url: 'https://tl.example.eu/pid.jwt', signers: path.join(dir, 'signers.pem'), kind: 'lote-119602' },
      ]),
    );
    assert.deepEqual(
      lists.map((l) => [l.url, l.kind, l.signers.length]),
      [
        ['https://tl.example.eu/lotl.xml', 'etsi-119612', 1],
        ['https://tl.example.eu/pid.jwt', 'lote-119602', 1],
      ],
    );
  });

  test('mistakes are ConfigErrors that say what is wrong', async () => {
    const entry = { url: 'https://tl.example.eu/lotl.xml', signers: 'signers.pem', kind: 'etsi-119612' };
    assert.match(await refusal('{not json'), /is not JSON/);
    assert.match(await refusal('[]'), /non-empty array/);
    assert.match(
      await refusal(JSON.stringify([{ ...entry, kind: 'etsi-119613' }])),
      /kind must be one of etsi-119612, lote-119602/,
    );
    assert.match(
      await refusal(JSON.stringify([{ ...entry, signers: 'missing.pem' }])),
      /signer file .*missing\.pem cannot be read \(ENOENT\)/,
    );
    assert.match(
      await refusal(JSON.stringify([{ ...entry, signers: 'empty.pem' }])),
      /holds no PEM certificate/,
    );
    assert.match(
      await refusal(JSON.stringify([{ ...entry, url: 'http://tl.example.eu/lotl.xml' }])),
      /https URL/,
    );
    assert.match(await refusal(JSON.stringify([entry, entry])), /listed twice/);
    assert.match(
      await refusal(JSON.stringify([{ ...entry, signers: undefined }])),
      /signers must be the path of a PEM file/,
    );
    await assert.rejects(
      loadTrustedLists(path.join(dir, 'absent.json')),
      /TRUSTED_LISTS.*cannot be read \(ENOENT\)/,
    );
  });
});
