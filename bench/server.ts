import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '../test/helpers/free-port.ts';
import { onServerCpus } from './pinning.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const run = promisify(execFile);

export type BenchDatabase = 'sqlite' | 'postgres';

export interface BenchServer {
  url: string;
  env: Record<string, string>;
  pid: number;
  /** Runs the real admin CLI against this server's configuration. */
  coffer(...args: string[]): Promise<unknown>;
  /** Peak resident set size of the server process so far, in MiB (VmHWM). */
  peakRssMiB(): Promise<number>;
  rssMiB(): Promise<number>;
  /** CPU time (user + system) the server process has used so far, in microseconds. */
  cpuMicros(): Promise<number>;
  stop(): Promise<void>;
}

async function statusField(pid: number, field: string): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = status.match(new RegExp(`${field}:\\s+(\\d+) kB`));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const CLOCK_TICKS = 100;

/** utime + stime of a process (fields 14 and 15 of /proc/<pid>/stat, after the command name). */
async function cpuMicros(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS) * 1e6;
}

/** Starts `node src/main.ts` as its own process on 127.0.0.1, as an operator would run it. */
export async function startBenchServer(
  database: BenchDatabase,
  extraEnv: Record<string, string> = {},
): Promise<BenchServer> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'coffer-bench-'));
  const port = await freePort();
  let schema: string | undefined;
  const env: Record<string, string> = {
    NODE_ENV: 'development',
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    MASTER_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
    // The limiter stays on, as in production, with a ceiling the benchmark never reaches.
    API_RATE_LIMIT: '100000000',
    ...extraEnv,
  };
  if (database === 'postgres') {
    const base = process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
    schema = `coffer_bench_${randomBytes(5).toString('hex')}`;
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    const url = new URL(base);
    url.searchParams.set('options', `-c search_path=${schema}`);
    env['DATABASE_URL'] = url.toString();
  }
  // BENCH_CPU_PROFILE=DIR writes a V8 CPU profile of the server's main thread into DIR at exit.
  const profile = process.env['BENCH_CPU_PROFILE']
    ? ['--cpu-prof', '--cpu-prof-interval=250', `--cpu-prof-dir=${process.env['BENCH_CPU_PROFILE']}`]
    : [];
  const [command, args] = onServerCpus(process.execPath, [...profile, path.join(ROOT, 'src/main.ts')]);
  const child: ChildProcess = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {}
    if (child.exitCode !== null || Date.now() > deadline) throw new Error('the Coffer server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  const pid = child.pid!;
  return {
    url,
    env,
    pid,
    async coffer(...args) {
      const { stdout } = await run(process.execPath, [path.join(ROOT, 'bin/coffer.js'), ...args, '--json'], {
        env: { ...process.env, ...env },
      });
      return JSON.parse(stdout);
    },
    peakRssMiB: () => statusField(pid, 'VmHWM'),
    rssMiB: () => statusField(pid, 'VmRSS'),
    cpuMicros: () => cpuMicros(pid),
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      if (schema) {
        const admin = new pg.Client({
          connectionString: process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test',
        });
        await admin.connect();
        await admin.query(`drop schema if exists ${schema} cascade`);
        await admin.end();
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
