import type { JsonWebKey } from 'node:crypto';
import { type JwtSigner, resourceRequest } from '@openid4vc/oauth2';
import { type IssuerMetadataResult, Openid4vciRetrieveCredentialsError } from '@openid4vc/openid4vci';
import type { FormatId } from '../formats/credential-format.ts';
import type { OutboundClient } from '../http/outbound.ts';
import {
  type EncryptedAnswer,
  encryptedCredentialCall,
  type ResponseEncryption,
  responseEncryptionFor,
} from './credential-encryption.ts';
import { explainFailure, offerRefused } from './issuance-offer.ts';
import {
  dpopOptions,
  type IssuanceKey,
  type IssuanceToken,
  issuanceCallbacks,
  issuanceClient,
  newIssuanceKey,
  rememberDpopNonce,
} from './issuer-client.ts';
import type { ReceivedCopy } from './received-credentials.ts';

export interface CredentialRequestContext {
  outbound: OutboundClient;
  /** OID4VCI_CLIENT_ID; absent for anonymous pre-authorized access (proofs then carry no `iss`). */
  clientId: string | undefined;
  metadata: IssuerMetadataResult;
  token: IssuanceToken;
  /** The account's hosted did:key, for the W3C formats' proofs. */
  accountKey: IssuanceKey;
  /** A key attestation naming these keys, signed by the wallet provider; absent without one. */
  attestKeys?: ((keys: JsonWebKey[], nonce: string | undefined) => Promise<string>) | undefined;
  now: () => Date;
}

export type CredentialOutcome =
  | { kind: 'issued'; copies: ReceivedCopy[]; notificationId: string | null }
  | {
      kind: 'deferred';
      transactionId: string;
      intervalSeconds: number;
      keys: IssuanceKey[];
      /** The response key, when the issuer requires encryption: its deferred answers use it too. */
      encryption: ResponseEncryption | null;
    };

/** At most this many copies of one credential, whatever batch size the issuer offers. */
export const MAX_COPIES = 10;

interface ProofPlan {
  /** `jwt` proofs of possession, or one `attestation` proof (Annex F.3) naming every key. */
  type: 'jwt' | 'attestation';
  algorithm: 'ES256' | 'EdDSA';
  /** The W3C formats bind the account's did:key; the others a fresh key per copy. */
  accountDid: boolean;
  copies: number;
  /** Whether the proofs carry a key attestation (Annex D) naming every key of the request. */
  keyAttestation: boolean;
}

const W3C_FORMATS: FormatId[] = ['ldp_vc', 'jwt_vc_json'];

interface ProofTypeMetadata {
  proof_signing_alg_values_supported?: unknown;
  key_attestations_required?: { key_storage?: unknown; user_authentication?: unknown };
}

/** The key attestation algorithm: the wallet provider signs with ES256 (config/wallet-provider.ts). */
const KEY_ATTESTATION_ALGORITHM = 'ES256';

/**
 * Whether this wallet can give the key attestations an issuer asks for: it needs a wallet
 * provider key, an algorithm the issuer takes, and no demanded attack-resistance level, since
 * Coffer's software keys claim none (wallet-attestation.ts).
 */
function checkKeyAttestations(
  configurationId: string,
  proofType: ProofTypeMetadata,
  canAttestKeys: boolean,
): void {
  if (!canAttestKeys) {
    throw offerRefused(
      `credential ${configurationId} needs key attestations, which this wallet gives only with a wallet-provider key (WALLET_PROVIDER_KEY and WALLET_PROVIDER_CHAIN)`,
    );
  }
  const required = proofType.key_attestations_required ?? {};
  for (const [name, levels] of Object.entries(required)) {
    if (Array.isArray(levels) && levels.length > 0) {
      throw offerRefused(
        `credential ${configurationId} is issued only to keys attested as ${levels.map(String).join(' or ')} (${name}); this wallet keeps software keys encrypted at rest, evaluated at no ISO/IEC 18045 level, and claims none`,
      );
    }
  }
  const algorithms = proofType.proof_signing_alg_values_supported as unknown[];
  if (!algorithms.includes(KEY_ATTESTATION_ALGORITHM)) {
    throw offerRefused(
      `credential ${configurationId} takes key attestations signed with ${algorithms.join(', ')}; this wallet's provider signs with ${KEY_ATTESTATION_ALGORITHM}`,
    );
  }
}

/**
 * How to prove possession for one configuration (§8.2.1, Annex F): `jwt` proofs, ES256 over a
 * fresh P-256 key unless the issuer takes only EdDSA; for ldp_vc and jwt_vc_json bound to a DID,
 * the account's did:key (EdDSA). A key attestation goes into each jwt proof when the issuer
 * requires one; an issuer that takes only `attestation` proofs gets one key attestation instead.
 * As many copies as the issuer's batch size allows, up to MAX_COPIES.
 */
export function planProofs(
  metadata: IssuerMetadataResult,
  configurationId: string,
  format: FormatId,
  canAttestKeys = false,
): ProofPlan {
  const configuration = metadata.credentialIssuer.credential_configurations_supported[
    configurationId
  ] as Record<string, unknown>;
  const proofTypes = configuration['proof_types_supported'] as Record<string, ProofTypeMetadata> | undefined;
  const batch = metadata.credentialIssuer.batch_credential_issuance?.batch_size;
  const copies = typeof batch === 'number' && batch > 1 ? Math.min(batch, MAX_COPIES) : 1;
  const jwt = proofTypes?.['jwt'];
  const algorithms = jwt?.proof_signing_alg_values_supported;
  if (!Array.isArray(algorithms)) {
    const attestation = proofTypes?.['attestation'];
    if (!Array.isArray(attestation?.proof_signing_alg_values_supported)) {
      throw offerRefused(
        `credential ${configurationId} takes neither a jwt key proof nor a key attestation, the proofs this wallet gives`,
      );
    }
    checkKeyAttestations(configurationId, attestation, canAttestKeys);
    return { type: 'attestation', algorithm: 'ES256', accountDid: false, copies, keyAttestation: true };
  }
  const keyAttestation = jwt!.key_attestations_required !== undefined;
  if (keyAttestation) checkKeyAttestations(configurationId, jwt!, canAttestKeys);
  const methods = configuration['cryptographic_binding_methods_supported'];
  const bindsDid =
    Array.isArray(methods) && methods.some((m) => typeof m === 'string' && m.startsWith('did:'));
  if (W3C_FORMATS.includes(format) && bindsDid && algorithms.includes('EdDSA')) {
    return { type: 'jwt', algorithm: 'EdDSA', accountDid: true, copies: 1, keyAttestation };
  }
  const algorithm = algorithms.includes('ES256')
    ? 'ES256'
    : algorithms.includes('EdDSA')
      ? 'EdDSA'
      : undefined;
  if (!algorithm) {
    throw offerRefused(
      `credential ${configurationId} takes proofs signed with ${algorithms.join(', ')}; this wallet signs with ES256 or EdDSA`,
    );
  }
  return { type: 'jwt', algorithm, accountDid: false, copies, keyAttestation };
}

function signerOf(key: IssuanceKey, algorithm: string): JwtSigner {
  return key.didUrl
    ? { method: 'did', didUrl: key.didUrl, alg: algorithm }
    : { method: 'jwk', publicJwk: key.publicJwk as never, alg: algorithm };
}

/** The error code of a failed credential request, when the issuer sent one. */
async function errorCodeOf(error: unknown): Promise<string | undefined> {
  if (!(error instanceof Openid4vciRetrieveCredentialsError)) return undefined;
  try {
    const body = (await error.response.response.clone().json()) as { error?: unknown };
    return typeof body.error === 'string' ? body.error : undefined;
  } catch {
    return undefined;
  }
}

/** A fresh c_nonce from the Nonce Endpoint (§7), when the issuer has one. */
async function freshNonce(context: CredentialRequestContext): Promise<string | undefined> {
  if (!context.metadata.credentialIssuer.nonce_endpoint) return undefined;
  try {
    const client = issuanceClient(context.outbound, context.clientId ?? '');
    return (await client.requestNonce({ issuerMetadata: context.metadata })).c_nonce;
  } catch (error) {
    throw explainFailure(error, 'its nonce endpoint failed');
  }
}

async function proofJwts(
  context: CredentialRequestContext,
  configurationId: string,
  keys: IssuanceKey[],
  algorithm: string,
  nonce: string | undefined,
  keyAttestationJwt: string | undefined,
): Promise<string[]> {
  const client = issuanceClient(context.outbound, context.clientId ?? '', keys);
  return Promise.all(
    keys.map(
      async (key) =>
        (
          await client.createCredentialRequestJwtProof({
            issuerMetadata: context.metadata,
            credentialConfigurationId: configurationId,
            signer: signerOf(key, algorithm),
            issuedAt: context.now(),
            ...(nonce ? { nonce } : {}),
            ...(context.clientId ? { clientId: context.clientId } : {}),
            ...(keyAttestationJwt ? { keyAttestationJwt } : {}),
          })
        ).jwt,
    ),
  );
}

/**
 * The `proofs` of one request: a key attestation naming every key (its `nonce` the c_nonce,
 * HAIP 1.0 §4.5.1: one attestation for the whole batch), inside each jwt proof or alone.
 */
async function proofsOf(
  context: CredentialRequestContext,
  configurationId: string,
  plan: ProofPlan,
  keys: IssuanceKey[],
  nonce: string | undefined,
): Promise<Record<string, string[]>> {
  const keyAttestationJwt = plan.keyAttestation
    ? await context.attestKeys!(
        keys.map((key) => key.publicJwk),
        nonce,
      )
    : undefined;
  if (plan.type === 'attestation') return { attestation: [keyAttestationJwt!] };
  return {
    jwt: await proofJwts(context, configurationId, keys, plan.algorithm, nonce, keyAttestationJwt),
  };
}

/**
 * The Credential Request (§8) for one configuration: a fresh nonce, one proof per copy, and
 * the answer as copies with their keys, or a transaction to poll. An `invalid_nonce` answer is
 * retried once with a new nonce, as §8.3.1.2 expects.
 */
export async function requestCredential(
  context: CredentialRequestContext,
  configurationId: string,
  format: FormatId,
): Promise<CredentialOutcome> {
  const plan = planProofs(context.metadata, configurationId, format, context.attestKeys !== undefined);
  const keys = plan.accountDid
    ? [context.accountKey]
    : Array.from({ length: plan.copies }, () => newIssuanceKey(plan.algorithm));
  const client = issuanceClient(context.outbound, context.clientId ?? '', [
    ...keys,
    ...(context.token.dpop ? [context.token.dpop.key] : []),
  ]);
  const encryption = responseEncryptionFor(context.metadata);
  for (let attempt = 0; ; attempt++) {
    const nonce = await freshNonce(context);
    const proofs = await proofsOf(context, configurationId, plan, keys, nonce);
    // §8.2: credential_identifier when the token response gave identifiers for this
    // configuration (the first: one dataset per issuance), credential_configuration_id otherwise.
    const identifier = context.token.credentialIdentifiers?.[configurationId]?.[0];
    const naming: Record<string, string> = identifier
      ? { credential_identifier: identifier }
      : { credential_configuration_id: configurationId };
    const answer = encryption
      ? await encryptedRequest(context, configurationId, naming, proofs, encryption)
      : identifier
        ? await identifiedRequest(context, configurationId, naming, proofs)
        : await plainRequest(client, context, configurationId, proofs);
    if ('error' in answer) {
      if (attempt === 0 && answer.error === 'invalid_nonce') continue;
      throw answer.failure;
    }
    if (answer.transactionId) {
      return {
        kind: 'deferred',
        transactionId: answer.transactionId,
        intervalSeconds: answer.interval ?? 5,
        keys,
        encryption,
      };
    }
    return {
      kind: 'issued',
      copies: copiesOf(answer.credentials, keys),
      notificationId: answer.notificationId ?? null,
    };
  }
}

/** A Credential Response, whichever way it came. */
type CredentialAnswer =
  | { transactionId?: string; interval?: number; credentials?: unknown[]; notificationId?: string }
  | { error: string | undefined; failure: Error };

const refusalOf = (configurationId: string, error: unknown) =>
  explainFailure(error, `the issuer did not issue credential ${configurationId}`);

async function plainRequest(
  client: ReturnType<typeof issuanceClient>,
  context: CredentialRequestContext,
  configurationId: string,
  proofs: Record<string, string[]>,
): Promise<CredentialAnswer> {
  try {
    const dpop = dpopOptions(context.token);
    const answer = await client.retrieveCredentials({
      issuerMetadata: context.metadata,
      accessToken: context.token.accessToken,
      credentialConfigurationId: configurationId,
      proofs,
      ...(dpop ? { dpop } : {}),
    });
    rememberDpopNonce(context.token, answer.dpop?.nonce);
    const response = answer.credentialResponse;
    return {
      ...(response.transaction_id ? { transactionId: response.transaction_id } : {}),
      ...(response.interval ? { interval: response.interval } : {}),
      ...(response.credentials ? { credentials: response.credentials } : {}),
      ...(response.notification_id ? { notificationId: response.notification_id } : {}),
    };
  } catch (error) {
    if (error instanceof Openid4vciRetrieveCredentialsError)
      rememberDpopNonce(context.token, error.response.dpop?.nonce);
    return { error: await errorCodeOf(error), failure: refusalOf(configurationId, error) };
  }
}

async function encryptedRequest(
  context: CredentialRequestContext,
  configurationId: string,
  naming: Record<string, string>,
  proofs: Record<string, string[]>,
  encryption: ResponseEncryption,
): Promise<CredentialAnswer> {
  const answer = await encryptedCredentialCall(
    { ...context, clientId: context.clientId ?? '' },
    context.metadata.credentialIssuer.credential_endpoint,
    { ...naming, proofs },
    encryption,
  );
  return answerOf(answer, configurationId);
}

/**
 * A plain Credential Request naming a credential_identifier: @openid4vc/openid4vci 0.4 always
 * writes credential_configuration_id, which §8.2 forbids beside an identifier, so this one is
 * sent with the library's resource request (DPoP and its nonce retry included).
 */
async function identifiedRequest(
  context: CredentialRequestContext,
  configurationId: string,
  naming: Record<string, string>,
  proofs: Record<string, string[]>,
): Promise<CredentialAnswer> {
  const dpop = dpopOptions(context.token);
  let answer: Awaited<ReturnType<typeof resourceRequest>>;
  try {
    answer = await resourceRequest({
      callbacks: issuanceCallbacks(
        context.outbound,
        context.clientId ?? '',
        context.token.dpop ? [context.token.dpop.key] : [],
      ),
      accessToken: context.token.accessToken,
      url: context.metadata.credentialIssuer.credential_endpoint,
      requestOptions: {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...naming, proofs }),
      },
      ...(dpop ? { dpop } : {}),
    });
  } catch (error) {
    return { error: undefined, failure: refusalOf(configurationId, error) };
  }
  rememberDpopNonce(context.token, answer.dpop?.nonce);
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(await answer.response.text()) as Record<string, unknown>;
  } catch {
    // judged by the status alone
  }
  return answerOf({ status: answer.response.status, body }, configurationId);
}

/** An encrypted endpoint's decrypted answer as a CredentialAnswer (also for deferred polls). */
export function answerOf(answer: EncryptedAnswer, configurationId: string): CredentialAnswer {
  const { status, body } = answer;
  if (status >= 400) {
    const code = typeof body['error'] === 'string' ? body['error'] : undefined;
    return {
      error: code,
      failure: offerRefused(
        `the issuer did not issue credential ${configurationId} (${(code ?? `HTTP ${status}`).slice(0, 100)})`,
      ),
    };
  }
  return {
    ...(typeof body['transaction_id'] === 'string' ? { transactionId: body['transaction_id'] } : {}),
    ...(typeof body['interval'] === 'number' ? { interval: body['interval'] } : {}),
    ...(Array.isArray(body['credentials']) ? { credentials: body['credentials'] as unknown[] } : {}),
    ...(typeof body['notification_id'] === 'string' ? { notificationId: body['notification_id'] } : {}),
  };
}

/**
 * The delivered credentials paired with the keys their proofs named. An issuer answers one
 * credential per proof, in the order of the proofs (§8.3); with the account's did:key every
 * copy shares that key.
 */
export function copiesOf(credentials: unknown[] | undefined, keys: IssuanceKey[]): ReceivedCopy[] {
  if (!credentials || credentials.length === 0)
    throw offerRefused('the issuer answered without a credential');
  if (credentials.length > keys.length && keys.length > 1) {
    throw offerRefused(`the issuer answered ${credentials.length} credentials for ${keys.length} proofs`);
  }
  // OpenID4VCI 1.0 wraps each credential as {credential}; draft 14 issuers sent them bare.
  const unwrap = (entry: unknown) =>
    typeof entry === 'object' && entry !== null && 'credential' in entry && !('@context' in entry)
      ? (entry as { credential: unknown }).credential
      : entry;
  return credentials.map((entry, i) => ({ value: unwrap(entry), key: keys[keys.length === 1 ? 0 : i]! }));
}
