import type { X509Certificate } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import { DcqlQuery } from 'dcql';
import type { JWK, JWTPayload } from 'jose';
import { Compile } from 'typebox/compile';
import { FORMAT_IDS } from '../formats/credential-format.ts';
import { acceptsDataIntegrity } from '../formats/ldp-vc/index.ts';
import {
  checkOutboundTarget,
  type OutboundClient,
  OutboundError,
  type OutboundResponse,
} from '../http/outbound.ts';
import type { FederationResolver } from '../trust/federation/federation-resolver.ts';
import { listedAnchors, type TrustedListResolver } from '../trust/trusted-lists/trusted-list-resolver.ts';
import { type VerifierAttestation, verifyAttestedRequestObject } from './attested-request-object.ts';
import { CLIENT_ID_PREFIXES, type ClientIdentifier, parseClientIdentifier } from './client-identifier.ts';
import { verifyDidRequestObject } from './did-request-object.ts';
import { type FederationVerifier, verifyFederationRequestObject } from './federation-request-object.ts';
import { invalidRequest, Oid4vpError } from './oid4vp-errors.ts';
import { AuthorizationParameters, ClientMetadata } from './oid4vp-schemas.ts';
import {
  checkRequestObjectClaims,
  readUnsecuredRequestObject,
  SIGNING_ALGORITHMS,
  verifyRegisteredRequestObject,
} from './request-object.ts';
import { CONTENT_ALGORITHMS, chooseEncryption, KEY_ALGORITHMS } from './response-encryption.ts';
import { parseTransactionData, type TransactionDataItem } from './transaction-data.ts';
import {
  type VerifierCertificate,
  verifyX509HashRequestObject,
  verifyX509SanDnsRequestObject,
} from './x509-request-object.ts';

export type ResponseMode = 'fragment' | 'direct_post' | 'direct_post.jwt';
const RESPONSE_MODES: ResponseMode[] = ['fragment', 'direct_post', 'direct_post.jwt'];

/** Who asks: what the consent page shows and what the presentation is bound to. */
export interface Verifier {
  /** The full client identifier, prefix included: the presentation's `domain`. */
  clientId: string;
  kind: ClientIdentifier['prefix'];
  /**
   * The registered name; the certificate subject (x509_hash), DNS name (x509_san_dns), attested
   * subject, DID, or the redirect URI's host.
   */
  name: string;
  /** Whether the wallet established who this is: registered, a trusted chain, a trusted attestation. */
  verified: boolean;
  registeredClientId: number | null;
  certificate: VerifierCertificate | null;
  /** The `iss` of the Verifier Attestation JWT (verifier_attestation). */
  attestationIssuer: string | null;
  /** The DID (decentralized_identifier): it proves who signed, not who that is. */
  did: string | null;
  /** openid_federation: the verifier's entity and the trust anchor its chain reached. */
  federation: { entityId: string; anchor: string } | null;
  privacyLink: string | null;
}

/** A request that passed every check, as the consent and the response need it. */
export interface PresentationRequest {
  verifier: Verifier;
  responseMode: ResponseMode;
  /** redirect_uri for fragment, response_uri for direct_post and direct_post.jwt. */
  target: string;
  nonce: string;
  state: string | null;
  dcqlQuery: DcqlQuery.Output;
  /** What the person confirms with the presentation (§5.1); empty when the verifier sent none. */
  transactionData: TransactionDataItem[];
  metadata: ClientMetadata;
  /** A request object's `exp` (epoch seconds): its nonce must be remembered at least that long. */
  expiresAt: number | null;
}

/** Where an error may go back to the verifier; null until the verifier and its target are trusted. */
export interface ErrorReturn {
  responseMode: ResponseMode;
  target: string;
  state: string | null;
}

export type RequestOutcome =
  | { ok: true; request: PresentationRequest }
  | {
      ok: false;
      error: Oid4vpError;
      /** With the verifier's metadata where it is well-formed, to encrypt a direct_post.jwt error to. */
      returnTo: (ErrorReturn & { metadata: ClientMetadata | null }) | null;
    };

export interface RegisteredVerifier {
  clientId: number;
  name: string;
  /** Exact-match URIs the verifier may receive responses at (redirect and response URIs). */
  responseUris: string[];
  metadata: ClientMetadata | null;
  privacyLink: string | null;
}

export interface AuthorizationRequestDeps {
  findVerifier(clientId: number): Promise<RegisteredVerifier | undefined>;
  outbound: OutboundClient;
  allowPrivateTargets: boolean;
  trustAnchors: X509Certificate[];
  /** VERIFIER_ATTESTATION_ISSUERS: the keys whose Verifier Attestation JWTs are trusted. */
  attestationIssuers: JWK[];
  /** TRANSACTION_DATA_TYPES: the transaction data types the person may be asked to confirm. */
  transactionDataTypes: string[];
  /** Accepted `aud` values of request objects (§5.8: https://self-issued.me/v2, or this wallet). */
  walletAudiences: string[];
  /** FEDERATION_TRUST_ANCHORS resolved: `openid_federation` verifiers (absent: refused). */
  federation?: FederationResolver;
  /**
   * TRUSTED_LISTS read: DCQL `etsi_tl` trusted authorities (absent: none can be checked), and
   * x509 verifiers whose chain reaches a relying-party access CA of a list (beside trustAnchors).
   */
  trustedLists?: TrustedListResolver;
  now: () => Date;
}

/** The `aud` of request objects under static discovery (§5.8). */
export const SELF_ISSUED_AUDIENCE = 'https://self-issued.me/v2';

/** Prefixes whose identity rests on a signature: their requests come only as signed request objects. */
const SIGNED_ONLY: ClientIdentifier['prefix'][] = [
  'x509_hash',
  'x509_san_dns',
  'verifier_attestation',
  'decentralized_identifier',
  'openid_federation',
];

const checkParameters = Compile(AuthorizationParameters);
const checkMetadata = Compile(ClientMetadata);
const REQUEST_OBJECT_TYPE = 'application/oauth-authz-req+jwt';

/** The query as single text values; a parameter given twice is ambiguous and refused (RFC 6749 §3.1). */
function textParameters(query: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    if (typeof value !== 'string')
      throw invalidRequest(`the parameter ${name.slice(0, 64)} is given more than once`);
    out[name] = value;
  }
  return out;
}

function jsonMember(params: Record<string, unknown>, name: string): unknown {
  const value = params[name];
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    throw invalidRequest(`${name} is not valid JSON`);
  }
}

/** transaction_data: an array in a request object, JSON text in a query; malformed either way is invalid_transaction_data. */
function transactionDataMember(params: Record<string, unknown>): unknown {
  try {
    return jsonMember(params, 'transaction_data');
  } catch {
    throw new Oid4vpError('invalid_transaction_data', 'transaction_data is not valid JSON');
  }
}

/** Fetches a request object from request_uri (RFC 9101 §5.2; with `post`, OpenID4VP §5.10). */
async function fetchRequestObject(
  params: Record<string, string>,
  deps: AuthorizationRequestDeps,
): Promise<{ jwt: string; walletNonce?: string }> {
  const method = params['request_uri_method'] ?? 'get';
  if (method !== 'get' && method !== 'post') {
    throw new Oid4vpError('invalid_request_uri_method', 'request_uri_method must be get or post');
  }
  const url = params['request_uri']!;
  const walletNonce = method === 'post' ? randomBytes(16).toString('base64url') : undefined;
  let response: OutboundResponse;
  try {
    response = await deps.outbound(
      method === 'post'
        ? {
            method: 'POST',
            url,
            headers: { 'content-type': 'application/x-www-form-urlencoded', accept: REQUEST_OBJECT_TYPE },
            body: new URLSearchParams({
              wallet_nonce: walletNonce!,
              wallet_metadata: JSON.stringify(walletMetadataFor(deps)),
            }).toString(),
          }
        : { method: 'GET', url, headers: { accept: REQUEST_OBJECT_TYPE } },
    );
  } catch (error) {
    if (error instanceof OutboundError) {
      throw new Oid4vpError(
        'invalid_request_uri',
        `the request object could not be fetched: ${error.message}`,
      );
    }
    throw error;
  }
  if (response.status !== 200) {
    throw new Oid4vpError('invalid_request_uri', `the request_uri answered HTTP ${response.status}`);
  }
  if (response.contentType !== REQUEST_OBJECT_TYPE) {
    throw new Oid4vpError(
      'invalid_request_uri',
      `the request_uri answered ${response.contentType || 'no content type'}, not ${REQUEST_OBJECT_TYPE} (§5.10.1)`,
    );
  }
  const jwt = response.body.trim();
  return walletNonce ? { jwt, walletNonce } : { jwt };
}

/** What this wallet supports, sent with request_uri_method=post (§10). */
export const WALLET_METADATA = {
  vp_formats_supported: {
    ldp_vc: {
      proof_type_values: ['DataIntegrityProof'],
      cryptosuite_values: ['bbs-2023', 'eddsa-rdfc-2022'],
    },
    'dc+sd-jwt': {
      'sd-jwt_alg_values': ['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'],
      'kb-jwt_alg_values': ['EdDSA', 'Ed25519'],
    },
    mso_mdoc: {
      issuerauth_alg_values: [-7, -35, -36, -8, -9, -19],
      deviceauth_alg_values: [-8, -19],
    },
    jwt_vc_json: { alg_values: ['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'] },
  },
  client_id_prefixes_supported: CLIENT_ID_PREFIXES,
  response_modes_supported: RESPONSE_MODES,
  request_object_signing_alg_values_supported: SIGNING_ALGORITHMS,
  authorization_encryption_alg_values_supported: KEY_ALGORITHMS,
  authorization_encryption_enc_values_supported: CONTENT_ALGORITHMS,
};

/** The metadata as this deployment has it: `openid_federation` only with federation anchors. */
const walletMetadataFor = (deps: AuthorizationRequestDeps) =>
  deps.federation
    ? WALLET_METADATA
    : {
        ...WALLET_METADATA,
        client_id_prefixes_supported: CLIENT_ID_PREFIXES.filter((p) => p !== 'openid_federation'),
      };

const JWT_CLAIMS = ['iss', 'aud', 'exp', 'iat', 'nbf', 'jti', 'wallet_nonce'];
const withoutJwtClaims = (payload: JWTPayload) =>
  Object.fromEntries(Object.entries(payload).filter(([name]) => !JWT_CLAIMS.includes(name)));

interface Authenticated {
  id: ClientIdentifier;
  registered: RegisteredVerifier | undefined;
  certificate: VerifierCertificate | null;
  attestation: VerifierAttestation | null;
  federation: FederationVerifier | null;
  params: Record<string, unknown>;
  expiresAt: number | null;
}

/** Steps 1–3: who the verifier is, and the parameters it (provably) sent. */
async function authenticate(
  query: Record<string, string>,
  deps: AuthorizationRequestDeps,
): Promise<Authenticated> {
  const id = parseClientIdentifier(query['client_id']);
  const registered = id.prefix === 'pre-registered' ? await deps.findVerifier(id.registeredId) : undefined;
  if (id.prefix === 'pre-registered' && !registered) {
    throw new Oid4vpError('invalid_client', `${id.clientId} is not a verifier registered with this wallet`);
  }
  if (query['request'] !== undefined && query['request_uri'] !== undefined) {
    throw invalidRequest('request and request_uri cannot both be given');
  }
  if (query['request_uri_method'] !== undefined && query['request_uri'] === undefined) {
    throw invalidRequest('request_uri_method is only allowed with request_uri');
  }
  const byReference = query['request_uri'] !== undefined;
  if (query['request'] === undefined && !byReference) {
    if (SIGNED_ONLY.includes(id.prefix)) {
      throw invalidRequest(
        `an ${id.prefix} verifier must send a signed request object (request or request_uri)`,
      );
    }
    return {
      id,
      registered,
      certificate: null,
      attestation: null,
      federation: null,
      params: query,
      expiresAt: null,
    };
  }
  const { jwt, walletNonce } = byReference
    ? await fetchRequestObject(query, deps)
    : { jwt: query['request']! };
  const now = deps.now();
  let payload: JWTPayload;
  let certificate: VerifierCertificate | null = null;
  let attestation: VerifierAttestation | null = null;
  let federation: FederationVerifier | null = null;
  // Lists are read only for the prefixes that use certificates.
  const certificateTrust = async () => ({
    now,
    trustAnchors: deps.trustedLists
      ? [...deps.trustAnchors, ...(await listedAnchors(deps.trustedLists, 'relying_party_access')())]
      : deps.trustAnchors,
  });
  switch (id.prefix) {
    case 'redirect_uri':
      // §5.9.3: its requests cannot be signed; an unsecured request object stands for plain parameters.
      payload = readUnsecuredRequestObject(jwt, now);
      break;
    case 'x509_hash':
      ({ payload, certificate } = await verifyX509HashRequestObject(jwt, id.hash, await certificateTrust()));
      break;
    case 'x509_san_dns':
      ({ payload, certificate } = await verifyX509SanDnsRequestObject(
        jwt,
        id.dnsName,
        await certificateTrust(),
      ));
      break;
    case 'verifier_attestation':
      ({ payload, attestation } = await verifyAttestedRequestObject(jwt, id.subject, {
        now,
        attestationIssuers: deps.attestationIssuers,
      }));
      break;
    case 'decentralized_identifier':
      ({ payload } = await verifyDidRequestObject(jwt, id.did, { now, outbound: deps.outbound }));
      break;
    case 'openid_federation':
      ({ payload, federation } = await verifyFederationRequestObject(jwt, id.entityId, {
        now,
        resolver: deps.federation,
      }));
      break;
    default: {
      const keys = (registered!.metadata?.jwks?.keys ?? []) as JWK[];
      payload = await verifyRegisteredRequestObject(jwt, keys, now);
    }
  }
  checkRequestObjectClaims(payload, {
    clientId: id.clientId,
    audiences: deps.walletAudiences,
    now,
    ...(walletNonce ? { walletNonce } : {}),
  });
  return {
    id,
    registered,
    certificate,
    attestation,
    federation,
    params: withoutJwtClaims(payload),
    expiresAt: typeof payload.exp === 'number' ? payload.exp : null,
  };
}

/** Step 4: where the answer goes; once this holds, errors can go back to the verifier. */
function responseTarget(auth: Authenticated, deps: AuthorizationRequestDeps): ErrorReturn {
  const p = auth.params;
  const mode = p['response_mode'];
  if (typeof mode !== 'string' || !RESPONSE_MODES.includes(mode as ResponseMode)) {
    throw invalidRequest('response_mode must be fragment, direct_post or direct_post.jwt');
  }
  const responseMode = mode as ResponseMode;
  const state = p['state'];
  if (state !== undefined && (typeof state !== 'string' || !/^[A-Za-z0-9._~-]{1,2048}$/.test(state))) {
    throw invalidRequest('state must consist of URL-safe characters');
  }
  const direct = responseMode !== 'fragment';
  const wanted = direct ? 'response_uri' : 'redirect_uri';
  let target = p[wanted] as unknown;
  if (target === undefined && auth.id.prefix === 'redirect_uri') target = auth.id.uri;
  if (typeof target !== 'string')
    throw invalidRequest(`${wanted} is required with response_mode ${responseMode}`);
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw invalidRequest(`${wanted} is not an absolute URL`);
  }
  if (!['https:', 'http:'].includes(url.protocol) || url.hash || url.username) {
    throw invalidRequest(`${wanted} must be an http(s) URL without fragment or credentials`);
  }
  if (direct) {
    try {
      checkOutboundTarget(target, deps.allowPrivateTargets);
    } catch (error) {
      throw invalidRequest(`${wanted} cannot be used: ${(error as Error).message}`);
    }
  }
  if (auth.id.prefix === 'redirect_uri' && target !== auth.id.uri) {
    throw invalidRequest(`${wanted} must be the URI the client_id names`);
  }
  // §5.9.3: without a list of trusted client identifiers, the answer goes to the certified host only.
  if (auth.id.prefix === 'x509_san_dns' && url.hostname.toLowerCase() !== auth.id.dnsName) {
    throw new Oid4vpError(
      'invalid_client',
      `${wanted} must be on ${auth.id.dnsName}, the host the certificate names`,
    );
  }
  const attested = auth.attestation?.redirectUris;
  if (attested && !direct && !attested.includes(target)) {
    throw new Oid4vpError(
      'invalid_client',
      'redirect_uri is not one of the redirect_uris of the verifier attestation',
    );
  }
  if (auth.registered && !auth.registered.responseUris.includes(target)) {
    throw invalidRequest(`${wanted} is not registered for this verifier`);
  }
  return { responseMode, target, state: typeof state === 'string' ? state : null };
}

/**
 * Whether some credential query asks for a format this wallet presents that the verifier's
 * `vp_formats_supported` names (a registered verifier without it takes every format); ldp_vc
 * also needs the verifier to take bbs-2023, and eddsa-rdfc-2022 for a signed presentation.
 */
function takesAFormatOfThisWallet(query: DcqlQuery.Output, metadata: ClientMetadata): boolean {
  const formats = metadata.vp_formats_supported as Record<string, unknown> | undefined;
  return query.credentials.some((q) => {
    if (!(FORMAT_IDS as string[]).includes(q.format)) return false;
    if (formats === undefined) return true;
    const parameters = formats[q.format];
    if (parameters === null || typeof parameters !== 'object') return false;
    return (
      q.format !== 'ldp_vc' ||
      acceptsDataIntegrity(
        parameters as Record<string, unknown>,
        q.require_cryptographic_holder_binding !== false,
      )
    );
  });
}

/** What the consent page calls the verifier. */
function nameOf(auth: Authenticated, returnTo: ErrorReturn): string {
  const id = auth.id;
  switch (id.prefix) {
    case 'pre-registered':
      return auth.registered!.name;
    case 'x509_hash':
      return auth.certificate!.subject;
    case 'x509_san_dns':
      return id.dnsName;
    case 'verifier_attestation':
      return id.subject;
    case 'decentralized_identifier':
      return id.did;
    case 'redirect_uri':
      return new URL(returnTo.target).host;
    case 'openid_federation':
      return auth.federation!.name;
  }
}

/**
 * Registered verifiers, trusted chains and trusted attestations are verified; an x509_hash
 * certificate outside the trust anchors, a DID (it proves who signed, not who that is) and a
 * redirect URI are not, and the consent page says so.
 */
function verifiedIdentity(auth: Authenticated): boolean {
  switch (auth.id.prefix) {
    case 'pre-registered':
    case 'verifier_attestation':
    case 'openid_federation':
      return true;
    case 'x509_hash':
    case 'x509_san_dns':
      return auth.certificate?.trusted === true;
    default:
      return false;
  }
}

/** Step 5: the rest of the request, with the verifier and its target known (errors go back to it). */
async function checkRequest(
  auth: Authenticated,
  returnTo: ErrorReturn,
  deps: AuthorizationRequestDeps,
): Promise<PresentationRequest> {
  const p = auth.params;
  const unwanted = returnTo.responseMode === 'fragment' ? 'response_uri' : 'redirect_uri';
  if (p[unwanted] !== undefined) {
    throw invalidRequest(`${unwanted} must not be sent with response_mode ${returnTo.responseMode}`);
  }
  if (!checkParameters.Check(p)) {
    const [first] = checkParameters.Errors(p);
    throw invalidRequest(
      `${first?.instancePath.slice(1) || 'the request'} ${first?.message ?? 'is invalid'}`,
    );
  }
  if (p['response_type'] !== 'vp_token') {
    throw new Oid4vpError('unsupported_response_type', 'response_type must be vp_token');
  }
  if (typeof p['nonce'] !== 'string') throw invalidRequest('nonce is required');
  if (p['dcql_query'] === undefined) {
    if (p['scope'] !== undefined)
      throw new Oid4vpError('invalid_scope', 'this wallet knows no scope aliases for DCQL queries');
    throw invalidRequest('dcql_query is required');
  }
  if (p['scope'] !== undefined) throw invalidRequest('dcql_query and scope cannot both be given');

  let metadata: ClientMetadata;
  const sent = jsonMember(p, 'client_metadata');
  if (auth.federation) {
    // §5.9.3: the metadata is the federation's; client_metadata in the request is ignored.
    const resolved = auth.federation.metadata;
    if (!checkMetadata.Check(resolved)) {
      const [first] = checkMetadata.Errors(resolved);
      throw new Oid4vpError(
        'invalid_client',
        `the verifier's federation metadata${first?.instancePath ?? ''} ${first?.message ?? 'is invalid'}`,
      );
    }
    metadata = resolved;
    if (metadata.vp_formats_supported === undefined)
      throw new Oid4vpError(
        'invalid_client',
        "the verifier's federation metadata has no vp_formats_supported",
      );
  } else if (auth.registered) {
    if (sent !== undefined) {
      throw new Oid4vpError(
        'invalid_client',
        'client_metadata must not be sent by a registered verifier; its metadata is registered',
      );
    }
    metadata = auth.registered.metadata ?? {};
  } else {
    if (sent === undefined) throw invalidRequest('client_metadata (with vp_formats_supported) is required');
    if (!checkMetadata.Check(sent)) {
      const [first] = checkMetadata.Errors(sent);
      throw invalidRequest(`client_metadata${first?.instancePath ?? ''} ${first?.message ?? 'is invalid'}`);
    }
    metadata = sent;
    if (metadata.vp_formats_supported === undefined) {
      throw invalidRequest('client_metadata.vp_formats_supported is required');
    }
  }

  let dcqlQuery: DcqlQuery.Output;
  try {
    dcqlQuery = DcqlQuery.parse(jsonMember(p, 'dcql_query') as DcqlQuery.Input);
    DcqlQuery.validate(dcqlQuery);
  } catch (error) {
    throw invalidRequest(
      `dcql_query is not a valid DCQL query: ${String((error as Error).message).slice(0, 300)}`,
    );
  }
  const transactionData =
    p['transaction_data'] === undefined
      ? []
      : parseTransactionData(transactionDataMember(p), dcqlQuery, deps.transactionDataTypes);
  if (!takesAFormatOfThisWallet(dcqlQuery, metadata)) {
    throw new Oid4vpError(
      'vp_formats_not_supported',
      `this wallet presents ${FORMAT_IDS.join(', ')} credentials, and the request asks for none of them in a format the verifier takes`,
    );
  }
  if (returnTo.responseMode === 'direct_post.jwt' && !(await chooseEncryption(metadata))) {
    throw invalidRequest(
      'direct_post.jwt needs a key in client_metadata.jwks with an alg this wallet supports (ECDH-ES, ECDH-ES+A128KW/A192KW/A256KW, RSA-OAEP-256) and a supported enc',
    );
  }

  return {
    verifier: {
      clientId: auth.id.clientId,
      kind: auth.id.prefix,
      name: nameOf(auth, returnTo),
      verified: verifiedIdentity(auth),
      registeredClientId: auth.registered?.clientId ?? null,
      certificate: auth.certificate,
      attestationIssuer: auth.attestation?.issuer ?? null,
      federation: auth.federation
        ? { entityId: auth.federation.entityId, anchor: auth.federation.anchor }
        : null,
      did: auth.id.prefix === 'decentralized_identifier' ? auth.id.did : null,
      privacyLink: auth.registered?.privacyLink ?? null,
    },
    responseMode: returnTo.responseMode,
    target: returnTo.target,
    nonce: p['nonce'],
    state: returnTo.state,
    dcqlQuery,
    transactionData,
    metadata,
    expiresAt: auth.expiresAt,
  };
}

/**
 * Validates an OpenID4VP authorization request as the specification's wallet must (§5),
 * telling apart errors that may go back to the verifier from those only the person may see.
 */
export async function resolveAuthorizationRequest(
  query: Record<string, unknown>,
  deps: AuthorizationRequestDeps,
): Promise<RequestOutcome> {
  let returnTo: (ErrorReturn & { metadata: ClientMetadata | null }) | null = null;
  try {
    const auth = await authenticate(textParameters(query), deps);
    const target = responseTarget(auth, deps);
    returnTo = { ...target, metadata: metadataForErrors(auth) };
    return { ok: true, request: await checkRequest(auth, target, deps) };
  } catch (error) {
    if (!(error instanceof Oid4vpError)) throw error;
    return { ok: false, error, returnTo };
  }
}

/**
 * The verifier's metadata for encrypting an error response (§8.3: with direct_post.jwt the
 * error is encrypted too): its registered metadata, or the request's client_metadata when that
 * is well-formed. Null otherwise — §8.3.1 lets a wallet that cannot encrypt send the error in
 * clear, and so does delivery when no key of the metadata fits.
 */
function metadataForErrors(auth: Authenticated): ClientMetadata | null {
  if (auth.registered) return auth.registered.metadata;
  let sent: unknown;
  try {
    sent = jsonMember(auth.params, 'client_metadata');
  } catch {
    return null;
  }
  return sent !== undefined && checkMetadata.Check(sent) ? sent : null;
}
