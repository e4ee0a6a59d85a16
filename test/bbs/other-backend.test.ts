/**
 * Every test that runs BBS, on the curve backend this run did not choose: `npm test` runs the
 * suite once on the backend curve.ts picks (native when the addon is built), and this file runs
 * the BBS tests again in a child `node --test` with BBS_BACKEND set to the other one, so both
 * backends reproduce the IETF fixtures and the W3C bbs-2023 vectors byte for byte, and carry the
 * ldp_vc format and the credential store, in every run. Without a built addon the native run is
 * skipped, and says why.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { curveChoice } from '../../src/bbs/curve.ts';
import type { CurveBackendName } from '../../src/bbs/curve-backend.ts';
import { loadNativeCurve } from '../../src/bbs/curve-native.ts';

const RERUN = 'COFFER_TEST_OTHER_BACKEND';
const root = path.resolve(import.meta.dirname, '../..');

/** The tests that run BBS: the core's, the ldp_vc format's, and the store's. */
function bbsTestFiles(): string[] {
  const inFolder = (folder: string, except: string[] = []) =>
    readdirSync(path.join(root, folder))
      .filter((name) => name.endsWith('.test.ts') && !except.includes(name))
      .sort()
      .map((name) => `${folder}/${name}`);
  return [
    // backends.test.ts already holds both backends; this file would run itself.
    ...inFolder('test/bbs', ['backends.test.ts', 'other-backend.test.ts']),
    ...inFolder('test/formats/ldp-vc'),
    'test/credentials/credentials.test.ts',
  ];
}

const other: CurveBackendName = curveChoice.name === 'native' ? 'wasm' : 'native';
const nativeMissing = other === 'native' ? loadNativeCurve() : undefined;
const skip =
  process.env[RERUN] === '1'
    ? 'this is the run on the other backend'
    : nativeMissing !== undefined && !nativeMissing.ok
      ? `the native backend is not available: ${nativeMissing.reason}`
      : false;

test(`the BBS tests pass on the ${other} backend too`, { skip, timeout: 10 * 60 * 1000 }, () => {
  const env: NodeJS.ProcessEnv = { ...process.env, BBS_BACKEND: other, [RERUN]: '1' };
  // Set by the parent test runner for its own children; a nested runner must not see it.
  delete env['NODE_TEST_CONTEXT'];
  const files = bbsTestFiles();
  const run = spawnSync(
    process.execPath,
    ['--test', '--test-concurrency=1', '--test-reporter=spec', ...files],
    { cwd: root, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const output = `${run.stdout}${run.stderr}`;
  const count = (name: string) => Number(output.match(new RegExp(`^ℹ ${name} (\\d+)$`, 'm'))?.[1] ?? NaN);
  const failures = output
    .split('\n')
    .filter((line) => line.includes('✖'))
    .slice(0, 40)
    .join('\n');
  assert.equal(
    run.status,
    0,
    `BBS_BACKEND=${other} node --test ${files.join(' ')} failed:\n${failures || output.slice(-4000)}`,
  );
  assert.equal(count('fail'), 0);
  // A run that found no tests would pass too: there must be as many as the files hold.
  assert.ok(count('pass') > 100, `only ${count('pass')} tests passed on ${other}`);
});
