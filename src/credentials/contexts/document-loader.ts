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

/**
 * Contexts from the bundled set, then from the registry (`coffer context add`, read on a miss
 * so a context registered while the server runs is found at once). A registered context never
 * changes, so once read it is kept; unknown URLs are not remembered. The `static` tag lets
 * jsonld.js keep the processed context in its process-wide cache instead of processing it
 * again for every credential.
 */
export function createDocumentLoader(
  findRegistered: (url: string) => Promise<object | undefined>,
): DocumentLoader {
  const registered = new Map<string, object>();
  return async (url) => {
    const document = BUNDLED_CONTEXTS.get(url) ?? registered.get(url) ?? (await findRegistered(url));
    if (!document) throw new UnknownContextError(url);
    if (!BUNDLED_CONTEXTS.has(url)) registered.set(url, document);
    return { contextUrl: null, documentUrl: url, document, tag: 'static' };
  };
}
