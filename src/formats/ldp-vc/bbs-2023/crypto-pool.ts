import { Piscina } from 'piscina';
import { inSpan } from '../../../telemetry/tracer.ts';
import { type ContextRegistry, UnknownContextError } from '../contexts/document-loader.ts';
import { unknownContextReason } from '../contexts/jsonld-errors.ts';
import type { BaseProofCheck } from './base-proof.ts';
import type { BaseProofItem, CryptoTask, CryptoTaskResult } from './crypto-worker.ts';
import type { Bbs2023Operations } from './operations.ts';
import type { ProofCheck } from './shared.ts';

/** How many contexts one task may have to fetch from the registry (contexts can import contexts). */
const MAX_CONTEXT_ROUNDS = 8;

/** At most this many base proofs go to a thread in one task (they share a pairing product). */
const MAX_BATCH = 16;

/** How long a lone base-proof check waits for a companion while a thread is busy. */
const LONE_CHECK_WAIT_MS = 3;

interface WaitingCheck {
  item: BaseProofItem;
  rounds: number;
  resolve(check: BaseProofCheck): void;
  reject(error: Error): void;
}

/** A task that runs alone on a thread, without the contexts (added when it is sent). */
type SingleTask = DistributiveOmit<Exclude<CryptoTask, { op: 'verifyBaseProofs' }>, 'contexts'>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

interface WaitingSingle {
  start(): void;
}

/**
 * bbs-2023 verification and derivation in worker threads (piscina), so that a server uses every
 * core for the pairing arithmetic while its main thread keeps serving requests. Threads start on
 * first use and stop when idle.
 *
 * Work is not queued inside piscina: it waits here, in arrival order, while every thread is busy.
 * A thread that comes free takes the oldest work; if that is a base-proof check, every check that
 * waited goes along (up to MAX_BATCH) in one task, whose BBS signatures share one pairing product.
 * A lone request goes out at once, so batching only uses time a request would have spent queued.
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
  let running = 0;
  let loneCheckTimer: NodeJS.Timeout | undefined;
  let loneCheckWaited = false;
  /** Tasks waiting for a thread, in arrival order. */
  const waiting: Array<WaitingCheck | WaitingSingle> = [];

  /** Runs a task in the pool, counted so that waiting work knows when a thread is free. */
  async function submit<T>(task: CryptoTask): Promise<T> {
    running++;
    try {
      return (await inSpan(`bbs-2023 ${task.op}`, { 'coffer.crypto.operation': task.op }, () =>
        pool.run(task),
      )) as T;
    } finally {
      running--;
      dispatchWaiting();
    }
  }

  /** Hands the oldest waiting work to free threads; a base-proof check takes all others along. */
  function dispatchWaiting(): void {
    while (running < options.threads && waiting.length > 0) {
      const next = waiting[0]!;
      if ('start' in next) {
        waiting.shift();
        next.start();
        continue;
      }
      // A lone check waits a moment while another task runs, for a companion to share its
      // pairing product: on a loaded server that is CPU saved; on a quiet one it costs at most
      // LONE_CHECK_WAIT_MS before the free thread takes it.
      if (running > 0 && waiting.length === 1 && !loneCheckWaited) {
        loneCheckTimer ??= setTimeout(() => {
          loneCheckTimer = undefined;
          loneCheckWaited = true;
          dispatchWaiting();
        }, LONE_CHECK_WAIT_MS);
        break;
      }
      loneCheckWaited = false;
      if (loneCheckTimer !== undefined) {
        clearTimeout(loneCheckTimer);
        loneCheckTimer = undefined;
      }
      const batch: WaitingCheck[] = [];
      for (let i = 0; i < waiting.length && batch.length < MAX_BATCH; ) {
        const entry = waiting[i]!;
        if ('start' in entry) i++;
        else batch.push(...(waiting.splice(i, 1) as WaitingCheck[]));
      }
      void checkBatch(batch);
    }
  }

  async function checkBatch(batch: WaitingCheck[]): Promise<void> {
    let results: CryptoTaskResult[];
    try {
      results = await submit<CryptoTaskResult[]>({
        op: 'verifyBaseProofs',
        items: batch.map((entry) => entry.item),
        contexts: options.contexts.known(),
      });
    } catch (error) {
      for (const entry of batch) entry.reject(error as Error);
      return;
    }
    const retry: WaitingCheck[] = [];
    await Promise.all(
      batch.map(async (entry, i) => {
        const result = results[i]!;
        if (result.kind === 'done') return entry.resolve(result.value as BaseProofCheck);
        if (result.kind === 'error') return entry.reject(new Error(result.message));
        const found = entry.rounds + 1 < MAX_CONTEXT_ROUNDS && (await options.contexts.find(result.url));
        if (found) retry.push({ ...entry, rounds: entry.rounds + 1 });
        else entry.resolve({ ok: false, reason: unknownContextReason(result.url) });
      }),
    );
    if (retry.length > 0) {
      waiting.unshift(...retry);
      dispatchWaiting();
    }
  }

  /** A derivation's or derived-proof check's task, run when a thread is free. */
  function runOnce(task: CryptoTask): Promise<CryptoTaskResult> {
    return new Promise((resolve, reject) => {
      waiting.push({ start: () => submit<CryptoTaskResult>(task).then(resolve, reject) });
      dispatchWaiting();
    });
  }

  /** Runs a task until the worker lacks no context the registry has; the last result. */
  async function runWithContexts(task: SingleTask): Promise<CryptoTaskResult> {
    let result: CryptoTaskResult = { kind: 'unknown_context', url: '' };
    for (let round = 0; round < MAX_CONTEXT_ROUNDS; round++) {
      result = await runOnce({ ...task, contexts: options.contexts.known() } as CryptoTask);
      if (result.kind !== 'unknown_context' || !(await options.contexts.find(result.url))) break;
    }
    return result;
  }

  async function derive(task: Extract<SingleTask, { op: 'deriveDisclosure' }>) {
    const result = await runWithContexts(task);
    if (result.kind === 'done')
      return result.value as Awaited<ReturnType<Bbs2023Operations['deriveDisclosure']>>;
    throw result.kind === 'unknown_context' ? new UnknownContextError(result.url) : new Error(result.message);
  }

  async function verifyDerived(task: Extract<SingleTask, { op: 'verifyDerivedProof' }>) {
    const result = await runWithContexts(task);
    if (result.kind === 'done') return result.value as ProofCheck;
    if (result.kind === 'unknown_context')
      return { ok: false as const, reason: unknownContextReason(result.url) };
    throw new Error(result.message);
  }

  return {
    verifyBaseProof(document, issuerPublicKey, checkOptions) {
      return new Promise<BaseProofCheck>((resolve, reject) => {
        const item = { document, issuerPublicKey, ...(checkOptions && { options: checkOptions }) };
        waiting.push({ item, rounds: 0, resolve, reject });
        dispatchWaiting();
      });
    },
    deriveDisclosure: (document, pointers, presentationHeader, prepared) =>
      derive({ op: 'deriveDisclosure', document, pointers, presentationHeader, prepared }),
    verifyDerivedProof: (document, issuerPublicKey, presentationHeader) =>
      verifyDerived({ op: 'verifyDerivedProof', document, issuerPublicKey, presentationHeader }),
    close: () => pool.destroy(),
  };
}
