import { createHash, createPrivateKey, type JsonWebKey, randomBytes, timingSafeEqual } from 'node:crypto';
import { compactDecrypt, type JWK } from 'jose';
import type { VerifierRequestStatus } from '../db/schema.ts';
import { CofferError, notFound } from '../errors.ts';
import { jwkThumbprint } from '../keys/jwk-thumbprint.ts';
import {
  authorizationRequestOf,
  isEncrypted,
  requestUriOf,
  responseUriOf,
  type StoredRequest,
  signRequestObject,
} from './request-object.ts';
import { queueStatusEvent } from './verifier-callbacks.ts';
import type { VerifierDeps } from './verifier-deps.ts';
import {
  advanceVerifierRequest,
  findVerifierRequest,
  type VerifierRequestRow,
} from './verifier-repository.ts';
import { encryptionKeyContext, verifierOf } from './verifier-requests.ts';
import { type VerifiedCredentialResult, verifyVpToken } from './vp-token-verification.ts';

/** Nobody has answered yet. */
const OPEN: VerifierRequestStatus[] = ['created', 'retrieved'];
/**
 * What may still be answered until the request expires (DESIGN.md, Rules at the edges): the
 * request object, its state and its encryption key are public to whoever saw the QR code, so an
 * error or a presentation that fails verification is recorded but settles nothing; only a
 * verified presentation is final at once.
 */
const ANSWERABLE: VerifierRequestStatus[] = [...OPEN, 'declined', 'rejected'];

const gone = () => notFound('The presentation request');
const refused = (sentence: string) => new CofferError('invalid_request', sentence);
export const resultContext = (id: string) => `verifier-requests/${id}/result`;
export const claimsContext = (id: string) => `verifier-requests/${id}/claims`;
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/** Whether a wallet may still answer: not verified, not past its time. */
const answerable = (deps: VerifierDeps, row: VerifierRequestRow) =>
  ANSWERABLE.includes(row.status) && row.expires_at > deps.now().toISOString();

/** Why an answer is not taken (the request is verified or past its time), or nothing. */
function closedBecause(deps: VerifierDeps, row: VerifierRequestRow): CofferError | undefined {
  if (row.status === 'verified')
    return refused('This request has been answered already; a verified response is final.');
  if (!answerable(deps, row)) return refused('This request has expired.');
  return undefined;
}

/**
 * What a request says about itself; an unanswered request past its time is expired from then on
 * (one that was declined or rejected keeps that answer).
 */
export async function currentRequest(
  deps: VerifierDeps,
  id: string,
): Promise<VerifierRequestRow & { stored: StoredRequest }> {
  const row = await findVerifierRequest(deps.db, id);
  if (!row) throw gone();
  const stored = JSON.parse(row.request) as StoredRequest;
  if (OPEN.includes(row.status) && row.expires_at <= deps.now().toISOString()) {
    if (await advanceVerifierRequest(deps.db, id, OPEN, { status: 'expired' })) {
      await queueStatusEvent(deps, {
        requestId: id,
        clientId: row.client_id,
        callbackUrl: stored.callbackUrl,
        status: 'expired',
      });
    }
    return { ...row, status: 'expired', stored };
  }
  return { ...row, stored };
}

function walletMetadataOf(raw: string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  try {
    const value = JSON.parse(raw) as unknown;
    if (value !== null && typeof value === 'object' && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {}
  throw refused('wallet_metadata is not a JSON object.');
}

/**
 * GET or POST /v1/verifier/requests/{id}/request-object (§5.10): the signed request object, with
 * the wallet's nonce when it sent one. The first fetch moves the request to `retrieved`.
 */
export async function fetchRequestObject(
  deps: VerifierDeps,
  id: string,
  wallet: { wallet_nonce?: string | undefined; wallet_metadata?: string | undefined },
): Promise<string> {
  const row = await currentRequest(deps, id);
  if (!answerable(deps, row) || row.stored.responseMode.startsWith('dc_api')) throw gone();
  const metadata = walletMetadataOf(wallet.wallet_metadata);
  const verifier = await verifierOf(deps, row.client_id);
  const jwt = await signRequestObject(deps, verifier, row, row.stored, {
    nonce: wallet.wallet_nonce,
    metadata,
  });
  if (row.status === 'created') {
    const changes = wallet.wallet_nonce
      ? { status: 'retrieved' as const, wallet_nonce: wallet.wallet_nonce }
      : { status: 'retrieved' as const };
    if (await deps.writes.markRetrieved({ id, from: ['created'], changes })) {
      await queueStatusEvent(deps, {
        requestId: id,
        clientId: row.client_id,
        callbackUrl: row.stored.callbackUrl,
        status: 'retrieved',
      });
    }
  }
  return jwt;
}

/** The response parameters (§8.1), decrypted when the request asked for encryption (§8.3). */
async function responseParameters(
  deps: VerifierDeps,
  row: VerifierRequestRow & { stored: StoredRequest },
  form: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  if (typeof form['error'] === 'string') return form;
  if (!isEncrypted(row.stored.responseMode)) {
    // Through the Digital Credentials API the answer is JSON already: vp_token is the object.
    const vpToken = form['vp_token'];
    if (vpToken !== null && typeof vpToken === 'object' && !Array.isArray(vpToken)) return form;
    if (typeof form['vp_token'] !== 'string')
      throw refused('The response carries neither vp_token nor error.');
    try {
      return { ...form, vp_token: JSON.parse(form['vp_token']) };
    } catch {
      throw refused('vp_token is not JSON (OpenID4VP §8.1).');
    }
  }
  if (typeof form['response'] !== 'string')
    throw refused('This request asked for an encrypted response (response).');
  const privateJwk = JSON.parse(
    deps.cipher.decrypt(row.encryption_key_sealed, encryptionKeyContext(row.id)),
  ) as JWK;
  try {
    const { plaintext, protectedHeader } = await compactDecrypt(
      form['response'],
      createPrivateKey({ key: privateJwk as JsonWebKey, format: 'jwk' }),
      {
        keyManagementAlgorithms: ['ECDH-ES'],
        contentEncryptionAlgorithms: ['A128GCM', 'A256GCM'],
      },
    );
    if (protectedHeader.kid !== undefined && protectedHeader.kid !== row.stored.encryptionJwk.kid) {
      throw new Error('the kid names another key');
    }
    const parameters = JSON.parse(new TextDecoder().decode(plaintext)) as unknown;
    if (parameters === null || typeof parameters !== 'object' || Array.isArray(parameters))
      throw new Error('not a JSON object');
    return parameters as Record<string, unknown>;
  } catch (error) {
    throw refused(
      `The response could not be decrypted with this request's key: ${(error as Error).message}.`,
    );
  }
}

interface StoredResult {
  credentials: Record<string, Omit<VerifiedCredentialResult, 'claims'>[]>;
  error?: { error: string; error_description?: string };
}

/** What every presentation of this answer is bound to (§14.1.2; B.2.6 for the mdoc transcript). */
async function audienceOf(
  deps: VerifierDeps,
  row: VerifierRequestRow & { stored: StoredRequest },
  origin: string | undefined,
) {
  const encrypted = isEncrypted(row.stored.responseMode);
  return {
    // Over the Digital Credentials API the audience is the origin, even for signed requests (A.4).
    clientId: origin ? `origin:${origin}` : row.stored.clientId,
    nonce: row.nonce,
    responseUri: origin ? '' : responseUriOf(deps, row.id),
    encryptionJwkThumbprint: encrypted
      ? Buffer.from(jwkThumbprint(row.stored.encryptionJwk), 'base64url')
      : null,
  };
}

/** Verifies and records a wallet's answer; returns where a same-device browser goes next. */
async function settle(
  deps: VerifierDeps,
  row: VerifierRequestRow & { stored: StoredRequest },
  parameters: Record<string, unknown>,
  origin: string | undefined,
): Promise<{ redirect_uri?: string }> {
  let status: VerifierRequestStatus;
  let result: StoredResult;
  let claims: Record<string, Record<string, unknown>[]> = {};
  // The audit reason of a failed answer: the first failing check, or the wallet's own error.
  let reason: string | undefined;
  if (typeof parameters['error'] === 'string') {
    const error = parameters['error'].slice(0, 256);
    status = error === 'access_denied' ? 'declined' : 'rejected';
    reason = status === 'declined' ? 'declined' : 'wallet_error';
    const description =
      typeof parameters['error_description'] === 'string'
        ? parameters['error_description'].slice(0, 500)
        : undefined;
    result = {
      credentials: {},
      error: { error, ...(description ? { error_description: description } : {}) },
    };
  } else {
    const verified = await verifyVpToken(parameters['vp_token'], {
      request: row.stored,
      base: { audience: await audienceOf(deps, row, origin), origin, now: deps.now() },
      issuerTrustAnchors: deps.issuerTrustAnchors,
      ...(deps.federationTrust ? { federationTrust: deps.federationTrust } : {}),
      ...(deps.trustedListTrust ? { trustedListTrust: deps.trustedListTrust } : {}),
      formats: deps.formats,
      status: deps.status,
    });
    status = verified.verified ? 'verified' : 'rejected';
    if (!verified.verified) reason = verified.failure?.check ?? 'verification_failed';
    const credentials = Object.fromEntries(
      Object.entries(verified.credentials).map(([id, list]) => [
        id,
        list.map(({ claims: _c, ...rest }) => rest),
      ]),
    );
    claims = Object.fromEntries(
      Object.entries(verified.credentials).map(([id, list]) => [id, list.map((entry) => entry.claims ?? {})]),
    );
    result = {
      credentials,
      ...(verified.failure
        ? {
            error: {
              error: 'verification_failed',
              error_description: `${verified.failure.query ? `${verified.failure.query}: ` : ''}${verified.failure.check} — ${verified.failure.detail}`,
            },
          }
        : {}),
    };
  }
  const responseCode = row.stored.redirectUri ? randomBytes(24).toString('base64url') : null;
  // An answer replaces any answer before it but a verified one, which nothing replaces, however
  // answers race. A later answer starts the claims' retention anew and has its own response code.
  const advanced = await deps.writes.settle({
    id: row.id,
    from: ANSWERABLE,
    changes: {
      status,
      result_sealed: deps.cipher.encrypt(JSON.stringify(result), resultContext(row.id)),
      claims_sealed:
        status === 'verified' ? deps.cipher.encrypt(JSON.stringify(claims), claimsContext(row.id)) : null,
      response_code_hash: responseCode ? sha256(responseCode) : null,
      answered_at: deps.now().toISOString(),
      first_read_at: null,
    },
    event: {
      clientId: row.client_id,
      actor: 'wallet',
      type: 'verifier.response',
      targets: { request_id: row.id },
      ...(reason ? { outcome: 'failure', reason } : { outcome: 'success' }),
    },
  });
  if (!advanced) throw refused('This request has been answered already; a verified response is final.');
  countVerification(deps, row.client_id, status, result);
  if (status !== row.status) {
    await queueStatusEvent(deps, {
      requestId: row.id,
      clientId: row.client_id,
      callbackUrl: row.stored.callbackUrl,
      status,
    });
  }
  return responseCode ? { redirect_uri: `${row.stored.redirectUri}#response_code=${responseCode}` } : {};
}

/** One count per presented credential (its first failing check), or one for a wallet's error. */
function countVerification(
  deps: VerifierDeps,
  tenant: number,
  status: VerifierRequestStatus,
  result: StoredResult,
): void {
  if (!deps.metrics) return;
  const presented = Object.values(result.credentials).flat();
  if (presented.length === 0) {
    deps.metrics.verification(tenant, 'none', status, result.error ? 'wallet_error' : 'none');
    return;
  }
  for (const credential of presented) {
    const failing = credential.checks.find((check) => !check.ok)?.name ?? 'none';
    deps.metrics.verification(tenant, credential.format, status, failing);
  }
}

/**
 * POST /v1/verifier/requests/{id}/response (§8.2, §8.3.1): the wallet's answer or its error. An
 * answer that cannot be read as this request's (wrong key, wrong state) is refused and changes
 * nothing; one that can is verified and recorded. A verified one settles the request; an error
 * or a failed verification is the result until a better answer comes or the request expires.
 */
export async function receiveWalletResponse(
  deps: VerifierDeps,
  id: string,
  form: Record<string, unknown>,
): Promise<{ redirect_uri?: string }> {
  const row = await currentRequest(deps, id);
  if (row.stored.responseMode.startsWith('dc_api')) throw gone();
  const closed = closedBecause(deps, row);
  if (closed) throw closed;
  const parameters = await responseParameters(deps, row, form);
  if (parameters['state'] !== row.state) throw refused('The state does not match this request.');
  return settle(deps, row, parameters, undefined);
}

/** POST /v1/verifier/requests/{id}/dc-api-response: what the browser's Digital Credentials API returned. */
export async function receiveDcApiResponse(
  deps: VerifierDeps,
  clientId: number,
  id: string,
  body: { origin: string; data: Record<string, unknown> },
): Promise<void> {
  const row = await currentRequest(deps, id);
  if (row.client_id !== clientId || !row.stored.responseMode.startsWith('dc_api')) throw gone();
  const closed = closedBecause(deps, row);
  if (closed) throw closed;
  if (!row.stored.expectedOrigins?.includes(body.origin)) {
    throw refused("The origin is not one of the request's expected_origins.");
  }
  const parameters = await responseParameters(deps, row, body.data);
  await settle(deps, row, parameters, body.origin);
}

function sameSecret(given: string, expectedHash: string): boolean {
  return timingSafeEqual(Buffer.from(sha256(given), 'hex'), Buffer.from(expectedHash, 'hex'));
}

/**
 * GET /v1/verifier/requests/{id}: the status and, once verified, the claims per query. A same-
 * device request is read with the response_code the wallet's redirect carried. The claims go
 * RESULT_RETENTION seconds after the first read.
 */
export async function readVerifierResult(
  deps: VerifierDeps,
  clientId: number,
  id: string,
  responseCode: string | undefined,
) {
  const row = await currentRequest(deps, id);
  if (row.client_id !== clientId) throw gone();
  const base = { id: row.id, status: row.status, expires_at: row.expires_at };
  if (!row.result_sealed) return base;
  if (row.response_code_hash) {
    if (responseCode === undefined) {
      throw new CofferError(
        'invalid_request',
        "This same-device request is read with the response_code of the wallet's redirect.",
        {
          details: [{ path: '/querystring/response_code', message: 'is required' }],
        },
      );
    }
    if (!sameSecret(responseCode, row.response_code_hash))
      throw new CofferError('forbidden', "The response_code is not this request's.");
  }
  const now = deps.now();
  let firstRead = row.first_read_at;
  if (!firstRead) {
    firstRead = now.toISOString();
    await deps.writes.markFirstRead({ id, at: firstRead });
  }
  const result = JSON.parse(deps.cipher.decrypt(row.result_sealed, resultContext(id))) as StoredResult;
  const retained = new Date(firstRead).getTime() + deps.config.resultRetention * 1000 > now.getTime();
  const claims =
    row.claims_sealed && retained
      ? (JSON.parse(deps.cipher.decrypt(row.claims_sealed, claimsContext(id))) as Record<
          string,
          Record<string, unknown>[]
        >)
      : undefined;
  const credentials = Object.fromEntries(
    Object.entries(result.credentials).map(([query, list]) => [
      query,
      list.map((entry, index) => ({
        ...entry,
        ...(claims?.[query]?.[index] ? { claims: claims[query]![index] } : {}),
      })),
    ]),
  );
  return {
    ...base,
    credentials,
    ...(row.stored.transactionData.length
      ? {
          transaction_data: row.stored.transactionData.map((item) =>
            JSON.parse(Buffer.from(item, 'base64url').toString('utf8')),
          ),
        }
      : {}),
    ...(row.status === 'verified' && !claims ? { claims_deleted: true } : {}),
    ...(result.error ? { error: result.error } : {}),
  };
}

/** As people see it: a declined or rejected request whose time has passed is simply over. */
const pageStatus = (deps: VerifierDeps, row: VerifierRequestRow): VerifierRequestStatus =>
  row.status === 'verified' || answerable(deps, row) ? row.status : 'expired';

/** What the /verify/{id} page shows and polls: the state only, never a claim. */
export async function requestForPage(deps: VerifierDeps, id: string) {
  const row = await currentRequest(deps, id);
  const verifier = await verifierOf(deps, row.client_id);
  return {
    id,
    status: pageStatus(deps, row),
    expires_at: row.expires_at,
    verifier: verifier.name,
    dcApi: row.stored.responseMode.startsWith('dc_api'),
    authorizationRequest: authorizationRequestOf(row.stored.clientId, requestUriOf(deps, id)),
  };
}

/** What the page polls every two seconds: the state alone, without opening the verifier. */
export async function requestState(deps: VerifierDeps, id: string) {
  const row = await currentRequest(deps, id);
  return { status: pageStatus(deps, row), expires_at: row.expires_at };
}
