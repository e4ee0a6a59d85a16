import type { Kysely } from 'kysely';
import type { Audit, AuditContext } from '../audit/audit-events.ts';
import type { ApiCaller } from '../clients/client-repository.ts';
import { isUniqueViolation } from '../db/dialect.ts';
import type { Database } from '../db/schema.ts';
import { CofferError, conflict, forbidden, notFound } from '../errors.ts';
import type { SecretMasker } from './secret-mask.ts';
import {
  type ClientRow,
  countSubClients,
  findSubClient,
  insertSubClient,
  listSubClients,
  updateSubClient,
} from './subclient-repository.ts';
import { normalizeSubClientBody } from './subclient-rules.ts';
import type { SubClient, SubClientBody } from './subclient-schemas.ts';

export interface SubClientDeps {
  db: Kysely<Database>;
  /** createSecretMasker(fieldCipher): how sealed secrets are shown. */
  mask: SecretMasker;
  audit: Audit;
}

/** Sub-client endpoints are for master clients only. */
function requireMaster(caller: ApiCaller): void {
  if (!caller.isMaster) throw forbidden('Only a master client may manage sub-clients.');
}

/**
 * The sub-client that `x-api-subclient-id` names, for every endpoint that accepts the header.
 * Only a master may narrow itself, and only to one of its own sub-clients; anything else is 403:
 * the caller asked to act somewhere it may not.
 */
export async function scopedSubClient(
  db: Kysely<Database>,
  caller: ApiCaller,
  scope: number,
): Promise<ClientRow> {
  if (!caller.isMaster) throw forbidden('Only a master client may use x-api-subclient-id.');
  const row = await findSubClient(db, caller.clientId, scope);
  if (!row) throw forbidden(`Sub-client ${scope} (x-api-subclient-id) is not one of yours.`);
  return row;
}

async function checkScope(deps: SubClientDeps, caller: ApiCaller, scope: number | undefined): Promise<void> {
  if (scope !== undefined) await scopedSubClient(deps.db, caller, scope);
}

export function presentSubClient(mask: SecretMasker, row: ClientRow): SubClient {
  return {
    client_id: row.client_id,
    name: row.name,
    domain: row.domain ?? '',
    subdomain: row.subdomain ?? '',
    timezone: row.timezone ?? '',
    address_1: row.address_1 ?? '',
    address_2: row.address_2 ?? '',
    country: row.country ?? '',
    province: row.province ?? '',
    city: row.city ?? '',
    from_email_address: row.from_email_address ?? '',
    esp_token: mask(row.esp_token_sealed, `clients/${row.client_id}/esp_token`),
    recaptcha_key: mask(row.recaptcha_key_sealed, `clients/${row.client_id}/recaptcha_key`),
    recaptcha_threshold: row.recaptcha_threshold,
    recaptcha_enabled: row.recaptcha_enabled === 1,
    created_at: row.created_at,
    privacy_link: row.privacy_link ?? '',
  };
}

const subdomainTaken = (subdomain: string) => conflict(`The subdomain "${subdomain}" is already taken.`);

export async function createSubClient(
  deps: SubClientDeps,
  caller: ApiCaller,
  scope: number | undefined,
  body: SubClientBody,
  context: AuditContext,
): Promise<SubClient> {
  requireMaster(caller);
  if (scope !== undefined) {
    throw new CofferError(
      'invalid_request',
      'x-api-subclient-id cannot be used to create a sub-client: sub-clients have no sub-clients.',
    );
  }
  const fields = normalizeSubClientBody(body);
  try {
    const row = await deps.db.transaction().execute(async (tx) => {
      const inserted = await insertSubClient(tx, caller.clientId, fields);
      const targets = { subclient_id: inserted.client_id };
      await deps.audit.record(tx, {
        ...context,
        clientId: caller.clientId,
        type: 'subclient.create',
        targets,
      });
      return inserted;
    });
    return presentSubClient(deps.mask, row);
  } catch (error) {
    if (isUniqueViolation(error)) throw subdomainTaken(fields.subdomain);
    throw error;
  }
}

export async function replaceSubClient(
  deps: SubClientDeps,
  caller: ApiCaller,
  scope: number | undefined,
  id: number,
  body: SubClientBody,
  context: AuditContext,
): Promise<SubClient> {
  requireMaster(caller);
  await checkScope(deps, caller, scope);
  if (scope !== undefined && scope !== id)
    throw forbidden(`x-api-subclient-id limits this request to sub-client ${scope}.`);
  const fields = normalizeSubClientBody(body);
  let row: ClientRow | undefined;
  try {
    row = await deps.db.transaction().execute(async (tx) => {
      const updated = await updateSubClient(tx, caller.clientId, id, fields);
      const targets = { subclient_id: id };
      if (updated)
        await deps.audit.record(tx, {
          ...context,
          clientId: caller.clientId,
          type: 'subclient.update',
          targets,
        });
      return updated;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw subdomainTaken(fields.subdomain);
    throw error;
  }
  if (!row) throw notFound(`Sub-client ${id}`);
  return presentSubClient(deps.mask, row);
}

export async function readSubClient(
  deps: SubClientDeps,
  caller: ApiCaller,
  scope: number | undefined,
  id: number,
): Promise<SubClient> {
  requireMaster(caller);
  await checkScope(deps, caller, scope);
  if (scope !== undefined && scope !== id)
    throw forbidden(`x-api-subclient-id limits this request to sub-client ${scope}.`);
  const row = await findSubClient(deps.db, caller.clientId, id);
  if (!row) throw notFound(`Sub-client ${id}`);
  return presentSubClient(deps.mask, row);
}

export interface SubClientPage {
  data: SubClient[];
  per_page: number;
  current_page: number;
  total_pages: number;
}

export async function pageSubClients(
  deps: SubClientDeps,
  caller: ApiCaller,
  scope: number | undefined,
  page: number,
  perPage: number,
): Promise<SubClientPage> {
  requireMaster(caller);
  if (scope !== undefined) {
    // Narrowed to one sub-client: a list of exactly that one.
    const row = await scopedSubClient(deps.db, caller, scope);
    return {
      data: page === 1 ? [presentSubClient(deps.mask, row)] : [],
      per_page: perPage,
      current_page: page,
      total_pages: 1,
    };
  }
  const total = await countSubClients(deps.db, caller.clientId);
  const rows =
    total > (page - 1) * perPage
      ? await listSubClients(deps.db, caller.clientId, perPage, (page - 1) * perPage)
      : [];
  return {
    data: rows.map((row) => presentSubClient(deps.mask, row)),
    per_page: perPage,
    current_page: page,
    total_pages: Math.ceil(total / perPage),
  };
}
