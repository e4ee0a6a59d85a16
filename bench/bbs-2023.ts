/**
 * bbs-2023 at credential level: issue (sign), base-proof verification, derivation (2 claims
 * disclosed) and derived-proof verification, for 10- and 50-claim credentials. Coffer's
 * functions on its BBS core beside the stock Digital Bazaar stack in the same process; the stock
 * stack has no base-proof verification, so there Coffer's algorithm runs on the stock BBS
 * library. Single thread; prints a markdown table.
 *
 * `node bench/bbs-2023.ts [--iterations=60 --stock-iterations=15]`, or `npm run bench -- --only=bbs-2023`.
 */
import { parseArgs } from 'node:util';
import { createVerifyCryptosuite } from '@digitalbazaar/bbs-2023-cryptosuite';
import { DataIntegrityProof } from '@digitalbazaar/data-integrity';
import * as vc from '@digitalbazaar/vc';
import { curveChoice } from '../src/bbs/curve.ts';
import { fastBbs } from '../src/bbs/index.ts';
import { stockBbs } from '../src/bbs/stock.ts';
import { verifyBaseProof } from '../src/formats/ldp-vc/bbs-2023/base-proof.ts';
import { verifyDerivedProof } from '../src/formats/ldp-vc/bbs-2023/derived-proof.ts';
import { deriveDisclosure } from '../src/formats/ldp-vc/bbs-2023/disclosure.ts';
import type { SecuredDocument } from '../src/formats/ldp-vc/bbs-2023/shared.ts';
import { createStockIssuer, deriveWithStock, stockDocumentLoader } from '../test/credentials/stock-issuer.ts';
import { benchCredential, benchJsonLd, createBenchIssuer } from '../test/helpers/credential-factory.ts';
import { sample, summarise } from './timing.ts';

const CLAIM_COUNTS = [10, 50];
const DISCLOSED = ['/credentialSubject/claim_0', '/credentialSubject/claim_1'];
const HEADER = new TextEncoder().encode('bench-verifier-nonce');

export async function runBbs2023Benchmark(options: { iterations: number; stockIterations: number }) {
  const { iterations, stockIterations } = options;
  const fast = { bbs: fastBbs, jsonLd: benchJsonLd };
  const stockDeps = { bbs: stockBbs, jsonLd: benchJsonLd };
  const coffer = await createBenchIssuer(fastBbs);
  const stock = await createStockIssuer();
  const stockLoader = stockDocumentLoader();
  const subject = 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK';
  const rows: string[][] = [];

  for (const claims of CLAIM_COUNTS) {
    const ours = await coffer.issue(subject, claims);
    const theirs = (await stock.issue(
      benchCredential(stock.did, subject, claims),
    )) as unknown as SecuredDocument;
    const stockDerive = (signed: SecuredDocument) =>
      deriveWithStock(signed, ['/issuer', ...DISCLOSED], HEADER, stockLoader);
    const derivedOurs = (await deriveDisclosure(ours, DISCLOSED, HEADER, fast)).credential;
    const derivedTheirs = await stockDerive(theirs);

    const cases: Array<[string, () => Promise<unknown>, () => Promise<unknown>]> = [
      [
        'issue (sign)',
        () => coffer.issue(subject, claims),
        () => stock.issue(benchCredential(stock.did, subject, claims)),
      ],
      [
        'base proof verify',
        async () => assertOk(await verifyBaseProof(ours, coffer.publicKey, fast)),
        async () => assertOk(await verifyBaseProof(theirs, stock.publicKey, stockDeps)),
      ],
      [
        'derive (2 disclosed)',
        () => deriveDisclosure(ours, DISCLOSED, HEADER, fast),
        () => stockDerive(theirs),
      ],
      [
        'derived proof verify',
        async () => assertOk(await verifyDerivedProof(derivedOurs, coffer.publicKey, HEADER, fast)),
        async () => {
          const result = await vc.verifyCredential({
            credential: derivedTheirs,
            suite: new DataIntegrityProof({
              cryptosuite: createVerifyCryptosuite({ expectedPresentationHeader: HEADER }),
            }),
            documentLoader: stockLoader,
          });
          if (!result.verified) throw new Error('stock verification failed');
        },
      ],
    ];
    for (const [name, runOurs, runTheirs] of cases) {
      const a = summarise(await sample(runOurs, 5, iterations));
      const b = summarise(await sample(runTheirs, 2, stockIterations));
      rows.push([
        name,
        String(claims),
        a.median.toFixed(2),
        a.p90.toFixed(2),
        b.median.toFixed(1),
        b.p90.toFixed(1),
        `${(b.median / a.median).toFixed(1)}×`,
      ]);
      console.error(`done: bbs-2023 ${name} at ${claims} claims`);
    }
  }
  const header = [
    'operation',
    'claims',
    'Coffer median ms',
    'Coffer p90 ms',
    'stock median ms',
    'stock p90 ms',
    'stock/Coffer',
  ];
  const table = [header, header.map(() => '---'), ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
  return `bbs-2023, Coffer on the ${curveChoice.name} curve backend\n\n${table}`;
}

function assertOk(result: { ok: boolean }) {
  if (!result.ok) throw new Error(`verification failed: ${JSON.stringify(result)}`);
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      iterations: { type: 'string', default: '60' },
      'stock-iterations': { type: 'string', default: '15' },
    },
  });
  console.log(
    await runBbs2023Benchmark({
      iterations: Number(values.iterations),
      stockIterations: Number(values['stock-iterations']),
    }),
  );
}
