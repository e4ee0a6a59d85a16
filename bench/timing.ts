/** Timing helpers shared by the benchmarks: samples of one operation, and nearest-rank percentiles. */

/** Runs `operation` `warmup` times untimed, then `iterations` times, returning each duration in ms. */
export async function sample(
  operation: () => Promise<unknown>,
  warmup: number,
  iterations: number,
): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await operation();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = performance.now();
    await operation();
    samples.push(performance.now() - start);
  }
  return samples;
}

/** The nearest-rank percentile `q` (0..1) of ascending `sorted` values; NaN when there are none. */
export const percentile = (sorted: number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;

export interface Timings {
  median: number;
  p90: number;
}

export function summarise(samples: number[]): Timings {
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: percentile(sorted, 0.5), p90: percentile(sorted, 0.9) };
}

export interface ClosedLoopResult {
  /** Completed operations' latencies in ms, ascending. */
  latencies: number[];
  failures: number;
}

/** An error with its cause: fetch's "fetch failed" says which socket error only in its cause. */
function describeFailure(error: unknown): string {
  const cause = (error as Error).cause as { code?: string; message?: string } | undefined;
  const why = cause ? ` (${cause.code ?? ''} ${cause.message ?? ''})` : '';
  return `${(error as Error).message}${why}`;
}

/**
 * `connections` closed loops that each run `operation` back to back until `durationSeconds`
 * have passed (a round trip per loop at a time, as a browser would). Failures are counted and
 * the first three printed.
 */
export async function closedLoop(
  operation: () => Promise<void>,
  connections: number,
  durationSeconds: number,
): Promise<ClosedLoopResult> {
  const latencies: number[] = [];
  let failures = 0;
  const deadline = Date.now() + durationSeconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < deadline) {
        const started = performance.now();
        try {
          await operation();
          latencies.push(performance.now() - started);
        } catch (error) {
          failures++;
          if (failures <= 3) console.error(`round trip failed: ${describeFailure(error).slice(0, 300)}`);
        }
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { latencies, failures };
}

/** One closed-loop measurement of a round trip against a server process, with its CPU per round trip. */
export interface RoundTripFigures {
  connections: number;
  roundTrips: number;
  perSecond: number;
  p50: number;
  p99: number;
  failures: number;
  /** The server's CPU time (all threads) per round trip, ms. */
  cpuMs: number;
}

/** Seconds of untimed round trips before each measured run (measureRoundTrips). */
export const WARM_UP_SECONDS = Number(process.env['BENCH_WARM_UP_SECONDS'] ?? 2);

export async function measureRoundTrips(
  server: { cpuMicros(): Promise<number> },
  roundTrip: () => Promise<void>,
  connections: number,
  durationSeconds: number,
  /**
   * Untimed first, at the same concurrency: until V8's optimizing compiler has compiled what the
   * round trip runs, its threads' CPU counts as the server's (a verification at one connection
   * measured 1 ms more after 5 warm-up round trips than after two seconds of them).
   */
  warmUpSeconds = WARM_UP_SECONDS,
): Promise<RoundTripFigures> {
  if (warmUpSeconds > 0) await closedLoop(roundTrip, connections, warmUpSeconds);
  const cpuBefore = await server.cpuMicros();
  const { latencies, failures } = await closedLoop(roundTrip, connections, durationSeconds);
  return {
    connections,
    roundTrips: latencies.length,
    perSecond: latencies.length / durationSeconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    failures,
    cpuMs: ((await server.cpuMicros()) - cpuBefore) / 1000 / Math.max(1, latencies.length),
  };
}
