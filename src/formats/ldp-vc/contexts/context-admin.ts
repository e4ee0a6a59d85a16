import { createHash } from 'node:crypto';
import jsonld from 'jsonld';
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../../db/dialect.ts';
import type { Database } from '../../../db/schema.ts';
import { CofferError } from '../../../errors.ts';
import { BUNDLED_CONTEXTS } from './bundled-contexts.ts';
import { findRegisteredContext, insertRegisteredContext } from './context-repository.ts';
import { createDocumentLoader } from './document-loader.ts';
import { describeJsonLdError } from './jsonld-errors.ts';

const MAX_CONTEXT_BYTES = 1024 * 1024;

const invalid = (why: string) => new CofferError('invalid_request', why);

/**
 * Registers a JSON-LD context that stored credentials may use (`coffer context add`). A context
 * is immutable once registered: credentials signed against it would change meaning otherwise.
 * Registering the same document again is harmless.
 */
export async function registerContext(
  db: Kysely<Database>,
  url: string,
  text: string,
): Promise<{ url: string; sha256: string; registered: boolean }> {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {}
  if (!parsed || !['https:', 'http:'].includes(parsed.protocol) || url.length > 2048) {
    throw invalid(`--url must be the context's absolute http(s) URL, got "${url.slice(0, 100)}".`);
  }
  if (BUNDLED_CONTEXTS.has(url))
    throw invalid(`${url} is one of the bundled contexts; it needs no registration.`);
  if (Buffer.byteLength(text) > MAX_CONTEXT_BYTES) throw invalid('The context file is larger than 1 MiB.');
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw invalid('The context file is not JSON.');
  }
  if (!document || typeof document !== 'object' || Array.isArray(document) || !('@context' in document)) {
    throw invalid('The context file must be a JSON object with an "@context" member.');
  }
  const canonical = JSON.stringify(document);
  const sha256 = createHash('sha256').update(canonical).digest('hex');

  const existing = await findRegisteredContext(db, url);
  if (existing) return unchangedOrConflict(existing.sha256, url, sha256);

  // Process it as a credential would, so that a broken context is refused now, not at store time.
  const loader = createDocumentLoader(async (wanted) =>
    wanted === url
      ? (document as object)
      : await findRegisteredContext(db, wanted).then((row) => row && JSON.parse(row.document)),
  );
  try {
    await jsonld.expand({ '@context': url }, { documentLoader: loader });
  } catch (error) {
    throw invalid(`The context cannot be used: ${describeJsonLdError(error) ?? (error as Error).message}.`);
  }

  try {
    await insertRegisteredContext(db, { url, document: canonical, sha256 });
  } catch (error) {
    const winner = isUniqueViolation(error) ? await findRegisteredContext(db, url) : undefined;
    if (winner) return unchangedOrConflict(winner.sha256, url, sha256);
    throw error;
  }
  return { url, sha256, registered: true };
}

function unchangedOrConflict(stored: string, url: string, sha256: string) {
  if (stored !== sha256) {
    throw new CofferError(
      'conflict',
      `${url} is registered already with other content; a registered context never changes, since credentials signed against it rely on its meaning.`,
    );
  }
  return { url, sha256, registered: false };
}
