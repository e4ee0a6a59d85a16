/**
 * Issue 17's and 32's presentation targets, in one run: the stock Digital Bazaar derive (vc.derive
 * with the bbs-2023 disclose cryptosuite, in this process) beside one client's requests to
 * POST /v1/openidc/credentials/proof (2 claims disclosed) against a server process on 127.0.0.1,
 * at 10 and 50 claims, two ways:
 * - repeated: every request on the same stored credential (its blocks decrypted and cached by
 *   the first one);
 * - distinct: every request on a different stored credential, as people present them: each
 *   request reads and decrypts the credential's blocks for the first time.
 * One client sends request after request; each latency is measured here with performance.now()
 * (autocannon rounds to whole milliseconds), and the server's CPU time per request (all its
 * threads) comes from /proc. The ratio is the stock derive's median over the endpoint's median.
 *
 * `npm run bench -- --only=proof-latency [--db=sqlite]`
 */
import { createStockIssuer, deriveWithStock, stockDocumentLoader } from '../test/credentials/stock-issuer.ts';
import { benchCredential } from '../test/helpers/credential-factory.ts';
import { prepareProofRequests } from './scenarios/credentials.ts';
import { type BenchDatabase, type BenchServer, startBenchServer } from './server.ts';
import { sample, summarise } from './timing.ts';

const HEADER = new TextEncoder().encode('bench-verifier-nonce');
const DISCLOSED = ['/credentialSubject/claim_0', '/credentialSubject/claim_1'];
/**
 * Untimed requests before each measured series (on credentials of their own when distinct),
 * BENCH_PROOF_WARM_UP (1,000). "A warm process" is one that has served such requests for a while:
 * after only 30, V8's compiler threads still spent 0.3–0.6 ms per proof tiering the code up, a
 * cost that a server which has run for an hour no longer pays (docs/benchmarks.md).
 */
const WARM_UP = Number(process.env['BENCH_PROOF_WARM_UP'] ?? 1000);

async function stockDeriveMedian(claims: number, iterations: number): Promise<number> {
  const stock = await createStockIssuer();
  const signed = await stock.issue(
    benchCredential(stock.did, 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK', claims),
  );
  const documentLoader = stockDocumentLoader();
  const derive = () => deriveWithStock(signed, ['/issuer', ...DISCLOSED], HEADER, documentLoader);
  return summarise(await sample(derive, 3, iterations)).median;
}

interface Series {
  p50: number;
  p99: number;
  /** The server's CPU time per request, ms. */
  cpuMs: number;
}

/** One request per body, in order, after WARM_UP untimed ones (`warmUpBodies`). */
async function measureSeries(
  server: BenchServer,
  request: { path: string; headers: Record<string, string> },
  warmUpBodies: string[],
  bodies: string[],
): Promise<Series> {
  const send = async (body: string) => {
    const answer = await fetch(server.url + request.path, { method: 'POST', headers: request.headers, body });
    await answer.arrayBuffer();
    if (answer.status !== 200) throw new Error(`proof: ${answer.status}`);
  };
  for (const body of warmUpBodies) await send(body);
  const cpuBefore = await server.cpuMicros();
  let next = 0;
  const latencies = (await sample(() => send(bodies[next++]!), 0, bodies.length)).sort((a, b) => a - b);
  const cpuMs = ((await server.cpuMicros()) - cpuBefore) / 1000 / bodies.length;
  const { median } = summarise(latencies);
  return { p50: median, p99: latencies[Math.ceil(0.99 * latencies.length) - 1]!, cpuMs };
}

const cells = (series: Series, stock: number) =>
  `${series.p50.toFixed(2)} | ${series.p99.toFixed(2)} | **${(stock / series.p50).toFixed(1)}×** | ${series.cpuMs.toFixed(2)}`;

export async function runProofLatencyBenchmark(options: {
  database: BenchDatabase;
  /** Requests on one stored credential. */
  requests: number;
  /** Requests on distinct stored credentials (as many credentials are stored first). */
  distinctRequests: number;
  stockIterations: number;
}): Promise<string> {
  const rows: string[] = [];
  for (const claims of [10, 50]) {
    const server = await startBenchServer(options.database);
    try {
      const repeated = await prepareProofRequests(server, claims, 1);
      const distinct = await prepareProofRequests(server, claims, WARM_UP + options.distinctRequests);
      const body = repeated.bodies[0]!;
      const same = await measureSeries(
        server,
        repeated,
        Array(WARM_UP).fill(body),
        Array(options.requests).fill(body),
      );
      const different = await measureSeries(
        server,
        distinct,
        distinct.bodies.slice(0, WARM_UP),
        distinct.bodies.slice(WARM_UP),
      );
      const stock = await stockDeriveMedian(claims, options.stockIterations);
      rows.push(`| ${claims} | ${stock.toFixed(1)} | ${cells(different, stock)} | ${cells(same, stock)} |`);
      console.error(`done: proof latency at ${claims} claims`);
    } finally {
      await server.stop();
    }
  }
  return [
    `Proof endpoint, 2 claims disclosed, one client (${options.database}), beside the stock derive in process: ` +
      `${options.distinctRequests} requests each on a different stored credential (distinct), ` +
      `${options.requests} on one stored credential (repeated), each series after ${WARM_UP} untimed requests of its kind; ` +
      "CPU is the server's, all threads, ms per request:",
    '| claims | stock derive median ms | distinct p50 ms | distinct p99 ms | stock ÷ distinct | distinct CPU ms | repeated p50 ms | repeated p99 ms | stock ÷ repeated | repeated CPU ms |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}
