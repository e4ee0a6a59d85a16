import { fastBbs } from '../../../bbs/index.ts';
import { BUNDLED_CONTEXTS } from '../contexts/bundled-contexts.ts';
import { type DocumentLoader, UnknownContextError } from '../contexts/document-loader.ts';
import { describeJsonLdError } from '../contexts/jsonld-errors.ts';
import {
  type BaseProofCheck,
  checkSignedStatements,
  type SignedStatements,
  signedStatementsOf,
  type VerifyBaseProofOptions,
} from './base-proof.ts';
import { verifyDerivedProof } from './derived-proof.ts';
import { deriveDisclosure } from './disclosure.ts';
import type { SecuredDocument } from './shared.ts';

/**
 * A worker thread of the crypto pool (crypto-pool.ts). It cannot read the context registry, so
 * every task carries the registered contexts the main thread knows; a context it still lacks is
 * reported back, the main thread looks it up and runs the task again.
 */
export interface BaseProofItem {
  document: SecuredDocument;
  issuerPublicKey: Uint8Array;
  options?: VerifyBaseProofOptions;
}

export type CryptoTask =
  | { op: 'verifyBaseProofs'; items: BaseProofItem[]; contexts: Record<string, object> }
  | {
      op: 'deriveDisclosure';
      document: SecuredDocument;
      pointers: string[];
      presentationHeader: Uint8Array;
      prepared?: unknown;
      contexts: Record<string, object>;
    }
  | {
      op: 'verifyDerivedProof';
      document: SecuredDocument;
      issuerPublicKey: Uint8Array;
      presentationHeader: Uint8Array;
      contexts: Record<string, object>;
    };

export type CryptoTaskResult =
  | { kind: 'done'; value: unknown }
  | { kind: 'unknown_context'; url: string }
  /** One item of a batch failed unexpectedly (a fault of Coffer's, not of the credential). */
  | { kind: 'error'; message: string };

// Registered contexts never change, so what a task brought stays valid for the worker's life.
const seen = new Map<string, object>();

/** A document loader over what this worker knows; `missing()` names a context it lacked. */
function contextLoader(contexts: Record<string, object>) {
  let missing: string | undefined;
  const documentLoader: DocumentLoader = async (url) => {
    const document = BUNDLED_CONTEXTS.get(url) ?? seen.get(url) ?? contexts[url];
    if (!document) {
      missing = url;
      throw new UnknownContextError(url);
    }
    seen.set(url, document);
    return { contextUrl: null, documentUrl: url, document, tag: 'static' };
  };
  return { documentLoader, missing: () => missing };
}

/**
 * The base proofs of credentials that arrived together: the JSON-LD work one by one, then every
 * BBS signature that is left in one batch (bbs/sign.ts), so they share a pairing product.
 */
async function verifyBaseProofs(items: BaseProofItem[], contexts: Record<string, object>) {
  const results: CryptoTaskResult[] = [];
  const batch: Array<{ at: number; statements: SignedStatements; prepare: boolean }> = [];
  for (const [at, item] of items.entries()) {
    const loader = contextLoader(contexts);
    try {
      const before = await signedStatementsOf(item.document, item.issuerPublicKey, {
        documentLoader: loader.documentLoader,
      });
      // A context the loader lacked aborts JSON-LD processing, whatever became of it.
      const missing = loader.missing();
      if (missing) results[at] = { kind: 'unknown_context', url: missing };
      else if (!before.ok) results[at] = { kind: 'done', value: before };
      else batch.push({ at, statements: before.statements, prepare: item.options?.prepare === true });
    } catch (error) {
      const missing = loader.missing();
      const reason = describeJsonLdError(error);
      results[at] = missing
        ? { kind: 'unknown_context', url: missing }
        : reason
          ? { kind: 'done', value: { ok: false, reason } }
          : { kind: 'error', message: error instanceof Error ? error.message : String(error) };
    }
  }
  const checks = await checkSignedStatements(
    batch.map((entry) => entry.statements),
    fastBbs,
    { prepare: true },
  );
  batch.forEach((entry, i) => {
    const check = checks[i]!;
    const value: BaseProofCheck = check.ok && !entry.prepare ? { ok: true } : check;
    results[entry.at] = { kind: 'done', value };
  });
  return results;
}

/** A derivation, or a verifier's derived-proof check (whose JSON-LD failures become reasons). */
async function runSingle(task: Exclude<CryptoTask, { op: 'verifyBaseProofs' }>): Promise<CryptoTaskResult> {
  const loader = contextLoader(task.contexts);
  const deps = { bbs: fastBbs, jsonLd: { documentLoader: loader.documentLoader } };
  try {
    const value =
      task.op === 'deriveDisclosure'
        ? await deriveDisclosure(task.document, task.pointers, task.presentationHeader, deps, task.prepared)
        : await verifyDerivedProof(task.document, task.issuerPublicKey, task.presentationHeader, deps);
    const missing = loader.missing();
    return missing ? { kind: 'unknown_context', url: missing } : { kind: 'done', value };
  } catch (error) {
    const missing = loader.missing();
    if (missing) return { kind: 'unknown_context', url: missing };
    const reason = task.op === 'verifyDerivedProof' ? describeJsonLdError(error) : undefined;
    if (reason) return { kind: 'done', value: { ok: false, reason } };
    throw error;
  }
}

export default async function runCryptoTask(
  task: CryptoTask,
): Promise<CryptoTaskResult | CryptoTaskResult[]> {
  if (task.op === 'verifyBaseProofs') return verifyBaseProofs(task.items, task.contexts);
  return runSingle(task);
}
