import type { Kysely } from 'kysely';
import type { Audit, AuditContext } from '../audit/audit-events.ts';
import { createClient, rotateClientSecret, setClientSettings } from '../clients/client-admin.ts';
import type { Database } from '../db/schema.ts';
import { CofferError, notFound } from '../errors.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';
import { checkWalletLogin } from '../verifier/wallet-login.ts';
import type { ActingAdmin } from './console-access.ts';
import { type AppRegistration, appsOf } from './console-apps.ts';

/**
 * The owner's changes to app registrations, with the services the `coffer client` command uses
 * and the same audit event types (client.create, client.update, client.secret_rotate), so the
 * trail reads the same whoever acted. Console only: docs/console.md says why not under /v1.
 */
export interface ConsoleAppsActDeps {
  db: Kysely<Database>;
  cipher: FieldCipher;
  audit: Audit;
}

/** The app a form names, if the administrator's client reaches it; otherwise 404, like a missing one. */
export async function reachableApp(
  db: Kysely<Database>,
  admin: ActingAdmin,
  appId: number,
): Promise<AppRegistration> {
  const app = (await appsOf(db, admin.caller, appId))[0];
  if (!app) throw notFound('That app');
  return app;
}

/** One URI a line; blank lines are nothing, so an emptied field removes every URI. */
const lines = (text: string | undefined) =>
  (text ?? '')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);

export interface AppForm {
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  grantTypes: string[];
}

export function appFormOf(body: Record<string, string>): AppForm {
  const refresh = body['refresh_token'];
  if (refresh !== undefined && refresh !== 'yes' && refresh !== 'no')
    throw new CofferError('invalid_request', 'The refresh-token grant is yes or no.');
  return {
    redirectUris: lines(body['redirect_uris']),
    postLogoutRedirectUris: lines(body['post_logout_redirect_uris']),
    grantTypes: refresh === 'yes' ? ['refresh_token'] : [],
  };
}

/** A master's new app: a sub-client of its own (client_id, and a secret unless public). */
export async function createApp(
  deps: ConsoleAppsActDeps,
  admin: ActingAdmin,
  body: Record<string, string>,
  context: AuditContext,
): Promise<{ client_id: number; client_secret: string | null }> {
  if (!admin.caller.isMaster)
    throw new CofferError(
      'invalid_request',
      'Only a master client has apps of its own; edit this client’s registration instead.',
    );
  const kind = body['kind'];
  if (kind !== 'public' && kind !== 'confidential')
    throw new CofferError('invalid_request', 'An app is public or confidential.');
  const form = appFormOf(body);
  const created = await createClient(
    deps.db,
    { name: body['name'] ?? '', parentId: admin.caller.clientId, public: kind === 'public', ...form },
    (tx, clientId) =>
      deps.audit.record(tx, {
        ...context,
        clientId,
        type: 'client.create',
        targets: { client_id: clientId },
      }),
  );
  // The new client's API token is dropped, never shown: an app logs people in with its
  // client_id and secret; a token would give it the master's API surface for its own tenant.
  return { client_id: created.client_id, client_secret: created.client_secret };
}

/** Runs one change to a registration with its audit event, in one transaction. */
function audited<T>(
  deps: ConsoleAppsActDeps,
  appId: number,
  type: string,
  context: AuditContext,
  act: (tx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  return deps.db.transaction().execute(async (tx) => {
    const result = await act(tx);
    await deps.audit.record(tx, { ...context, clientId: appId, type, targets: { client_id: appId } });
    return result;
  });
}

export function updateApp(
  deps: ConsoleAppsActDeps,
  appId: number,
  body: Record<string, string>,
  context: AuditContext,
): Promise<void> {
  const form = appFormOf(body);
  return audited(deps, appId, 'client.update', context, (tx) =>
    setClientSettings(tx, deps.cipher, appId, form),
  );
}

export function rotateAppSecret(
  deps: ConsoleAppsActDeps,
  appId: number,
  context: AuditContext,
): Promise<{ client_secret: string }> {
  return audited(deps, appId, 'client.secret_rotate', context, (tx) => rotateClientSecret(tx, appId));
}

/** Wallet log-in off (`off`), or on with the JSON `coffer client set --wallet-login` takes. */
export async function setAppWalletLogin(
  deps: ConsoleAppsActDeps,
  appId: number,
  body: Record<string, string>,
  context: AuditContext,
): Promise<void> {
  const walletLogin =
    body['wallet_login'] === 'off'
      ? null
      : body['wallet_login'] === 'on'
        ? await checkWalletLogin(deps.db, appId, body['wallet_login_json'] ?? '')
        : undefined;
  if (walletLogin === undefined) throw new CofferError('invalid_request', 'Wallet log-in is on or off.');
  await audited(deps, appId, 'client.update', context, (tx) =>
    setClientSettings(tx, deps.cipher, appId, { walletLogin }),
  );
}
