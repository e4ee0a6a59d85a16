import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type BenchDatabase, type BenchServer, startBenchServer } from './server.ts';
import { percentile } from './timing.ts';

const run = promisify(execFile);
const BIN = path.resolve(import.meta.dirname, '../bin/coffer.js');

/**
 * `--only=data-ops`: what an operator and a person do with data over the years (issue #33), on a
 * server process holding `users` distinct accounts (each a profile block, a sealed holder key and
 * an e-mail index): erasing a quarter of them over HTTP at 10 at a time, then `coffer backup`,
 * `coffer storage gc --dry-run`, `coffer master-key rotate --dry-run` and the rotation itself, each
 * timed from the command line while the server runs.
 */
export async function runDataOperationsBenchmark(options: {
  database: BenchDatabase;
  users: number;
}): Promise<string> {
  const server = await startBenchServer(options.database);
  const work = await mkdtemp(path.join(tmpdir(), 'coffer-data-ops-'));
  try {
    const master = (await server.coffer('client', 'create', '--name', 'Bench', '--master')) as {
      api_token: string;
    };
    const api = { 'x-api-token': master.api_token, 'content-type': 'application/json' };
    const ids: number[] = [];
    const created = await timed(async () => {
      await inParallel(options.users, 10, async (i) => {
        const response = await fetch(`${server.url}/v1/user/create`, {
          method: 'POST',
          headers: api,
          body: JSON.stringify({
            profile: {
              email_address: `p${i}.${randomBytes(4).toString('hex')}@bench.example`,
              first_name: 'Ada',
              last_name: 'Lovelace',
            },
          }),
        });
        if (response.status !== 201) throw new Error(`user create answered ${response.status}`);
        ids.push(((await response.json()) as { data: { user_id: number } }).data.user_id);
      });
    });

    const erased = ids.slice(0, Math.floor(ids.length / 4));
    const latencies: number[] = [];
    const cpuBefore = await server.cpuMicros();
    const erasure = await timed(() =>
      inParallel(erased.length, 10, async (i) => {
        const start = performance.now();
        const response = await fetch(`${server.url}/v1/user/${erased[i]}`, {
          method: 'DELETE',
          headers: { 'x-api-token': master.api_token },
        });
        if (response.status !== 204) throw new Error(`erasure answered ${response.status}`);
        latencies.push(performance.now() - start);
      }),
    );
    const erasureCpu = (await server.cpuMicros()) - cpuBefore;
    latencies.sort((a, b) => a - b);

    const cli = (env: Record<string, string>, ...args: string[]) => timedCli(server, env, ...args);
    const archive = path.join(work, 'bench.backup');
    const backup = await cli(
      {},
      'backup',
      '--out',
      archive,
      ...(options.database === 'postgres' ? ['--blocks-only'] : []),
    );
    const archiveBytes = (await stat(archive)).size;
    const gc = await cli({}, 'storage', 'gc', '--dry-run');
    const newKey = randomBytes(32).toString('base64');
    const keyFile = path.join(work, 'new.key');
    await writeFile(keyFile, `${newKey}\n`, { mode: 0o600 });
    // The procedure with MASTER_KEY: the new key current, the old one previous.
    const ring = { MASTER_KEY: newKey, MASTER_KEY_PREVIOUS: server.env['MASTER_KEY']! };
    const dry = await cli(ring, 'master-key', 'rotate', '--new-key-file', keyFile, '--dry-run');
    const rotation = await cli(ring, 'master-key', 'rotate', '--new-key-file', keyFile);
    const rotated = rotation.json as {
      blocks: { reencrypted: number };
      fields: { reencrypted: number };
      hashes: { rewritten: number };
    };

    const rows = [
      ['step', 'count', 'wall', 'rate or detail'],
      ['user create (10 at a time)', String(ids.length), ms(created), `${rate(ids.length, created)}/s`],
      [
        'erase an account (10 at a time)',
        String(erased.length),
        ms(erasure),
        `${rate(erased.length, erasure)}/s, p50 ${percentile(latencies, 0.5).toFixed(1)} ms, p99 ${percentile(latencies, 0.99).toFixed(1)} ms, server CPU ${(erasureCpu / erased.length / 1000).toFixed(2)} ms each`,
      ],
      [
        `coffer backup${options.database === 'postgres' ? ' --blocks-only' : ''}`,
        String(backup.json['blocks']),
        ms(backup.ms),
        `${(archiveBytes / 1024 / 1024).toFixed(1)} MiB archive`,
      ],
      ['coffer storage gc --dry-run', String(gc.json['removed']), ms(gc.ms), 'blocks it would remove'],
      ['coffer master-key rotate --dry-run', String(dry.json['remaining']), ms(dry.ms), 'values to move'],
      [
        'coffer master-key rotate',
        String(rotated.blocks.reencrypted + rotated.fields.reencrypted),
        ms(rotation.ms),
        `${rotated.blocks.reencrypted} blocks, ${rotated.fields.reencrypted} sealed values, ${rotated.hashes.rewritten} hashes; remaining ${rotation.json['remaining']}`,
      ],
    ];
    const width = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
    const table = rows.map((r) => `| ${r.map((cell, c) => cell.padEnd(width[c]!)).join(' | ')} |`);
    table.splice(1, 0, `| ${width.map((w) => '-'.repeat(w)).join(' | ')} |`);
    return `data operations on ${options.database}, ${options.users} accounts (wall times include the CLI's start, about 1 s)\n${table.join('\n')}`;
  } finally {
    await server.stop();
    await rm(work, { recursive: true, force: true });
  }
}

/** Runs the admin CLI against the server's configuration (plus `env`), timed from the command line. */
export async function timedCli(server: BenchServer, env: Record<string, string>, ...args: string[]) {
  const start = performance.now();
  const { stdout } = await run(process.execPath, [BIN, ...args, '--json'], {
    env: { ...process.env, ...server.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  return { ms: performance.now() - start, json: JSON.parse(stdout) as Record<string, unknown> };
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

async function inParallel(count: number, lanes: number, each: (index: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < count) await each(next++);
    }),
  );
}

const ms = (value: number) => `${value.toFixed(0)} ms`;
const rate = (count: number, wallMs: number) => ((count / wallMs) * 1000).toFixed(0);
