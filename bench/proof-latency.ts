/**
 * Issue 17's presentation targets, in one run: the stock Digital Bazaar derive (vc.derive with the
 * bbs-2023 disclose cryptosuite, in this process) beside one client's requests to
 * POST /v1/openidc/credentials/proof (2 claims disclosed) against a server process on 127.0.0.1,
 * at 10 and 50 claims. One client sends request after request; each latency is measured here with
 * performance.now() (autocannon rounds to whole milliseconds), and the server's CPU time per
 * request comes from /proc. The ratio is the stock derive's median over the endpoint's median.
 *
 * `npm run bench -- --only=proof-latency [--db=sqlite]`
 */
import { createStockIssuer, deriveWithStock, stockDocumentLoader } from '../test/credentials/stock-issuer.ts';
import { benchCredential } from '../test/helpers/credential-factory.ts';
import { credentialProof10, credentialProof50 } from './scenarios/credentials.ts';
import { type BenchDatabase, startBenchServer } from './server.ts';
import { sample, summarise } from './timing.ts';

const HEADER = new TextEncoder().encode('bench-verifier-nonce');
const DISCLOSED = ['/credentialSubject/claim_0', '/credentialSubject/claim_1'];

async function stockDeriveMedian(claims: number, iterations: number): Promise<number> {
  const stock = await createStockIssuer();
  const signed = await stock.issue(
    benchCredential(stock.did, 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK', claims),
  );
  const documentLoader = stockDocumentLoader();
  const derive = () => deriveWithStock(signed, ['/issuer', ...DISCLOSED], HEADER, documentLoader);
  return summarise(await sample(derive, 3, iterations)).median;
}

export async function runProofLatencyBenchmark(options: {
  database: BenchDatabase;
  requests: number;
  stockIterations: number;
}): Promise<string> {
  const rows: string[] = [];
  for (const [claims, scenario] of [
    [10, credentialProof10],
    [50, credentialProof50],
  ] as const) {
    const server = await startBenchServer(options.database);
    try {
      const request = await scenario.prepare(server);
      const send = async () => {
        const answer = await fetch(server.url + request.path, {
          method: request.method ?? 'GET',
          headers: request.headers ?? {},
          body: request.body ?? null,
        });
        await answer.arrayBuffer();
        if (answer.status !== 200) throw new Error(`proof: ${answer.status}`);
      };
      for (let i = 0; i < 30; i++) await send();
      const cpuBefore = await server.cpuMicros();
      const latencies = (await sample(send, 0, options.requests)).sort((a, b) => a - b);
      const cpuPerRequest = (await server.cpuMicros()) - cpuBefore;
      const endpoint = summarise(latencies);
      const stock = await stockDeriveMedian(claims, options.stockIterations);
      const p99 = latencies[Math.ceil(0.99 * latencies.length) - 1]!;
      rows.push(
        `| ${claims} | ${stock.toFixed(1)} | ${endpoint.median.toFixed(2)} | ${p99.toFixed(2)} | **${(stock / endpoint.median).toFixed(1)}×** | ${(cpuPerRequest / options.requests / 1000).toFixed(2)} |`,
      );
      console.error(`done: proof latency at ${claims} claims`);
    } finally {
      await server.stop();
    }
  }
  return [
    `Proof endpoint, 2 claims disclosed, one client (${options.requests} requests, ${options.database}) beside the stock derive in process:`,
    '| claims | stock derive median ms | endpoint p50 ms | endpoint p99 ms | stock ÷ endpoint | server CPU ms/request |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}
