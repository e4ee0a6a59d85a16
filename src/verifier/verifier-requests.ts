import {
  createPrivateKey,
  generateKeyPairSync,
  type JsonWebKey,
  type KeyObject,
  randomBytes,
} from 'node:crypto';
import { DcqlQuery } from 'dcql';
import { calculateJwkThumbprint, type JWK } from 'jose';
import type { AuditContext } from '../audit/audit-events.ts';
import { CofferError } from '../errors.ts';
import { federationVerifierOf } from '../federation/federation-service.ts';
import { checkOutboundTarget, OutboundError } from '../http/outbound.ts';
import { parseCertificate } from '../keys/certificate-chain.ts';
import { createLru } from '../lru.ts';
import {
  authorizationRequestOf,
  isHaipShaped,
  requestUriOf,
  type StoredRequest,
  signRequestObject,
} from './request-object.ts';
import { verifierKeyContext } from './verifier-admin.ts';
import type { VerifierDeps } from './verifier-deps.ts';
import { type VerifierIdentity, verifierIdentity } from './verifier-keys.ts';
import { findVerifier } from './verifier-repository.ts';
import type { CreateVerifierRequestBody } from './verifier-schemas.ts';

const DEFAULT_EXPIRES_IN = 600;

const invalid = (path: string, message: string, sentence: string) =>
  new CofferError('invalid_request', sentence, { details: [{ path: `/body/${path}`, message }] });

export interface VerifierSigner {
  name: string;
  privateJwk: JWK;
  /** The private key, imported once for signing (a KeyObject: node:crypto signs it in one call). */
  key: KeyObject;
  identity: VerifierIdentity;
  /** The key's JWK thumbprint: its kid in the verifier's federation Entity Configuration. */
  kid: string;
}

/**
 * Opened verifiers, by client and sealed key: opening one decrypts the key and parses its chain,
 * which every request object would otherwise repeat. A re-enabled verifier has another sealed key,
 * so it is never served stale.
 */
const openedVerifiers = createLru<string, Promise<VerifierSigner>>(256);

/** The signing material of a client that `coffer verifier enable` made a verifier. */
export async function verifierOf(deps: VerifierDeps, clientId: number): Promise<VerifierSigner> {
  const row = await findVerifier(deps.db, clientId);
  if (!row) {
    throw new CofferError(
      'forbidden',
      'This client is not a verifier; an operator enables it with `coffer verifier enable`.',
    );
  }
  const cacheKey = `${clientId}:${row.key_sealed}:${row.name}:${deps.config.publicUrl}`;
  let opened = openedVerifiers.get(cacheKey);
  if (!opened) {
    opened = (async () => {
      const privateJwk = JSON.parse(deps.cipher.decrypt(row.key_sealed, verifierKeyContext(clientId))) as JWK;
      const identity = verifierIdentity(row.chain_pem, privateJwk as never, deps.config.publicUrl);
      const key = createPrivateKey({ key: privateJwk as JsonWebKey, format: 'jwk' });
      const kid = await calculateJwkThumbprint(identity.leaf.publicKey.export({ format: 'jwk' }) as JWK);
      return { name: row.name, privateJwk, key, identity, kid };
    })();
    openedVerifiers.set(cacheKey, opened);
  }
  return opened;
}

export function parseDcql(input: unknown): DcqlQuery.Output {
  try {
    const query = DcqlQuery.parse(input as DcqlQuery.Input);
    DcqlQuery.validate(query);
    return query;
  } catch (error) {
    const reason = (error as Error).message.split('\n')[0]?.slice(0, 300) ?? 'is not a DCQL query';
    throw invalid('dcql_query', reason, `The DCQL query is not valid: ${reason}`);
  }
}

/** Transaction data can be bound only where a key binding JWT carries it (B.3.3). */
function encodeTransactionData(body: CreateVerifierRequestBody, query: DcqlQuery.Output): string[] {
  return (body.transaction_data ?? []).map((item, index) => {
    for (const id of item.credential_ids) {
      const named = query.credentials.find((credential) => credential.id === id);
      if (!named) {
        throw invalid(
          `transaction_data/${index}/credential_ids`,
          `names ${id}, which is no credential query`,
          `transaction_data[${index}] names ${id}, which the DCQL query does not ask for.`,
        );
      }
      if (named.format !== 'dc+sd-jwt') {
        throw invalid(
          `transaction_data/${index}/credential_ids`,
          `names a ${named.format} query`,
          `transaction_data[${index}] names ${id}, a ${named.format} query: only dc+sd-jwt presentations can carry transaction data.`,
        );
      }
    }
    return Buffer.from(JSON.stringify(item)).toString('base64url');
  });
}

/** Each trusted issuer is a PEM CA certificate or a DID. */
export function checkTrustedIssuers(values: string[] | undefined): string[] {
  return (values ?? []).map((value, index) => {
    if (value.startsWith('did:')) return value;
    try {
      parseCertificate(value);
      return value;
    } catch {
      throw invalid(
        `trusted_issuers/${index}`,
        'is neither a PEM certificate nor a DID',
        `trusted_issuers[${index}] is neither a PEM certificate nor a DID.`,
      );
    }
  });
}

function checkTarget(value: string | undefined, field: string, deps: VerifierDeps): string | null {
  if (value === undefined) return null;
  try {
    return checkOutboundTarget(value, deps.config.allowPrivateTargets).href;
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    throw invalid(field, error.message, `${field} cannot be used: ${error.message}.`);
  }
}

function checkModes(body: CreateVerifierRequestBody) {
  const mode = body.response_mode ?? 'direct_post.jwt';
  const dcApi = mode.startsWith('dc_api');
  if (dcApi && !body.expected_origins) {
    throw invalid(
      'expected_origins',
      'is required with dc_api modes',
      'A Digital Credentials API request is signed, so it needs expected_origins (OpenID4VP Appendix A).',
    );
  }
  if (!dcApi && body.expected_origins) {
    throw invalid(
      'expected_origins',
      'is only for dc_api modes',
      'expected_origins is only for dc_api modes.',
    );
  }
  if (dcApi && body.redirect_uri) {
    throw invalid('redirect_uri', 'is not for dc_api modes', 'redirect_uri is not for dc_api modes.');
  }
  for (const [index, origin] of (body.expected_origins ?? []).entries()) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {}
    if (!parsed || parsed.origin !== origin) {
      throw invalid(
        `expected_origins/${index}`,
        'is not an origin',
        `expected_origins[${index}] is not an origin (scheme://host[:port]).`,
      );
    }
  }
  return mode;
}

/**
 * POST /v1/verifier/requests: validates what the tenant asks (the DCQL query first), makes the
 * request's nonce, state and response encryption key, and keeps it for the wallet to fetch.
 */
export async function createVerifierRequest(
  deps: VerifierDeps,
  clientId: number,
  body: CreateVerifierRequestBody,
  /**
   * A request Coffer makes for a log-in (wallet-login.ts) names its interaction, and may trust
   * only the issuers the client's wallet log-in names.
   */
  options: { interactionId?: string; onlyTrustedIssuers?: boolean; audit?: AuditContext } = {},
) {
  const verifier = await verifierOf(deps, clientId);
  const dcqlQuery = parseDcql(body.dcql_query);
  const responseMode = checkModes(body);
  const prefix =
    body.client_id_prefix ?? (verifier.identity.clientIds.x509_san_dns ? 'x509_san_dns' : 'x509_hash');
  // As a federation entity the verifier is named by its Entity Identifier, and wallets encrypt to
  // the static key its Entity Configuration publishes (they ignore client_metadata, §5.9.3).
  const federation =
    prefix === 'openid_federation'
      ? await federationVerifierOf(
          { db: deps.db, cipher: deps.cipher, publicUrl: deps.config.publicUrl, now: deps.now },
          clientId,
        )
      : undefined;
  const verifierClientId = federation
    ? `openid_federation:${federation.entityId}`
    : verifier.identity.clientIds[prefix as 'x509_san_dns' | 'x509_hash'];
  if (!verifierClientId) {
    throw invalid(
      'client_id_prefix',
      'the certificate does not name this service',
      "x509_san_dns needs a certificate whose dNSName is PUBLIC_URL's host; this verifier's is not.",
    );
  }
  const transactionData = encodeTransactionData(body, dcqlQuery);
  const trustedIssuers = checkTrustedIssuers(body.trusted_issuers);
  const redirectUri = checkTarget(body.redirect_uri, 'redirect_uri', deps);
  const callbackUrl = checkTarget(body.callback_url, 'callback_url', deps);

  const encryption = federation?.encryption ?? requestEncryptionKey();
  const encryptionJwk = encryption.publicJwk;
  const id = randomBytes(16).toString('base64url');
  const now = deps.now();
  const expiresAt = new Date(now.getTime() + (body.expires_in ?? DEFAULT_EXPIRES_IN) * 1000).toISOString();
  const stored: StoredRequest = {
    clientId: verifierClientId,
    responseMode,
    dcqlQuery,
    transactionData,
    redirectUri,
    expectedOrigins: body.expected_origins ?? null,
    trustedIssuers,
    ...(options.onlyTrustedIssuers ? { onlyTrustedIssuers: true } : {}),
    checkStatus: body.check_status ?? true,
    callbackUrl,
    encryptionJwk,
  };
  const row = {
    id,
    client_id: clientId,
    status: 'created' as const,
    request: JSON.stringify(stored),
    nonce: randomBytes(32).toString('base64url'),
    state: randomBytes(16).toString('base64url'),
    // The request's own copy, sealed to it: the response is decrypted the same way for every prefix.
    encryption_key_sealed: deps.cipher.encrypt(
      JSON.stringify(encryption.privateJwk),
      encryptionKeyContext(id),
    ),
    wallet_nonce: null,
    response_code_hash: null,
    result_sealed: null,
    claims_sealed: null,
    created_at: now.toISOString(),
    expires_at: expiresAt,
    answered_at: null,
    first_read_at: null,
    interaction_id: options.interactionId ?? null,
  };
  // Coffer's own log-in requests have no context: the log-in is what the trail records of them.
  await deps.writes.insertRequest({
    row,
    event: options.audit && {
      ...options.audit,
      clientId,
      type: 'verifier.request_create',
      targets: { request_id: id },
    },
  });
  const page = `${deps.config.publicUrl}/verify/${id}`;
  if (responseMode.startsWith('dc_api')) {
    const request = await signRequestObject(deps, verifier, row, stored, {});
    return {
      id,
      status: 'created' as const,
      expires_at: expiresAt,
      page,
      dc_api_request: { protocol: 'openid4vp-v1-signed', data: { request } },
    };
  }
  const requestUri = requestUriOf(deps, id);
  return {
    id,
    status: 'created' as const,
    expires_at: expiresAt,
    page,
    request_uri: requestUri,
    authorization_request: authorizationRequestOf(verifierClientId, requestUri),
    ...(isHaipShaped(stored)
      ? { haip_authorization_request: authorizationRequestOf(verifierClientId, requestUri, 'haip') }
      : {}),
  };
}

/** A key made for one request only, to which the wallet encrypts its answer. */
function requestEncryptionKey(): { privateJwk: JWK; publicJwk: JWK } {
  // node:crypto makes the pair synchronously; WebCrypto's promise round trips cost more than the key.
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = randomBytes(12).toString('base64url');
  return {
    privateJwk: privateKey.export({ format: 'jwk' }) as JWK,
    publicJwk: { ...(publicKey.export({ format: 'jwk' }) as JWK), kid, use: 'enc', alg: 'ECDH-ES' },
  };
}

export const encryptionKeyContext = (requestId: string) => `verifier-requests/${requestId}/encryption-key`;
