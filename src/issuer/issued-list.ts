import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { invalidField } from '../errors.ts';
import { ISSUED_PAGE, issuedCredentialsOf } from './issuer-repository.ts';

// The cursor names the last row shown (issuance time and id); opaque so its form may change.
const CURSOR = /^i1\.(\d{4}-\d{2}-\d{2}T[0-9:.]{8,12}Z)\.([A-Za-z0-9:_.-]{1,128})$/;

const cursorOf = (row: { issued_at: string; id: string }) =>
  Buffer.from(`i1.${row.issued_at}.${row.id}`).toString('base64url');

function positionOf(cursor: string): { issuedAt: string; id: string } {
  const match =
    /^[A-Za-z0-9_-]+$/.test(cursor) && CURSOR.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!match) throw invalidField('/querystring/cursor', 'is not a cursor this endpoint gave');
  return { issuedAt: match[1]!, id: match[2]! };
}

/**
 * A page of the tenant's issued credentials, oldest first, and the cursor of the next page (null
 * on the last). The response envelope stays `{ data }`; the route gives the cursor in a Link header.
 */
export async function pageIssuedCredentials(
  db: Kysely<Database>,
  clientId: number,
  query: { offer?: string | undefined; cursor?: string | undefined },
  limit = ISSUED_PAGE,
) {
  const after = query.cursor === undefined ? undefined : positionOf(query.cursor);
  const rows = await issuedCredentialsOf(db, clientId, query.offer, after, limit);
  const page = rows.slice(0, limit);
  return { rows: page, next: rows.length > limit ? cursorOf(page.at(-1)!) : null };
}

/** The Link header of the next page: the same query, with the next cursor. */
export function nextLink(publicUrl: string, query: { offer?: string | undefined }, next: string): string {
  const url = new URL('/v1/issuer/credentials', publicUrl);
  if (query.offer !== undefined) url.searchParams.set('offer', query.offer);
  url.searchParams.set('cursor', next);
  return `<${url.href}>; rel="next"`;
}
