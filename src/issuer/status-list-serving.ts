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
  // The list's bytes (tens of kB) are read only when this version is not signed yet.
  const head = await deps.db
    .selectFrom('status_lists')
    .select(['id', 'client_id', 'kind', 'version'])
    .where('id', '=', listId)
    .executeTakeFirst();
  if (!head) throw notFound('The status list');
  const wantsCwt =
    head.kind === 'token' &&
    qualityOf(accept, 'application/statuslist+cwt') > qualityOf(accept, 'application/statuslist+jwt');
  const hour = Math.floor(deps.now().getTime() / 3_600_000);
  const keyOf = (version: number) => `${head.id}:${version}:${wantsCwt ? 'cwt' : 'default'}:${hour}`;
  let version = head.version;
  let served = signed.get(keyOf(version));
  if (!served) {
    const list = await deps.db
      .selectFrom('status_lists')
      .selectAll()
      .where('id', '=', listId)
      .executeTakeFirstOrThrow();
    const keys = await deps.issuerKeys(list.client_id);
    if (!keys) throw notFound('The status list');
    version = list.version;
    served = await renderStatusList(list, keys, deps.config.publicUrl, wantsCwt, deps.bbs2023, deps.now());
    signed.set(keyOf(version), served);
  }
  return {
    ...served,
    etag: `"${version}-${wantsCwt ? 'cwt' : 'jwt'}"`,
    cacheControl: `public, max-age=${LIST_TTL}`,
  };
}
