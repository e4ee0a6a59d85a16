import { notFound } from '../errors.ts';
import { createLru } from '../lru.ts';
import type { IssuerDeps } from './issuer-deps.ts';
import { LIST_TTL, type ListMediaType, renderStatusList } from './status-lists.ts';

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
 * GET /v1/status-lists/{id}: the list in its kind's form (Token Status List as JWT, or CWT when
 * the Accept header prefers it to the JWT), with ttl, Cache-Control and an ETag that
 * moves with every status change.
 */
export async function servedStatusList(deps: IssuerDeps, listId: string, accept: string) {
  const list = await deps.db
    .selectFrom('status_lists')
    .selectAll()
    .where('id', '=', listId)
    .executeTakeFirst();
  if (!list) throw notFound('The status list');
  const wantsCwt =
    list.kind === 'token' &&
    qualityOf(accept, 'application/statuslist+cwt') > qualityOf(accept, 'application/statuslist+jwt');
  const cacheKey = `${list.id}:${list.version}:${wantsCwt ? 'cwt' : 'default'}:${Math.floor(deps.now().getTime() / 3_600_000)}`;
  let served = signed.get(cacheKey);
  if (!served) {
    const keys = await deps.issuerKeys(list.client_id);
    if (!keys) throw notFound('The status list');
    served = await renderStatusList(list, keys, deps.config.publicUrl, wantsCwt, deps.bbs2023, deps.now());
    signed.set(cacheKey, served);
  }
  return {
    ...served,
    etag: `"${list.version}-${wantsCwt ? 'cwt' : 'jwt'}"`,
    cacheControl: `public, max-age=${LIST_TTL}`,
  };
}
