import { invalidField, notFound } from '../errors.ts';
import { authorizationRequestOf, requestUriOf, type StoredRequest } from './request-object.ts';
import type { VerifierDeps } from './verifier-deps.ts';
import { pageClientRequests, type VerifierRequestRow } from './verifier-repository.ts';
import { currentRequest } from './verifier-service.ts';

/** What a request asked for, per credential query: enough to tell requests apart in a list. */
export interface AskedCredential {
  id: string;
  format: string;
  types: string[];
}

export interface VerifierRequestSummary {
  id: string;
  status: VerifierRequestRow['status'];
  created_at: string;
  expires_at: string;
  asked: AskedCredential[];
  /** Same-device requests are read with the wallet redirect's response_code, which only the app has. */
  same_device: boolean;
  /** Coffer's own request for a person logging in with a wallet. */
  wallet_login: boolean;
}

function askedOf(stored: StoredRequest): AskedCredential[] {
  return stored.dcqlQuery.credentials.map((query) => {
    const meta = (query.meta ?? {}) as Record<string, unknown>;
    const types = [
      ...((meta['vct_values'] as string[] | undefined) ?? []),
      ...(typeof meta['doctype_value'] === 'string' ? [meta['doctype_value']] : []),
      ...((meta['type_values'] as string[][] | undefined) ?? []).map((set) => set.join(' + ')),
    ];
    return { id: query.id, format: query.format, types };
  });
}

function summaryOf(deps: VerifierDeps, row: VerifierRequestRow): VerifierRequestSummary {
  const stored = JSON.parse(row.request) as StoredRequest;
  // As a read through the API would find it: an unanswered request past its time is expired.
  const expired =
    (row.status === 'created' || row.status === 'retrieved') && row.expires_at <= deps.now().toISOString();
  return {
    id: row.id,
    status: expired ? 'expired' : row.status,
    created_at: row.created_at,
    expires_at: row.expires_at,
    asked: askedOf(stored),
    same_device: row.response_code_hash !== null || stored.redirectUri !== null,
    wallet_login: row.interaction_id !== null,
  };
}

// The cursor names the last request shown; it is opaque so its form may change.
const CURSOR = /^v1\|([0-9T:.Z-]{10,40})\|([A-Za-z0-9_-]{1,64})$/;
const cursorOf = (row: VerifierRequestRow) =>
  Buffer.from(`v1|${row.created_at}|${row.id}`).toString('base64url');

function afterCursor(cursor: string | undefined) {
  if (cursor === undefined) return undefined;
  const match = /^[A-Za-z0-9_-]{1,200}$/.test(cursor)
    ? CURSOR.exec(Buffer.from(cursor, 'base64url').toString('latin1'))
    : null;
  if (!match) throw invalidField('/querystring/cursor', 'is not a cursor this list gave');
  return { createdAt: match[1]!, id: match[2]! };
}

/** A client's presentation requests, newest first, paged; never a claim or a check. */
export async function listVerifierRequests(
  deps: VerifierDeps,
  clientId: number,
  query: { cursor?: string | undefined; limit: number },
): Promise<{ data: VerifierRequestSummary[]; next_cursor: string | null }> {
  const rows = await pageClientRequests(deps.db, clientId, afterCursor(query.cursor), query.limit + 1);
  const page = rows.slice(0, query.limit);
  return {
    data: page.map((row) => summaryOf(deps, row)),
    next_cursor: rows.length > query.limit ? cursorOf(page.at(-1)!) : null,
  };
}

/**
 * One request of the client, without its result: its state and, while a wallet may fetch it, the
 * openid4vp:// request. Another client's request is "not found", as the API answers.
 */
export async function verifierRequestOf(deps: VerifierDeps, clientId: number, id: string) {
  const row = await currentRequest(deps, id);
  if (row.client_id !== clientId) throw notFound('The presentation request');
  const dcApi = row.stored.responseMode.startsWith('dc_api');
  return {
    ...summaryOf(deps, row),
    status: row.status,
    page: `${deps.config.publicUrl}/verify/${id}`,
    ...(dcApi
      ? {}
      : { authorization_request: authorizationRequestOf(row.stored.clientId, requestUriOf(deps, id)) }),
  };
}
