import { compactVerify, decodeProtectedHeader } from 'jose';
import type { Kysely } from 'kysely';
import { findClient } from '../clients/client-repository.ts';
import type { Database } from '../db/schema.ts';
import type { SessionRow } from '../interaction/session-repository.ts';
import type { KeyRing } from '../keys/signing-keys.ts';

/**
 * OpenID Connect RP-Initiated Logout 1.0 as plain logic: what the end_session_endpoint does with
 * its parameters and the browser's session. The route ends the session and answers.
 */

export interface EndSessionParameters {
  id_token_hint?: string | undefined;
  client_id?: string | undefined;
  post_logout_redirect_uri?: string | undefined;
  state?: string | undefined;
}

export interface EndSessionDeps {
  db: Kysely<Database>;
  keys: KeyRing;
  issuer: string;
}

export type EndSessionOutcome =
  /** The hint names the session's person (or there is no session): sign out now. */
  | { kind: 'sign_out'; returnTo: string | null; clientName: string | null }
  /** Someone else may have sent the browser here: the person confirms first (§2, §6). */
  | { kind: 'confirm'; returnTo: string | null; clientId: number | null; clientName: string | null }
  | { kind: 'error'; message: string };

interface Hint {
  subject: string;
  clientId: string;
}

/**
 * An identity token this provider issued: signature by a published key and issuer. Expiry is
 * not checked (§2: the OP should accept an expired one; it only says who was logged in).
 */
async function readHint(deps: EndSessionDeps, token: string): Promise<Hint | undefined> {
  if (token.length > 8192 || token.split('.').length !== 3) return undefined;
  try {
    const { kid } = decodeProtectedHeader(token);
    const key = kid ? await deps.keys.find(kid) : undefined;
    if (!key) return undefined;
    const { payload, protectedHeader } = await compactVerify(token, key.publicKey, { algorithms: ['ES256'] });
    if (protectedHeader.typ === 'at+jwt') return undefined;
    const claims = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
    if (claims['iss'] !== deps.issuer || typeof claims['sub'] !== 'string') return undefined;
    const aud = Array.isArray(claims['aud']) ? claims['aud'][0] : claims['aud'];
    return typeof aud === 'string' ? { subject: claims['sub'], clientId: aud } : undefined;
  } catch {
    return undefined;
  }
}

/** The registered URI with `state` added (§3); null when none was asked for. */
function returnAddress(uri: string, state: string | undefined): string {
  const url = new URL(uri);
  if (state !== undefined) url.searchParams.set('state', state);
  return url.href;
}

export async function endSession(
  deps: EndSessionDeps,
  params: EndSessionParameters,
  session: SessionRow | undefined,
): Promise<EndSessionOutcome> {
  const hint = params.id_token_hint === undefined ? undefined : await readHint(deps, params.id_token_hint);
  if (params.id_token_hint !== undefined && !hint)
    return { kind: 'error', message: 'The id_token_hint is not an identity token issued here.' };
  if (hint && params.client_id !== undefined && params.client_id !== hint.clientId)
    return { kind: 'error', message: 'client_id is not the client the id_token_hint was issued to.' };
  const clientRef = params.client_id ?? hint?.clientId;
  const client =
    clientRef !== undefined && /^[1-9]\d{0,9}$/.test(clientRef)
      ? await findClient(deps.db, Number(clientRef))
      : undefined;
  if (clientRef !== undefined && !client) return { kind: 'error', message: 'The client is not known here.' };

  let returnTo: string | null = null;
  if (params.post_logout_redirect_uri !== undefined) {
    if (!client)
      return {
        kind: 'error',
        message: 'post_logout_redirect_uri needs client_id or id_token_hint to say whose it is.',
      };
    const registered = JSON.parse(client.post_logout_redirect_uris) as string[];
    // Exact match (§3.1): an unregistered address could send the person anywhere.
    if (!registered.includes(params.post_logout_redirect_uri))
      return {
        kind: 'error',
        message: `${params.post_logout_redirect_uri} is not a post-logout address registered for ${client.name}.`,
      };
    returnTo = returnAddress(params.post_logout_redirect_uri, params.state);
  }
  const clientName = client?.name ?? null;
  if (!session || (hint && hint.subject === String(session.user_id)))
    return { kind: 'sign_out', returnTo, clientName };
  return { kind: 'confirm', returnTo, clientId: client?.client_id ?? null, clientName };
}
