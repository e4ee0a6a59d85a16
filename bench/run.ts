import { parseArgs } from 'node:util';
import { measure } from './load.ts';
import { pinClientSide } from './pinning.ts';
import type { Scenario } from './scenario.ts';
import {
  credentialList,
  credentialProof10,
  credentialProof50,
  credentialStore,
  mdocStore,
  sdJwtStore,
} from './scenarios/credentials.ts';
import { tokenExchangeForm, tokenExchangeJson, userinfo } from './scenarios/oidc.ts';
import { subClientList } from './scenarios/subclients.ts';
import { userCreate } from './scenarios/users.ts';
import { type BenchDatabase, startBenchServer } from './server.ts';

/**
 * `npm run bench [-- --only=NAME,… --db=sqlite,postgres --duration=10 --connections=10,50]`
 * Every scenario runs against a fresh server process on 127.0.0.1 and is bounded in time.
 * `--only=curve` compares the two curve backends (bench/curve.ts), `--only=bbs` runs the BBS
 * micro-benchmark (bench/bbs.ts) and `--only=bbs-2023` the credential-level one
 * (bench/bbs-2023.ts): in process, no server, each its own table, the last two beside the stock
 * Digital Bazaar stack. BBS_BACKEND=wasm|native picks the curve backend of every benchmark.
 * `--only=data-ops` times erasure, backup, storage collection and master-key rotation over
 * BENCH_DATA_USERS accounts (2,000; bench/data-operations.ts). `--only=scale [--sizes=1e3,1e5,1e6]`
 * grows one server per database through those sizes and tabulates every per-request cost against
 * them (bench/scale.ts; BENCH_SCALE_SIZES when --sizes is absent).
 */
const SCENARIOS: Record<string, Scenario> = {
  subclients: subClientList,
  users: userCreate,
  'token-json': tokenExchangeJson,
  'token-form': tokenExchangeForm,
  userinfo,
  'vc-store': credentialStore,
  'vc-store-sd-jwt': sdJwtStore,
  'vc-store-mdoc': mdocStore,
  'vc-list': credentialList,
  'vc-proof-10': credentialProof10,
  'vc-proof-50': credentialProof50,
};

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    db: { type: 'string', default: 'sqlite,postgres' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10,50' },
    warmup: { type: 'string', default: '2' },
    sizes: { type: 'string' },
  },
});

// BENCH_CLIENT_CPUS / BENCH_SERVER_CPUS (bench/pinning.ts): load generator and server on separate cores.
process.once('exit', pinClientSide());

// Not the per-scenario HTTP table: the first two run in this process, oid4vp and oid4vci their own
// server beside a verifier or an issuer.
const IN_PROCESS = [
  'curve',
  'bbs',
  'bbs-2023',
  'proof-latency',
  'oid4vp',
  'verifier',
  'oid4vci',
  'refresh-dpop',
  'issuer',
  'data-ops',
  'telemetry',
  'scale',
];
// `scale` seeds up to 10⁶ credentials: only when asked for by name.
const names = values.only
  ? values.only.split(',')
  : [...IN_PROCESS.filter((n) => n !== 'scale'), ...Object.keys(SCENARIOS)];
// Loaded only when asked for: they bring the WebAssembly curve backend and the stock library.
if (names.includes('curve')) {
  const { runCurveBenchmark } = await import('./curve.ts');
  console.log(`${await runCurveBenchmark({ iterations: 200, warmup: 20 })}\n`);
}
if (names.includes('bbs')) {
  const { runBbsBenchmark } = await import('./bbs.ts');
  console.log(`${await runBbsBenchmark()}\n`);
}
if (names.includes('bbs-2023')) {
  const { runBbs2023Benchmark } = await import('./bbs-2023.ts');
  console.log(`${await runBbs2023Benchmark({ iterations: 60, stockIterations: 15 })}\n`);
}
const databases = values.db!.split(',') as BenchDatabase[];
if (names.includes('proof-latency')) {
  const { runProofLatencyBenchmark } = await import('./proof-latency.ts');
  for (const database of databases) {
    console.log(
      `${await runProofLatencyBenchmark({
        database,
        requests: 400,
        distinctRequests: Number(process.env['BENCH_DISTINCT_PROOFS'] ?? 200),
        stockIterations: 15,
      })}\n`,
    );
  }
}
const duration = Number(values.duration);
const warmup = Number(values.warmup);
const connectionCounts = values.connections!.split(',').map(Number);
if (names.includes('oid4vp')) {
  const { runOid4vpBenchmark } = await import('./oid4vp.ts');
  for (const database of databases) {
    const result = await runOid4vpBenchmark({
      database,
      duration,
      connections: [...new Set([1, ...connectionCounts])],
    });
    console.log(`${result.table}\nserver peak RSS: ${result.peakRssMiB.toFixed(0)} MiB\n`);
  }
}
if (names.includes('verifier')) {
  const { runVerifierBenchmark } = await import('./verifier.ts');
  for (const database of databases) {
    const result = await runVerifierBenchmark({
      database,
      duration,
      connections: [...new Set([1, ...connectionCounts])],
    });
    console.log(`${result.table}\nserver peak RSS: ${result.peakRssMiB.toFixed(0)} MiB\n`);
  }
}
if (names.includes('oid4vci')) {
  const { runOid4vciBenchmark } = await import('./oid4vci.ts');
  for (const database of databases) {
    const result = await runOid4vciBenchmark({
      database,
      duration,
      connections: [...new Set([1, ...connectionCounts])],
    });
    console.log(`${result.table}\nserver peak RSS: ${result.peakRssMiB.toFixed(0)} MiB\n`);
  }
}

if (names.includes('data-ops')) {
  const { runDataOperationsBenchmark } = await import('./data-operations.ts');
  const users = Number(process.env['BENCH_DATA_USERS'] ?? 2000);
  for (const database of databases) console.log(`${await runDataOperationsBenchmark({ database, users })}\n`);
}

if (names.includes('scale')) {
  const { parseSizes, runScaleBenchmark } = await import('./scale.ts');
  const sizes = parseSizes(values.sizes ?? process.env['BENCH_SCALE_SIZES'] ?? '1e3,1e5,1e6');
  for (const database of databases)
    console.log(`${await runScaleBenchmark({ database, sizes, duration })}\n`);
}

if (names.includes('issuer')) {
  const { runIssuerBenchmark } = await import('./issuer.ts');
  for (const database of databases) {
    const result = await runIssuerBenchmark({
      database,
      duration,
      connections: [...new Set([1, ...connectionCounts])],
    });
    console.log(`${result.table}\nCoffer server peak RSS: ${result.peakRssMiB.toFixed(0)} MiB\n`);
  }
}

if (names.includes('telemetry')) {
  const { runTelemetryBenchmark } = await import('./telemetry.ts');
  console.log(
    `${await runTelemetryBenchmark({ databases, duration, connections: Math.max(...connectionCounts) })}\n`,
  );
}

if (names.includes('refresh-dpop')) {
  const { runRefreshDpopBenchmark } = await import('./refresh-dpop.ts');
  const postgresUrl = process.env['BENCH_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
  const table = await runRefreshDpopBenchmark({
    databaseUrls: databases.map((d) => (d === 'postgres' ? postgresUrl : undefined)),
    duration,
    connections: connectionCounts,
    warmup,
  });
  console.log(`${table}\n`);
}

const rows: string[][] = [];
let repeatedRows = 0;
const header = [
  'scenario',
  'db',
  'conn',
  'req/s',
  'p50 ms',
  'p99 ms',
  'max ms',
  'non-2xx',
  'errors',
  'server CPU µs/req',
  'RSS MiB (peak)',
];

for (const name of names.filter((n) => !IN_PROCESS.includes(n))) {
  const scenario = SCENARIOS[name];
  if (!scenario) throw new Error(`unknown scenario ${name}; known: ${Object.keys(SCENARIOS).join(', ')}`);
  for (const database of databases) {
    const server = await startBenchServer(database);
    try {
      const request = await scenario.prepare(server);
      const url = server.url + request.path;
      if (warmup > 0) await measure({ ...request, url, connections: 10, duration: warmup });
      for (const connections of connectionCounts) {
        const cpuBefore = await server.cpuMicros();
        const repeatsBefore = request.repeats?.() ?? 0;
        const r = await measure({ ...request, url, connections, duration });
        const repeated = (request.repeats?.() ?? 0) > repeatsBefore;
        if (repeated) repeatedRows++;
        const cpuPerRequest = ((await server.cpuMicros()) - cpuBefore) / Math.max(r.total, 1);
        rows.push([
          repeated ? `${scenario.name} (repeats†)` : scenario.name,
          database,
          String(connections),
          r.requestsPerSecond.toFixed(0),
          r.p50.toFixed(1),
          r.p99.toFixed(1),
          r.max.toFixed(1),
          String(r.non2xx),
          String(r.errors),
          cpuPerRequest.toFixed(0),
          `${(await server.rssMiB()).toFixed(0)} (${(await server.peakRssMiB()).toFixed(0)})`,
        ]);
        console.error(
          `done: ${scenario.name} ${database} c=${connections}: ${r.requestsPerSecond.toFixed(0)} req/s`,
        );
      }
      console.error(`target for ${scenario.name}: ${scenario.target}`);
    } finally {
      await server.stop();
    }
  }
}

const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
if (rows.length > 0) {
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of rows) console.log(line(row));
  if (repeatedRows > 0)
    console.log(
      '\n† the prepared credentials ran out during this row, so part of it re-stored known credentials (the idempotent path, no proof check); raise BENCH_CREDENTIALS for a pure figure',
    );
}
