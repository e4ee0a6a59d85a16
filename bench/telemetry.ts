import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cofferTarget, preAuthorizedIssuance, proofKeys, WARM_UP_ISSUANCES } from './issuer.ts';
import { measure } from './load.ts';
import { serverCpus } from './pinning.ts';
import { tokenExchangeForm } from './scenarios/oidc.ts';
import { type BenchDatabase, type BenchServer, startBenchServer } from './server.ts';
import { measureSpanCost, measureUnsampledRequestCost } from './span-cost.ts';
import { closedLoop, WARM_UP_SECONDS } from './timing.ts';
import { prepareVerifier, sdJwtKind } from './verifier.ts';

/**
 * What the audit trail and telemetry cost (issue 42): the token exchange, a pre-authorized
 * issuance and a verifier round trip (dc+sd-jwt), each without the audit trail, with it (the
 * default), and with tracing on (every span, and 5 % sampled), side by side in one run. "On" exports
 * spans over OTLP/HTTP to a receiver in this process that reads and drops them, so the cost
 * includes making, batching and sending spans.
 *
 * For each workload and group (GROUPS), the servers of every variant (BENCH_TELEMETRY_PROCESSES
 * each) run at once, warmed, and the load goes to one at a time in short slices, the variants in
 * turn (BENCH_TELEMETRY_ROUNDS turns, `duration` seconds per variant in all). Measured one after
 * another, minutes apart, the same variant's CPU per act swung by ±20 % on a shared host; in
 * slices seconds apart, every variant meets the same machine. A server's CPU per act is its
 * process's CPU over the whole sliced period (so spans it exports after its slice count) over the
 * acts of its slices; idle, a server spends next to nothing.
 *
 * The turns follow a balanced Latin square: every variant comes right after every other one
 * equally often. In a plain rotation the sampled variant always followed the fully traced one,
 * whose exports, batched and sent after its slice on the same core, fell into the sampled slice.
 * Each turn also gives a paired ratio (a variant's slice against the baseline's slice of the same
 * turn); their median is the figure that drift between turns does not move.
 */
interface Figures {
  /** Acts per second of each slice, in turn order. */
  perSecond: number[];
  /** Server CPU ms per act of each slice, work deferred past the slice not included. */
  sliceCpuMs: number[];
  /** Each process's CPU ms per act over the whole period. */
  processCpuMs: number[];
  /** Server CPU ms per act over the whole period: the mean of its processes. */
  cpuMs: number;
}

/**
 * The order of the variants in each turn: a balanced Latin square (Williams), so that over `n`
 * turns every variant directly follows every other exactly once, and each is first once.
 */
export function balancedOrder(n: number, turn: number): number[] {
  const first = Array.from({ length: n }, (_, j) => (j % 2 === 0 ? j / 2 : n - (j + 1) / 2));
  const row = first.map((value) => (value + (turn % n)) % n);
  // With an odd count a square and its mirror together balance what follows what.
  return n % 2 === 1 && Math.floor(turn / n) % 2 === 1 ? row.reverse() : row;
}

/** The median over turns of a variant's figure divided by the baseline's in the same turn. */
export function pairedRatio(values: number[], baseline: number[]): number {
  return median(values.map((value, turn) => value / baseline[turn]!));
}

type Variant = { name: string; env: (receiver: string) => Record<string, string> };

const TRACING = (receiver: string) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver });

const BASELINE: Variant = { name: 'no audit, no tracing', env: () => ({ AUDIT_TRAIL: 'off' }) };

/**
 * The variants, in two groups measured one after the other, each beside its own baseline (no
 * audit trail, AUDIT_TRAIL=off, development only; no tracing): what an operator runs, and every
 * span exported. Measured together, the fully traced servers' gigabyte of exports, sent after
 * their slices on the same core and received by this process, slowed the slices of the others:
 * 5 % sampling measured +8.7 % CPU on the issuance beside them and +0.0 % without them.
 */
const GROUPS: Record<'operator' | 'dropped' | 'every-span', Variant[]> = {
  operator: [
    BASELINE,
    { name: 'audit (default)', env: () => ({}) },
    {
      name: 'audit + tracing 5 % sampled',
      env: (receiver) => ({
        ...TRACING(receiver),
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.05',
      }),
    },
  ],
  // Where 5 % sampling's cost lies: the SDK loaded and every request's context (no span kept), or
  // the spans a twentieth of the requests export. The audit trail is on in all three.
  dropped: [
    { name: 'audit (default), no tracing', env: () => ({}) },
    {
      name: 'audit + tracing, every request dropped',
      env: (receiver) => ({ ...TRACING(receiver), OTEL_TRACES_SAMPLER: 'always_off' }),
    },
    {
      name: 'audit + tracing 5 % sampled (beside dropped)',
      env: (receiver) => ({
        ...TRACING(receiver),
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.05',
      }),
    },
  ],
  'every-span': [
    { ...BASELINE, name: 'no audit, no tracing (beside every span)' },
    { name: 'audit + tracing (every span)', env: TRACING },
  ],
};

/** BENCH_TELEMETRY_WORKLOADS=token (a prefix of each name, comma-separated) measures those only. */
function chosenWorkloads(): Workload[] {
  const prefixes = process.env['BENCH_TELEMETRY_WORKLOADS']?.split(',').map((prefix) => prefix.trim());
  if (!prefixes) return WORKLOADS;
  const chosen = WORKLOADS.filter((workload) => prefixes.some((prefix) => workload.name.startsWith(prefix)));
  if (chosen.length === 0) throw new Error(`BENCH_TELEMETRY_WORKLOADS: none of ${prefixes.join(', ')}`);
  return chosen;
}

/** BENCH_TELEMETRY_GROUPS=operator,dropped,every-span picks groups; operator and every-span by default. */
function chosenGroups(): Variant[][] {
  const names = (process.env['BENCH_TELEMETRY_GROUPS'] ?? 'operator,every-span').split(',');
  return names.map((name) => {
    const group = GROUPS[name.trim() as keyof typeof GROUPS];
    if (!group) throw new Error(`BENCH_TELEMETRY_GROUPS: no group "${name}" (operator, dropped, every-span)`);
    return group;
  });
}

/** An OTLP/HTTP endpoint that takes spans and drops them; counts what it got. */
async function startSpanSink() {
  let bytes = 0;
  const server = createServer((request, response) => {
    request.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    // An empty ExportTraceServiceResponse in the request's encoding (protobuf unless told JSON).
    request.on('end', () => {
      const json = String(request.headers['content-type']).startsWith('application/json');
      response.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      response.end(json ? '{}' : undefined);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bytes: () => bytes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A warmed server's load for `seconds`; resolves with the acts done. */
type Slice = (seconds: number) => Promise<number>;

interface Workload {
  name: string;
  env?: Record<string, string>;
  /** Prepares `server` for the workload, warms it up, and returns its slice of load. */
  prepare(server: BenchServer, connections: number): Promise<Slice>;
}

/** Closed loops of `act`; failures are counted by closedLoop and printed there. */
const loopSlice =
  (act: () => Promise<void>, connections: number): Slice =>
  async (seconds) =>
    (await closedLoop(act, connections, seconds)).latencies.length;

const WORKLOADS: Workload[] = [
  {
    name: 'token exchange',
    async prepare(server, connections) {
      const request = await tokenExchangeForm.prepare(server);
      const url = server.url + request.path;
      const slice: Slice = async (seconds) =>
        (await measure({ ...request, url, connections, duration: seconds })).total;
      await slice(3);
      return slice;
    },
  },
  {
    name: 'pre-authorized issuance (dc+sd-jwt)',
    async prepare(server, connections) {
      const target = await cofferTarget(server);
      const keys = await proofKeys(64);
      let n = 0;
      const act = () => preAuthorizedIssuance(target, 'dc+sd-jwt', keys[n % keys.length]!, n++);
      const slice = loopSlice(act, connections);
      // Untimed issuances as the issuer bench sends, so V8 has compiled what one runs.
      while (n < WARM_UP_ISSUANCES) await slice(1);
      return slice;
    },
  },
  {
    name: 'verification round trip (dc+sd-jwt)',
    env: { RESULT_RETENTION: '0' },
    async prepare(server, connections) {
      const roundTrip = await prepareVerifier(server);
      const kind = await sdJwtKind();
      const slice = loopSlice(() => roundTrip(kind), connections);
      await slice(WARM_UP_SECONDS + 2);
      return slice;
    },
  },
];

/** The middle value of the slices. */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** How long a server takes to send what it batched (OTEL_BSP_SCHEDULE_DELAY is 5 s by default). */
const SETTLE_MS = 6000;

/**
 * Every variant's figures for one workload, in slices taken in turn. Each variant runs in
 * `processes` server processes: two processes of the same code and settings differed by up to
 * 15 % in CPU per act (V8 compiles each its own way), more than the effects measured here, so a
 * variant's figure is over several, and its turn is a slice on each of them.
 */
async function measureWorkload(
  workload: Workload,
  database: BenchDatabase,
  envs: Record<string, string>[],
  options: { connections: number; duration: number; rounds: number; processes: number },
): Promise<Figures[]> {
  const { connections, duration, rounds, processes } = options;
  const servers: BenchServer[][] = envs.map(() => []);
  const slices: Slice[][] = envs.map(() => []);
  try {
    // Started interleaved, so no variant gets all the first (or last) processes.
    for (let p = 0; p < processes; p++) {
      for (const [v, env] of envs.entries()) {
        const server = await startBenchServer(database, { ...workload.env, ...env });
        servers[v]!.push(server);
        slices[v]!.push(await workload.prepare(server, connections));
      }
    }
    const cpuOf = (v: number) => Promise.all(servers[v]!.map((server) => server.cpuMicros()));
    const figures = envs.map(() => ({
      perSecond: [] as number[],
      sliceCpuMs: [] as number[],
      acts: servers[0]!.map(() => 0),
    }));
    const cpuAtStart = await Promise.all(envs.map((_, v) => cpuOf(v)));
    const seconds = duration / rounds / processes;
    for (let round = 0; round < rounds; round++) {
      for (const v of balancedOrder(envs.length, round)) {
        let acts = 0;
        let elapsed = 0;
        let spent = 0;
        for (let i = 0; i < processes; i++) {
          const p = (i + round) % processes;
          const before = await servers[v]![p]!.cpuMicros();
          const started = performance.now();
          const done = await slices[v]![p]!(seconds);
          elapsed += (performance.now() - started) / 1000;
          spent += (await servers[v]![p]!.cpuMicros()) - before;
          acts += done;
          figures[v]!.acts[p]! += done;
        }
        figures[v]!.perSecond.push(acts / elapsed);
        figures[v]!.sliceCpuMs.push(spent / 1000 / Math.max(acts, 1));
      }
    }
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const cpuAtEnd = await Promise.all(envs.map((_, v) => cpuOf(v)));
    return figures.map((f, v) => {
      const processCpuMs = f.acts.map(
        (acts, p) => (cpuAtEnd[v]![p]! - cpuAtStart[v]![p]!) / 1000 / Math.max(acts, 1),
      );
      return {
        perSecond: f.perSecond,
        sliceCpuMs: f.sliceCpuMs,
        processCpuMs,
        cpuMs: processCpuMs.reduce((sum, value) => sum + value, 0) / processes,
      };
    });
  } finally {
    await Promise.all(servers.flat().map((server) => server.stop()));
  }
}

export async function runTelemetryBenchmark(options: {
  databases: BenchDatabase[];
  duration: number;
  connections: number;
}): Promise<string> {
  const rounds = Math.max(1, Number(process.env['BENCH_TELEMETRY_ROUNDS'] ?? 12));
  const processes = Math.max(1, Number(process.env['BENCH_TELEMETRY_PROCESSES'] ?? 3));
  const groups = chosenGroups();
  const sink = await startSpanSink();
  const rows: string[] = [];
  const spanMicros = { 'http/protobuf': Number.NaN, 'http/json': Number.NaN };
  let unsampledMicros = Number.NaN;
  let serverBytes = 0;
  try {
    for (const database of options.databases) {
      for (const workload of chosenWorkloads()) {
        for (const variants of groups) {
          const figures = await measureWorkload(
            workload,
            database,
            variants.map((variant) => variant.env(sink.url)),
            { connections: options.connections, duration: options.duration, rounds, processes },
          );
          const baseline = figures[0]!;
          variants.forEach((variant, v) => {
            const f = figures[v]!;
            const change = (value: number, base: number) => {
              if (v === 0) return '—';
              const percent = ((value - base) / base) * 100;
              return `${percent >= 0 ? '+' : ''}${percent.toFixed(1)} %`;
            };
            const range = (values: number[], digits: number) =>
              `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;
            const perSecond = median(f.perSecond);
            rows.push(
              `| ${workload.name} | ${database} | ${options.connections} | ${variant.name} | ${perSecond.toFixed(1)} | ${range(f.perSecond, 1)} | ${change(perSecond, median(baseline.perSecond))} | ${change(pairedRatio(f.perSecond, baseline.perSecond), 1)} | ${f.cpuMs.toFixed(3)} | ${f.processCpuMs.map((value) => value.toFixed(3)).join(', ')} | ${change(f.cpuMs, baseline.cpuMs)} | ${change(pairedRatio(f.sliceCpuMs, baseline.sliceCpuMs), 1)} |`,
            );
          });
        }
        console.error(`done: telemetry ${workload.name} ${database}`);
      }
    }
    serverBytes = sink.bytes();
    // Alternated, twice each, and the second kept: neither encoding meets a colder process.
    for (const encoding of ['http/json', 'http/protobuf', 'http/json', 'http/protobuf'] as const)
      spanMicros[encoding] = await measureSpanCost(sink.url, encoding);
    unsampledMicros = await measureUnsampledRequestCost();
  } finally {
    await sink.close();
  }
  return [
    `${processes} server processes per variant, ${rounds} turns of a slice of ${(options.duration / rounds / processes).toFixed(1)} s on each, the variants in turn (a balanced Latin square); throughput: median and range of the turns; CPU: each process's whole period over its acts, and their mean; paired: the median over turns of each turn against the baseline's turn of the same round`,
    '',
    `server on cores ${serverCpus() ?? 'shared with the load generator'}`,
    '',
    '| workload | db | concurrent | variant | per second | range /s | throughput vs no audit, no tracing | paired | server CPU ms each | by process, ms | CPU vs no audit, no tracing | paired |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    `spans the servers exported to the sink: ${(serverBytes / 1024 / 1024).toFixed(1)} MiB of OTLP (${process.env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'] || process.env['OTEL_EXPORTER_OTLP_PROTOCOL'] || 'http/protobuf'})`,
    `the OpenTelemetry SDK alone (bench/span-cost.ts, in this process): ${spanMicros['http/protobuf'].toFixed(1)} µs of CPU per span made, batched and exported as protobuf, ${spanMicros['http/json'].toFixed(1)} µs as JSON`,
    `a request the sampler drops (bench/span-cost.ts): ${unsampledMicros.toFixed(2)} µs of CPU more than untraced`,
  ].join('\n');
}
