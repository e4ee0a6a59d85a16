import { fastBbs } from '../bbs/index.ts';
import type { VerifyBaseProofOptions } from './bbs-2023/base-proof.ts';
import { deriveDisclosure } from './bbs-2023/disclosure.ts';
import { checkBaseProof } from './bbs-2023/operations.ts';
import type { SecuredDocument } from './bbs-2023/shared.ts';
import { BUNDLED_CONTEXTS } from './contexts/bundled-contexts.ts';
import { type DocumentLoader, UnknownContextError } from './contexts/document-loader.ts';

/**
 * A worker thread of the crypto pool (crypto-pool.ts). It cannot read the context registry, so
 * every task carries the registered contexts the main thread knows; a context it still lacks is
 * reported back, the main thread looks it up and runs the task again.
 */
export type CryptoTask =
  | {
      op: 'verifyBaseProof';
      document: SecuredDocument;
      issuerPublicKey: Uint8Array;
      options?: VerifyBaseProofOptions;
      contexts: Record<string, object>;
    }
  | {
      op: 'deriveDisclosure';
      document: SecuredDocument;
      pointers: string[];
      presentationHeader: Uint8Array;
      prepared?: unknown;
      contexts: Record<string, object>;
    };

export type CryptoTaskResult = { kind: 'done'; value: unknown } | { kind: 'unknown_context'; url: string };

// Registered contexts never change, so what a task brought stays valid for the worker's life.
const seen = new Map<string, object>();

export default async function runCryptoTask(task: CryptoTask): Promise<CryptoTaskResult> {
  let missing: string | undefined;
  const documentLoader: DocumentLoader = async (url) => {
    const document = BUNDLED_CONTEXTS.get(url) ?? seen.get(url) ?? task.contexts[url];
    if (!document) {
      missing = url;
      throw new UnknownContextError(url);
    }
    seen.set(url, document);
    return { contextUrl: null, documentUrl: url, document, tag: 'static' };
  };
  const deps = { bbs: fastBbs, jsonLd: { documentLoader } };
  try {
    const value =
      task.op === 'verifyBaseProof'
        ? await checkBaseProof(task.document, task.issuerPublicKey, deps, task.options)
        : await deriveDisclosure(task.document, task.pointers, task.presentationHeader, deps, task.prepared);
    // A context the loader lacked aborts JSON-LD processing, whatever the operation made of it.
    if (missing) return { kind: 'unknown_context', url: missing };
    return { kind: 'done', value };
  } catch (error) {
    if (missing) return { kind: 'unknown_context', url: missing };
    throw error;
  }
}
