import type { Kysely } from 'kysely';
import type { ApiCaller } from '../clients/client-repository.ts';
import type { Database } from '../db/schema.ts';
import { invalidField } from '../errors.ts';
import { type AuditRecord, presentAuditRow } from './audit-export.ts';
import type { AuditQuery } from './audit-schemas.ts';

// The cursor names the last row shown; it is opaque so its form may change.
const CURSOR = /^c1\.([1-9]\d{0,15})$/;

const cursorOf = (id: number) => Buffer.from(`c1.${id}`).toString('base64url');

function idOfCursor(cursor: string): number {
  const match = CURSOR.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!match || !/^[A-Za-z0-9_-]+$/.test(cursor))
    throw invalidField('/querystring/cursor', 'is not a cursor this endpoint gave');
  return Number(match[1]);
}

function timeOf(value: string | undefined, field: string): string | undefined {
  if (value === undefined) return undefined;
  const time = new Date(value);
  if (Number.isNaN(time.getTime()))
    throw invalidField(`/querystring/${field}`, 'must be an RFC 3339 date-time');
  return time.toISOString();
}

/**
 * A tenant's events, newest first: its own and, for a master client, its sub-clients'. Pages
 * follow the row id, so an event written while a client pages appears on no page twice.
 */
export async function pageAuditEvents(
  db: Kysely<Database>,
  caller: ApiCaller,
  query: AuditQuery,
): Promise<{ data: AuditRecord[]; next_cursor: string | null }> {
  const before = query.cursor === undefined ? undefined : idOfCursor(query.cursor);
  const since = timeOf(query.since, 'since');
  const until = timeOf(query.until, 'until');
  let select = db
    .selectFrom('audit_events')
    .selectAll()
    .where((eb) =>
      caller.isMaster
        ? eb.or([
            eb('client_id', '=', caller.clientId),
            eb(
              'client_id',
              'in',
              eb.selectFrom('clients').select('client_id').where('parent_id', '=', caller.clientId),
            ),
          ])
        : eb('client_id', '=', caller.clientId),
    );
  if (query.type !== undefined) select = select.where('event_type', '=', query.type);
  if (since !== undefined) select = select.where('occurred_at', '>=', since);
  if (until !== undefined) select = select.where('occurred_at', '<', until);
  if (before !== undefined) select = select.where('id', '<', before);
  const rows = await select
    .orderBy('id', 'desc')
    .limit(query.limit + 1)
    .execute();
  const page = rows.slice(0, query.limit);
  return {
    data: page.map(presentAuditRow),
    next_cursor: rows.length > query.limit ? cursorOf(page.at(-1)!.id) : null,
  };
}
