import { BUNDLED_CONTEXTS } from './bundled-contexts.ts';

/** A JSON-LD document loader (the jsonld.js interface). */
export type DocumentLoader = (url: string) => Promise<{
  contextUrl: null;
  documentUrl: string;
  document: object;
  tag: 'static';
}>;

/** A context URL that is neither bundled nor registered. */
export class UnknownContextError extends Error {
  override readonly name = 'UnknownContextError';
  readonly url: string;
  constructor(url: string) {
    super(`the JSON-LD context ${url} is not known (register it with coffer context add)`);
    this.url = url;
  }
}

/** The registered contexts a process has read, and a document loader over them and the bundled set. */
export interface ContextRegistry {
  documentLoader: DocumentLoader;
  /** Reads a registered context (kept once read); undefined when it is not registered. */
  find(url: string): Promise<object | undefined>;
  /** The registered contexts read so far, e.g. to hand to worker threads. */
  known(): Record<string, object>;
}

/**
 * Contexts from the bundled set, then from the registry (`coffer context add`, read on a miss
 * so a context registered while the server runs is found at once). A registered context never
 * changes, so once read it is kept; unknown URLs are not remembered. The `static` tag lets
 * jsonld.js keep the processed context in its process-wide cache instead of processing it
 * again for every credential.
 */
export function createContextRegistry(
  findRegistered: (url: string) => Promise<object | undefined>,
): ContextRegistry {
  const registered = new Map<string, object>();
  const find = async (url: string) => {
    const document = registered.get(url) ?? (await findRegistered(url));
    if (document) registered.set(url, document);
    return document;
  };
  return {
    find,
    known: () => Object.fromEntries(registered),
    documentLoader: async (url) => {
      const document = BUNDLED_CONTEXTS.get(url) ?? (await find(url));
      if (!document) throw new UnknownContextError(url);
      return { contextUrl: null, documentUrl: url, document, tag: 'static' };
    },
  };
}

export function createDocumentLoader(
  findRegistered: (url: string) => Promise<object | undefined>,
): DocumentLoader {
  return createContextRegistry(findRegistered).documentLoader;
}
