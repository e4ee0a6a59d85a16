import { Piscina } from 'piscina';
import type { Bbs2023Operations } from './bbs-2023/operations.ts';
import { type ContextRegistry, UnknownContextError } from './contexts/document-loader.ts';
import { unknownContextReason } from './contexts/jsonld-errors.ts';
import type { CryptoTask, CryptoTaskResult } from './crypto-worker.ts';

/** A task as callers give it; the contexts are added on every attempt. */
type TaskInput = CryptoTask extends infer T ? (T extends CryptoTask ? Omit<T, 'contexts'> : never) : never;

/** How many contexts one task may have to fetch from the registry (contexts can import contexts). */
const MAX_CONTEXT_ROUNDS = 8;

/**
 * bbs-2023 verification and derivation in worker threads (piscina), so that a server uses every
 * core for the pairing arithmetic while its main thread keeps serving requests. Threads start on
 * first use and stop when idle.
 */
export function createPooledOperations(options: {
  threads: number;
  contexts: ContextRegistry;
}): Bbs2023Operations & { close(): Promise<void> } {
  const pool = new Piscina({
    filename: new URL('./crypto-worker.ts', import.meta.url).href,
    minThreads: 0,
    maxThreads: options.threads,
    idleTimeout: 60_000,
    // piscina's default moves a task it could not hand to a busy pool to the back of the queue,
    // so under sustained load some requests waited seconds behind later ones; keep arrival order.
    stricterFIFO: true,
    // A task needs a few megabytes; a bounded heap makes V8 collect early instead of letting each
    // thread grow towards the machine's default limit.
    resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16 },
  });

  async function run(task: TaskInput): Promise<CryptoTaskResult> {
    let result: CryptoTaskResult = { kind: 'unknown_context', url: '' };
    for (let round = 0; round < MAX_CONTEXT_ROUNDS; round++) {
      result = (await pool.run({ ...task, contexts: options.contexts.known() })) as CryptoTaskResult;
      if (result.kind === 'done' || !(await options.contexts.find(result.url))) return result;
    }
    return result;
  }

  return {
    async verifyBaseProof(document, issuerPublicKey, options) {
      const result = await run({
        op: 'verifyBaseProof',
        document,
        issuerPublicKey,
        ...(options && { options }),
      });
      return result.kind === 'done'
        ? (result.value as Awaited<ReturnType<Bbs2023Operations['verifyBaseProof']>>)
        : { ok: false, reason: unknownContextReason(result.url) };
    },
    async deriveDisclosure(document, pointers, presentationHeader, prepared) {
      const result = await run({ op: 'deriveDisclosure', document, pointers, presentationHeader, prepared });
      if (result.kind !== 'done') throw new UnknownContextError(result.url);
      return result.value as Awaited<ReturnType<Bbs2023Operations['deriveDisclosure']>>;
    },
    close: () => pool.destroy(),
  };
}
