/**
 * BBS micro-benchmark: sign, verifySignature, deriveProof (2 disclosed) and verifyProof at 10 and
 * 50 messages, fastBbs and stockBbs in the same process, each operation timed for both back to
 * back so both see about the same machine load.
 *
 * `node bench/bbs.ts [--iterations=100 --stock-iterations=30 --warmup=5]`, or through the runner:
 * `npm run bench -- --only=bbs`. Single thread; prints a markdown table.
 */
import { parseArgs } from 'node:util';
import { curveChoice } from '../src/bbs/curve.ts';
import { type BbsSuite, fastBbs } from '../src/bbs/index.ts';
import { stockBbs } from '../src/bbs/stock.ts';
import { sample, summarise } from './timing.ts';

export interface BbsBenchmarkOptions {
  /** Timed runs of each fastBbs operation, after the warm-up. */
  iterations: number;
  /** Timed runs of each stockBbs operation (it is 10-60x slower); 0 leaves stock out. */
  stockIterations: number;
  warmup: number;
  messageCounts: number[];
}

const DEFAULTS: BbsBenchmarkOptions = {
  iterations: 100,
  stockIterations: 30,
  warmup: 5,
  messageCounts: [10, 50],
};
const DISCLOSED = 2;
const OPERATIONS = ['sign', 'verifySignature', 'deriveProof', 'verifyProof'] as const;
type Operation = (typeof OPERATIONS)[number];

/** A credential-like input: N-Quad statements, as bbs-2023 signs them. */
async function workload(suite: BbsSuite, messageCount: number) {
  const encoder = new TextEncoder();
  const messages = Array.from({ length: messageCount }, (_, i) =>
    encoder.encode(`_:c14n0 <https://schema.org/property${i}> "value number ${i} of the credential" .\n`),
  );
  const header = encoder.encode('bbs-2023 header: hash of the proof configuration and mandatory statements');
  const presentationHeader = encoder.encode('presentation nonce 0f3a9c');
  const { secretKey, publicKey } = await fastBbs.generateKeyPair({
    seed: encoder.encode('coffer bbs benchmark key material, 32+ octets'),
  });
  const disclosedMessageIndexes = Array.from({ length: DISCLOSED }, (_, i) => i * 3);
  const disclosedMessages = disclosedMessageIndexes.map((i) => messages[i]!);
  const signature = await suite.sign({ secretKey, publicKey, header, messages });
  const deriveArgs = { publicKey, signature, header, messages, presentationHeader, disclosedMessageIndexes };
  const proof = await suite.deriveProof(deriveArgs);
  const run: Record<Operation, () => Promise<unknown>> = {
    sign: () => suite.sign({ secretKey, publicKey, header, messages }),
    verifySignature: () => suite.verifySignature({ publicKey, signature, header, messages }),
    deriveProof: () => suite.deriveProof(deriveArgs),
    verifyProof: () =>
      suite.verifyProof({
        publicKey,
        proof,
        header,
        presentationHeader,
        disclosedMessages,
        disclosedMessageIndexes,
      }),
  };
  // A benchmark of a verification that fails would measure an early exit.
  if (!(await run.verifySignature()) || !(await run.verifyProof()))
    throw new Error('benchmark inputs do not verify');
  return run;
}

const formatMs = (ms: number, digits: number) => (Number.isNaN(ms) ? '-' : ms.toFixed(digits));

/** Runs the benchmark and returns its markdown table. */
export async function runBbsBenchmark(overrides: Partial<BbsBenchmarkOptions> = {}): Promise<string> {
  const options = { ...DEFAULTS, ...overrides };
  const rows: string[][] = [];
  for (const messageCount of options.messageCounts) {
    const fast = await workload(fastBbs, messageCount);
    const stock = options.stockIterations > 0 ? await workload(stockBbs, messageCount) : undefined;
    for (const operation of OPERATIONS) {
      // One block per implementation, back to back: interleaving single runs let the stock
      // library's garbage (bigint-heavy) be collected during fastBbs's timed runs.
      const fastSamples = await sample(fast[operation], options.warmup, options.iterations);
      const stockSamples = stock
        ? await sample(stock[operation], options.warmup, options.stockIterations)
        : [];
      const f = summarise(fastSamples);
      const s = summarise(stockSamples);
      rows.push([
        operation,
        String(messageCount),
        formatMs(f.median, 2),
        formatMs(f.p90, 2),
        formatMs(s.median, 1),
        formatMs(s.p90, 1),
        stock ? `${(s.median / f.median).toFixed(1)}x` : '-',
      ]);
      console.error(
        `done: bbs ${operation} L=${messageCount}: fast ${f.median.toFixed(2)} ms, stock ${s.median.toFixed(1)} ms`,
      );
    }
  }
  const header = [
    'operation',
    'messages',
    'fast median ms',
    'fast p90 ms',
    'stock median ms',
    'stock p90 ms',
    'stock/fast',
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [
    `BBS BLS12-381-SHA-256, ${DISCLOSED} disclosed for proofs; fast n=${options.iterations}, stock n=${options.stockIterations}, after ${options.warmup} warm-up runs; curve backend ${curveChoice.name}; Node ${process.version}`,
    '',
    line(header),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...rows.map(line),
  ].join('\n');
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      iterations: { type: 'string', default: String(DEFAULTS.iterations) },
      'stock-iterations': { type: 'string', default: String(DEFAULTS.stockIterations) },
      warmup: { type: 'string', default: String(DEFAULTS.warmup) },
    },
  });
  console.log(
    await runBbsBenchmark({
      iterations: Number(values.iterations),
      stockIterations: Number(values['stock-iterations']),
      warmup: Number(values.warmup),
    }),
  );
}
