import { notFound } from '../errors.ts';
import { createLru } from '../lru.ts';
import type { IssuerDeps } from './issuer-deps.ts';
import { openRetiredKey } from './issuer-keys.ts';
import { findRetiredKey } from './issuer-repository.ts';
import { LIST_TTL, type ListMediaType, type ListSigner, renderStatusList } from './status-lists.ts';

/** A list is signed once per version and form, then served from memory until it changes. */
const signed = createLru<string, { mediaType: ListMediaType; body: string | Uint8Array }>(256);

/**
 * The weight an Accept header gives a media type (RFC 9110 §12.5.1): its q-value (1 when none) by
 * the most specific range that matches it, 0 when none does. Media types are case-insensitive.
 */
function qualityOf(accept: string, mediaType: string): number {
  let quality = 0;
  let specificity = -1;
  for (const range of accept.toLowerCase().split(',')) {
    const [type = '', ...parameters] = range.split(';').map((part) => part.trim());
    const matched =
      type === mediaType ? 2 : type === `${mediaType.split('/')[0]}/*` ? 1 : type === '*/*' ? 0 : -1;
    if (matched < 0 || matched < specificity) continue;
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    specificity = matched;
    quality = Number.isFinite(value) ? value : 0;
  }
  return quality;
}

/**
 * When a list version is signed: at its last change, or at the start of the current hour when
 * that is later (so a list is re-signed hourly, long before its 24-hour `exp`). Every instance
 * derives the same instant, so the same version says the same thing everywhere, and the ETag
 * can name it.
 */
function signingInstant(now: Date, updatedAt: string): Date {
  const hour = Math.floor(now.getTime() / 3_600_000) * 3_600_000;
  const changed = Math.floor(new Date(updatedAt).getTime() / 1000) * 1000;
  return new Date(Math.max(hour, changed));
}

/** The list's own key: the issuer's current one, or the earlier key it was started with. */
async function signerOf(deps: IssuerDeps, clientId: number, signingKeyId: string): Promise<ListSigner> {
  const keys = await deps.issuerKeys(clientId);
  if (!keys) throw notFound('The status list');
  if (keys.signingKeyId === signingKeyId)
    return { es256: keys.es256, issuerId: keys.issuerId, bbs: keys.bbs };
  const retired = await findRetiredKey(deps.db, clientId, signingKeyId);
  if (!retired) throw notFound('The status list');
  return { es256: openRetiredKey(deps.cipher, retired), issuerId: keys.issuerId, bbs: keys.bbs };
}

/**
 * GET /v1/status-lists/{id}: the list in its kind's form (Token Status List as JWT, or CWT when
 * the Accept header prefers it to the JWT), signed by the key the list belongs to, with ttl,
 * Cache-Control and a weak ETag naming the version, key and `iat` it was signed with: instances
 * sign the same content (ECDSA signatures differ, hence weak), and any change moves it.
 */
export async function servedStatusList(deps: IssuerDeps, listId: string, accept: string) {
  // The list's bytes (tens of kB) are read only when this version is not signed yet.
  const head = await deps.db
    .selectFrom('status_lists')
    .select(['id', 'client_id', 'kind', 'version', 'signing_key_id', 'updated_at'])
    .where('id', '=', listId)
    .executeTakeFirst();
  if (!head) throw notFound('The status list');
  const wantsCwt =
    head.kind === 'token' &&
    qualityOf(accept, 'application/statuslist+cwt') > qualityOf(accept, 'application/statuslist+jwt');
  const form = wantsCwt ? 'cwt' : head.kind === 'token' ? 'jwt' : head.kind;
  const now = deps.now();
  const entityTag = (list: typeof head) =>
    `W/"${list.version}.${list.signing_key_id}.${signingInstant(now, list.updated_at).getTime() / 1000}.${form}"`;
  let etag = entityTag(head);
  let served = signed.get(`${head.id}:${etag}`);
  if (!served) {
    const list = await deps.db
      .selectFrom('status_lists')
      .selectAll()
      .where('id', '=', listId)
      .executeTakeFirst();
    if (!list) throw notFound('The status list');
    // It may have changed since the head was read: what is signed and named is this row.
    etag = entityTag(list);
    const signer = await signerOf(deps, list.client_id, list.signing_key_id);
    const iat = signingInstant(now, list.updated_at);
    served = await renderStatusList(list, signer, deps.config.publicUrl, wantsCwt, deps.bbs2023, iat);
    signed.set(`${head.id}:${etag}`, served);
  }
  return { ...served, etag, cacheControl: `public, max-age=${LIST_TTL}` };
}
