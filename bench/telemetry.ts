import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runIssuerBenchmark } from './issuer.ts';
import { measure } from './load.ts';
import { serverCpus } from './pinning.ts';
import { tokenExchangeForm } from './scenarios/oidc.ts';
import { type BenchDatabase, startBenchServer } from './server.ts';
import { measureSpanCost } from './span-cost.ts';
import { runVerifierBenchmark } from './verifier.ts';

/**
 * What the audit trail and telemetry cost (issue 42): the token exchange, a pre-authorized
 * issuance and a verifier round trip (dc+sd-jwt), each without the audit trail, with it (the
 * default), and with tracing on (every span, and 5 % sampled), side by side in one run. "On" exports
 * every span over OTLP/HTTP to a receiver in this process that reads and drops them, so the cost
 * includes making, batching and sending spans. Throughput at `connections`, server CPU per act.
 */
interface Figures {
  perSecond: number;
  cpuMs: number;
}

type Variant = { name: string; env: (receiver: string) => Record<string, string> };

const TRACING = (receiver: string) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver });

/** The first is the baseline: no audit trail (AUDIT_TRAIL=off, development only) and no tracing. */
const VARIANTS: Variant[] = [
  { name: 'no audit, no tracing', env: () => ({ AUDIT_TRAIL: 'off' }) },
  { name: 'audit (default)', env: () => ({}) },
  { name: 'audit + tracing', env: TRACING },
  {
    name: 'audit + tracing 5 % sampled',
    env: (receiver) => ({
      ...TRACING(receiver),
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.05',
    }),
  },
];

/** An OTLP/HTTP endpoint that takes spans and drops them; counts what it got. */
async function startSpanSink() {
  let bytes = 0;
  const server = createServer((request, response) => {
    request.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bytes: () => bytes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function tokenFigures(
  database: BenchDatabase,
  env: Record<string, string>,
  connections: number,
  duration: number,
): Promise<Figures> {
  const server = await startBenchServer(database, env);
  try {
    const request = await tokenExchangeForm.prepare(server);
    const url = server.url + request.path;
    await measure({ ...request, url, connections, duration: 2 });
    const before = await server.cpuMicros();
    const result = await measure({ ...request, url, connections, duration });
    return {
      perSecond: result.requestsPerSecond,
      cpuMs: ((await server.cpuMicros()) - before) / 1000 / Math.max(result.total, 1),
    };
  } finally {
    await server.stop();
  }
}

/** The middle value: with rounds interleaved, one disturbed round does not decide the figure. */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Each variant's figures for the three workloads, in one round. */
async function measureVariant(
  database: BenchDatabase,
  env: Record<string, string>,
  connections: number,
  duration: number,
): Promise<Figures[]> {
  const issuer = await runIssuerBenchmark({
    database,
    duration,
    connections: [connections],
    extraEnv: env,
    steps: false,
  });
  const verifier = await runVerifierBenchmark({
    database,
    duration,
    connections: [connections],
    extraEnv: env,
  });
  return [await tokenFigures(database, env, connections, duration), issuer.rows[0]!, verifier.rows[0]!];
}

const WORKLOADS = [
  'token exchange',
  'pre-authorized issuance (dc+sd-jwt)',
  'verification round trip (dc+sd-jwt)',
];

/**
 * Rounds (BENCH_TELEMETRY_ROUNDS, default 3) run every variant once, in an order rotated per round,
 * so that a drift of the machine (a PostgreSQL checkpoint, another process) falls on each variant in
 * turn; each figure is the median of its rounds, with the range beside it. A single pass swung by
 * ±40 % between variants that write the same rows.
 */
export async function runTelemetryBenchmark(options: {
  databases: BenchDatabase[];
  duration: number;
  connections: number;
}): Promise<string> {
  process.env['BENCH_ISSUER_PEER'] = '0';
  process.env['BENCH_ISSUER_FORMATS'] = 'dc+sd-jwt';
  process.env['BENCH_VERIFIER_FORMATS'] = 'dc+sd-jwt';
  const rounds = Math.max(1, Number(process.env['BENCH_TELEMETRY_ROUNDS'] ?? 3));
  const sink = await startSpanSink();
  const rows: string[] = [];
  let spanMicros = Number.NaN;
  try {
    for (const database of options.databases) {
      const figures = new Map<string, Figures[][]>(VARIANTS.map((v) => [v.name, []]));
      for (let round = 0; round < rounds; round++) {
        const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length]!);
        for (const variant of order) {
          const { connections, duration } = options;
          figures
            .get(variant.name)!
            .push(await measureVariant(database, variant.env(sink.url), connections, duration));
          console.error(`done: telemetry round ${round + 1}/${rounds} ${variant.name} ${database}`);
        }
      }
      WORKLOADS.forEach((workload, i) => {
        const of = (name: string) => figures.get(name)!.map((round) => round[i]!);
        const baseline = of(VARIANTS[0]!.name);
        for (const variant of VARIANTS) {
          const measured = of(variant.name);
          // One figure's median, range of the rounds and change against the baseline's median.
          const column = (pick: (f: Figures) => number, digits: number) => {
            const values = measured.map(pick);
            const value = median(values);
            const base = median(baseline.map(pick));
            const change = ((value - base) / base) * 100;
            return [
              value.toFixed(digits),
              `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`,
              variant === VARIANTS[0] ? '—' : `${change >= 0 ? '+' : ''}${change.toFixed(1)} %`,
            ];
          };
          const [perSecond, range, versus] = column((f) => f.perSecond, 1);
          const [cpu, cpuRange, cpuVersus] = column((f) => f.cpuMs, 3);
          rows.push(
            `| ${workload} | ${database} | ${options.connections} | ${variant.name} | ${perSecond} | ${range} | ${versus} | ${cpu} | ${cpuRange} | ${cpuVersus} |`,
          );
        }
      });
    }
    spanMicros = await measureSpanCost(sink.url);
  } finally {
    await sink.close();
  }
  return [
    `${rounds} interleaved rounds; medians, with the range of the rounds`,
    '',
    `server on cores ${serverCpus() ?? 'shared with the load generator'}`,
    '',
    '| workload | db | concurrent | variant | per second | range /s | throughput vs no audit, no tracing | server CPU ms each | range ms | CPU vs no audit, no tracing |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    `spans exported to the sink: ${(sink.bytes() / 1024 / 1024).toFixed(1)} MiB of OTLP JSON`,
    `the OpenTelemetry SDK alone (bench/span-cost.ts, in this process): ${spanMicros.toFixed(1)} µs of CPU per span made, batched and exported`,
  ].join('\n');
}
