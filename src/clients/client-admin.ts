import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { CofferError, notFound } from '../errors.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';
import { generateSecret, hashSecret } from '../keys/secrets.ts';
import { findClient, insertApiToken, insertClient } from './client-repository.ts';

/** What the admin CLI does with clients, as plain functions over the database. */

export interface CreateClientInput {
  name: string;
  master?: boolean;
  parentId?: number | undefined;
  redirectUris?: string[];
  /** Where RP-initiated logout may send the browser back (exact match). */
  postLogoutRedirectUris?: string[];
  verifier?: boolean;
  /** OAuth grants besides authorization_code: refresh_token. */
  grantTypes?: string[];
  /** Its access tokens must be DPoP-bound. */
  dpopBound?: boolean;
  /** It may only push its authorization requests (PAR). */
  requirePar?: boolean;
  /** A public client (native or browser app): no secret, PKCE always (RFC 6749 §2.1, RFC 8252). */
  public?: boolean;
}

export interface CreatedClient {
  client_id: number;
  /** null for a public client. */
  client_secret: string | null;
  api_token: string;
}

export const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;

/** The grants a client may use; authorization_code always, since every log-in starts there. */
export function checkGrantTypes(grants: string[]): string[] {
  for (const grant of grants) {
    if (!(GRANT_TYPES as readonly string[]).includes(grant))
      throw new CofferError('invalid_request', `Unknown grant "${grant}": use ${GRANT_TYPES.join(' or ')}.`);
  }
  return GRANT_TYPES.filter((g) => g === 'authorization_code' || grants.includes(g));
}

export function validateRedirectUri(uri: string): string {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new CofferError('invalid_request', `Redirect URI "${uri}" is not an absolute URL.`);
  }
  if (url.hash) throw new CofferError('invalid_request', `Redirect URI "${uri}" must not have a fragment.`);
  if (
    !['https:', 'http:'].includes(url.protocol) &&
    !/^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(url.protocol)
  ) {
    // Private-use schemes (reverse domain, RFC 8252) are allowed for native apps.
    throw new CofferError(
      'invalid_request',
      `Redirect URI "${uri}" must use https, http or a private-use scheme.`,
    );
  }
  return uri;
}

export async function createClient(
  db: Kysely<Database>,
  input: CreateClientInput,
  /** Runs in the creation's transaction (the audit event of the act). */
  alsoInTransaction?: (tx: Kysely<Database>, clientId: number) => Promise<void>,
): Promise<CreatedClient> {
  const name = input.name.trim();
  if (name.length < 1 || name.length > 100)
    throw new CofferError('invalid_request', 'The name must be 1–100 characters.');
  if (input.master && input.parentId !== undefined) {
    throw new CofferError('invalid_request', 'A master client cannot have a parent.');
  }
  if (input.parentId !== undefined) {
    const parent = await findClient(db, input.parentId);
    if (!parent) throw notFound(`Parent client ${input.parentId}`);
    if (parent.is_master !== 1)
      throw new CofferError('invalid_request', `Client ${input.parentId} is not a master client.`);
  }
  const redirectUris = (input.redirectUris ?? []).map(validateRedirectUri);
  const clientSecret = input.public ? null : generateSecret('client_secret');
  const apiToken = generateSecret('api_token');
  const clientId = await db.transaction().execute(async (tx) => {
    const id = await insertClient(tx, {
      name,
      isMaster: input.master ?? false,
      isVerifier: input.verifier ?? false,
      parentId: input.parentId ?? null,
      clientSecretHash: clientSecret === null ? null : hashSecret(clientSecret),
      redirectUris,
      postLogoutRedirectUris: (input.postLogoutRedirectUris ?? []).map(validateRedirectUri),
      grantTypes: checkGrantTypes(input.grantTypes ?? []),
      dpopBound: input.dpopBound ?? false,
      requirePar: input.requirePar ?? false,
    });
    await insertApiToken(tx, id, apiToken);
    await alsoInTransaction?.(tx, id);
    return id;
  });
  return { client_id: clientId, client_secret: clientSecret, api_token: apiToken };
}

export interface ClientSettings {
  fromEmail?: string;
  espToken?: string;
  recaptchaKey?: string;
  recaptchaThreshold?: number;
  recaptchaEnabled?: boolean;
  privacyLink?: string;
  redirectUris?: string[];
  /** Replaces the list of post-logout redirect URIs. */
  postLogoutRedirectUris?: string[];
  /** OpenID4VP client metadata of a verifier, as JSON text already checked. */
  verifierMetadata?: string;
  /** Replaces the grants besides authorization_code. */
  grantTypes?: string[];
  dpopBound?: boolean;
  requirePar?: boolean;
  /** Logging in with a wallet, as JSON text already checked (verifier/wallet-login.ts); null removes it. */
  walletLogin?: string | null;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export async function setClientSettings(
  db: Kysely<Database>,
  cipher: FieldCipher,
  clientId: number,
  settings: ClientSettings,
): Promise<void> {
  const client = await findClient(db, clientId);
  if (!client) throw notFound(`Client ${clientId}`);
  // Only a verifier's metadata is ever read; on another client it would be stored for nothing.
  if (settings.verifierMetadata !== undefined && client.is_verifier !== 1) {
    throw new CofferError(
      'invalid_request',
      `Client ${clientId} is not a verifier (create one with --verifier); --verifier-metadata is only for verifiers.`,
    );
  }
  const update: Record<string, unknown> = {};
  if (settings.fromEmail !== undefined) {
    if (!EMAIL.test(settings.fromEmail))
      throw new CofferError('invalid_request', '--from-email is not an e-mail address.');
    update['from_email_address'] = settings.fromEmail;
  }
  if (settings.espToken !== undefined) {
    update['esp_token_sealed'] = cipher.encrypt(settings.espToken, `clients/${clientId}/esp_token`);
  }
  if (settings.recaptchaKey !== undefined) {
    update['recaptcha_key_sealed'] = cipher.encrypt(
      settings.recaptchaKey,
      `clients/${clientId}/recaptcha_key`,
    );
  }
  if (settings.recaptchaThreshold !== undefined) {
    const x = settings.recaptchaThreshold;
    if (!(x >= 0 && x <= 1))
      throw new CofferError('invalid_request', '--recaptcha-threshold must be between 0 and 1.');
    update['recaptcha_threshold'] = x;
  }
  if (settings.recaptchaEnabled !== undefined)
    update['recaptcha_enabled'] = settings.recaptchaEnabled ? 1 : 0;
  if (settings.privacyLink !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(settings.privacyLink);
    } catch {}
    if (!url || !['https:', 'http:'].includes(url.protocol)) {
      throw new CofferError('invalid_request', '--privacy-link must be an http(s) URL.');
    }
    update['privacy_link'] = settings.privacyLink;
  }
  if (settings.redirectUris !== undefined) {
    update['redirect_uris'] = JSON.stringify(settings.redirectUris.map(validateRedirectUri));
  }
  if (settings.postLogoutRedirectUris !== undefined) {
    update['post_logout_redirect_uris'] = JSON.stringify(
      settings.postLogoutRedirectUris.map(validateRedirectUri),
    );
  }
  if (settings.verifierMetadata !== undefined) update['verifier_metadata'] = settings.verifierMetadata;
  if (settings.grantTypes !== undefined)
    update['grant_types'] = JSON.stringify(checkGrantTypes(settings.grantTypes));
  if (settings.dpopBound !== undefined) update['dpop_bound'] = settings.dpopBound ? 1 : 0;
  if (settings.requirePar !== undefined) update['require_par'] = settings.requirePar ? 1 : 0;
  if (settings.walletLogin !== undefined) update['wallet_login'] = settings.walletLogin;
  if (Object.keys(update).length === 0) throw new CofferError('invalid_request', 'Nothing to set.');
  await db.updateTable('clients').set(update).where('client_id', '=', clientId).execute();
}

export async function rotateClientSecret(
  db: Kysely<Database>,
  clientId: number,
): Promise<{ client_secret: string }> {
  const client = await findClient(db, clientId);
  if (!client) throw notFound(`Client ${clientId}`);
  // A public client's holders (a native or browser app) could not keep a secret.
  if (client.client_secret_hash === null)
    throw new CofferError('invalid_request', `Client ${clientId} is a public client; it has no secret.`);
  const clientSecret = generateSecret('client_secret');
  const result = await db
    .updateTable('clients')
    .set({ client_secret_hash: hashSecret(clientSecret) })
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw notFound(`Client ${clientId}`);
  return { client_secret: clientSecret };
}

export async function createApiToken(db: Kysely<Database>, clientId: number): Promise<{ api_token: string }> {
  if (!(await findClient(db, clientId))) throw notFound(`Client ${clientId}`);
  const apiToken = generateSecret('api_token');
  await insertApiToken(db, clientId, apiToken);
  return { api_token: apiToken };
}
