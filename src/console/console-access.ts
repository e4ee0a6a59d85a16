import type { Kysely } from 'kysely';
import type { AuditContext } from '../audit/audit-events.ts';
import type { ApiCaller } from '../clients/client-repository.ts';
import { findClient } from '../clients/client-repository.ts';
import type { Database } from '../db/schema.ts';
import { forbidden, notFound } from '../errors.ts';
import { adminsOfIdentity, type ConsoleAdminRow, type ConsoleRole } from './console-admins.ts';
import type { ConsoleSessionRow } from './console-sessions.ts';

/** What a console page may do, named after the API surface it reaches. */
export type ConsoleAct =
  | 'read'
  | 'subclients'
  | 'apps'
  | 'issuer'
  | 'offers'
  | 'revocations'
  | 'verifier'
  | 'users';

const ACTS_OF: Record<ConsoleRole, readonly ConsoleAct[]> = {
  owner: ['read', 'subclients', 'apps', 'issuer', 'offers', 'revocations', 'verifier', 'users'],
  operator: ['read', 'offers', 'revocations', 'verifier', 'users'],
  auditor: ['read'],
};

export const mayDo = (role: ConsoleRole, act: ConsoleAct) => ACTS_OF[role].includes(act);

/** An administrator acting at one client: its role, and the client's own API rights. */
export interface ActingAdmin {
  id: number;
  role: ConsoleRole;
  clientName: string;
  /** Exactly what the client's API token would be: the console reaches no further. */
  caller: ApiCaller;
}

/** The clients the session's identity administers. */
export function adminsOfSession(db: Kysely<Database>, session: ConsoleSessionRow) {
  return adminsOfIdentity(db, {
    emailIndexes: session.email_index === null ? [] : [session.email_index],
    wallet: session.wallet_address,
  });
}

/**
 * The session's administrator at `clientId`. A client that grants the identity nothing is "not
 * found", the same answer as a client that does not exist: the console does not tell one
 * tenant's administrators which other tenants there are.
 */
export async function adminAt(
  db: Kysely<Database>,
  session: ConsoleSessionRow,
  clientId: number,
): Promise<ActingAdmin> {
  const admin: ConsoleAdminRow | undefined = (await adminsOfSession(db, session)).find(
    (a) => a.client_id === clientId,
  );
  const client = admin && (await findClient(db, clientId));
  if (!admin || !client) throw notFound('That client');
  return {
    id: admin.id,
    role: admin.role,
    clientName: client.name,
    caller: { clientId, isMaster: client.is_master === 1, parentId: client.parent_id },
  };
}

/** Refuses what the administrator's role does not allow (403, before anything is read or written). */
export function requireAct(admin: ActingAdmin, act: ConsoleAct): void {
  if (!mayDo(admin.role, act))
    throw forbidden(
      `An administrator with the role ${admin.role} cannot do this; ask an owner of the client.`,
    );
}

/** The audit context of a console act: the administrator, by id. */
export const adminContext = (admin: ActingAdmin, requestId: string): AuditContext => ({
  actor: `admin:${admin.id}`,
  requestId,
});
