import type { Kysely } from 'kysely';
import type { ApiCaller } from '../clients/client-repository.ts';
import type { Database } from '../db/schema.ts';

/** An app (an OpenID Connect relying party) as the console shows it: its registration, no secret. */
export interface AppRegistration {
  client_id: number;
  name: string;
  /** A public client (native or browser app) has no secret and always uses PKCE. */
  confidential: boolean;
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  grant_types: string[];
  dpop_bound: boolean;
  require_par: boolean;
  verifier: boolean;
  /** The claims that name the account when people log in with a wallet; null when not offered. */
  wallet_login: { account_claim: string[]; trusted_issuers: number } | null;
}

const list = (json: string): string[] => {
  const value: unknown = JSON.parse(json);
  return Array.isArray(value) ? value.map(String) : [];
};

function walletLoginOf(json: string | null): AppRegistration['wallet_login'] {
  if (!json) return null;
  const value = JSON.parse(json) as { account_claim?: unknown; trusted_issuers?: unknown };
  return {
    account_claim: Array.isArray(value.account_claim) ? value.account_claim.map(String) : [],
    trusted_issuers: Array.isArray(value.trusted_issuers) ? value.trusted_issuers.length : 0,
  };
}

/**
 * The apps a client speaks for: itself and, for a master, its sub-clients (the first 100), the
 * same clients its API token reaches. An owner changes them in the console (console-apps-acts.ts);
 * the API gives no client a way to.
 */
export async function appsOf(
  db: Kysely<Database>,
  caller: ApiCaller,
  /** Only this one, when the caller reaches it. */
  onlyId?: number,
): Promise<AppRegistration[]> {
  let query = db
    .selectFrom('clients')
    .select([
      'client_id',
      'name',
      'client_secret_hash',
      'redirect_uris',
      'post_logout_redirect_uris',
      'grant_types',
      'dpop_bound',
      'require_par',
      'is_verifier',
      'wallet_login',
    ])
    .where((eb) =>
      caller.isMaster
        ? eb.or([eb('client_id', '=', caller.clientId), eb('parent_id', '=', caller.clientId)])
        : eb('client_id', '=', caller.clientId),
    )
    .orderBy('client_id')
    .limit(101);
  if (onlyId !== undefined) query = query.where('client_id', '=', onlyId);
  const rows = await query.execute();
  return rows.map((row) => ({
    client_id: row.client_id,
    name: row.name,
    confidential: row.client_secret_hash !== null,
    redirect_uris: list(row.redirect_uris),
    post_logout_redirect_uris: list(row.post_logout_redirect_uris),
    grant_types: list(row.grant_types),
    dpop_bound: row.dpop_bound === 1,
    require_par: row.require_par === 1,
    verifier: row.is_verifier === 1,
    wallet_login: walletLoginOf(row.wallet_login),
  }));
}
