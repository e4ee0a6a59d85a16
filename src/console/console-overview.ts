import type { Kysely } from 'kysely';
import type { AuditRecord } from '../audit/audit-export.ts';
import { pageAuditEvents } from '../audit/audit-list.ts';
import type { Database } from '../db/schema.ts';
import { countSubClients } from '../subclients/subclient-repository.ts';
import type { ActingAdmin } from './console-access.ts';

export interface Overview {
  subClients: number;
  users: number;
  issuedCredentials: number;
  verifierRequests: number;
  recentEvents: AuditRecord[];
}

const count = (row: { n: string | number | bigint } | undefined) => Number(row?.n ?? 0);

// Counts of the client's own rows; each is one indexed scan on the client's column.
const countUsers = (db: Kysely<Database>, clientId: number) =>
  db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('tenant_id', '=', clientId)
    .executeTakeFirst()
    .then(count);

const countIssued = (db: Kysely<Database>, clientId: number) =>
  db
    .selectFrom('issued_credentials')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('client_id', '=', clientId)
    .executeTakeFirst()
    .then(count);

const countVerifierRequests = (db: Kysely<Database>, clientId: number) =>
  db
    .selectFrom('verifier_requests')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('client_id', '=', clientId)
    .executeTakeFirst()
    .then(count);

/** The client's own counts and the ten newest events of its trail (as GET /v1/audit shows it). */
export async function overviewOf(db: Kysely<Database>, admin: ActingAdmin): Promise<Overview> {
  const clientId = admin.caller.clientId;
  const [subClients, users, issuedCredentials, verifierRequests, recent] = await Promise.all([
    admin.caller.isMaster ? countSubClients(db, clientId) : 0,
    countUsers(db, clientId),
    countIssued(db, clientId),
    countVerifierRequests(db, clientId),
    pageAuditEvents(db, admin.caller, { limit: 10 }),
  ]);
  return { subClients, users, issuedCredentials, verifierRequests, recentEvents: recent.data };
}
