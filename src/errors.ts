/**
 * The one error type of Coffer. Logic throws it with a stable code; http/error-handler.ts turns
 * it into the error body `{error, error_description, details?}` in one place.
 */
export type ErrorCode =
  | 'invalid_request'
  | 'invalid_token'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'invalid_credential'
  | 'rate_limited'
  | 'server_error'
  /** A third party this request depends on (a verifier's endpoint) failed. */
  | 'bad_gateway'
  // RFC 6749 §5.2, used by the token endpoint
  | 'invalid_client'
  | 'invalid_grant'
  | 'unsupported_grant_type'
  | 'unauthorized_client'
  | 'invalid_scope'
  // RFC 6749 §4.1.2.1, answered as JSON by the pushed authorization request endpoint (RFC 9126 §2.3)
  | 'unsupported_response_type'
  | 'request_not_supported'
  // RFC 9449 §5, §7.1, §8: a DPoP proof that fails, or one without the server's current nonce
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  // OpenID4VCI 1.0 §8.3.1.2, §9.3, §11.3: the credential issuer's endpoints
  | 'invalid_credential_request'
  | 'unknown_credential_configuration'
  | 'unknown_credential_identifier'
  | 'invalid_proof'
  | 'invalid_nonce'
  | 'invalid_encryption_parameters'
  | 'credential_request_denied'
  | 'invalid_transaction_id'
  | 'issuance_pending'
  | 'invalid_notification_id'
  | 'invalid_notification_request'
  // OpenID Federation 1.0 §8.9: the resolve endpoint's answers
  | 'invalid_subject'
  | 'invalid_trust_anchor'
  | 'invalid_trust_chain';

export const STATUS_OF: Record<ErrorCode, number> = {
  invalid_request: 400,
  invalid_token: 401,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  invalid_credential: 422,
  rate_limited: 429,
  server_error: 500,
  bad_gateway: 502,
  invalid_client: 401,
  invalid_grant: 400,
  unsupported_grant_type: 400,
  unauthorized_client: 400,
  invalid_scope: 400,
  unsupported_response_type: 400,
  request_not_supported: 400,
  invalid_dpop_proof: 400,
  use_dpop_nonce: 400,
  invalid_credential_request: 400,
  unknown_credential_configuration: 400,
  unknown_credential_identifier: 400,
  invalid_proof: 400,
  invalid_nonce: 400,
  invalid_encryption_parameters: 400,
  credential_request_denied: 400,
  invalid_transaction_id: 400,
  issuance_pending: 400,
  invalid_notification_id: 400,
  invalid_notification_request: 400,
  invalid_subject: 404,
  invalid_trust_anchor: 404,
  invalid_trust_chain: 400,
};

export interface ErrorDetail {
  /** JSON pointer into the request, e.g. /body/name or /query/page. */
  path: string;
  message: string;
}

export class CofferError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetail[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    description: string,
    extra: { details?: ErrorDetail[]; headers?: Record<string, string>; status?: number } = {},
  ) {
    super(description);
    this.name = 'CofferError';
    this.code = code;
    this.status = extra.status ?? STATUS_OF[code];
    this.details = extra.details;
    this.headers = extra.headers;
  }
}

/** An invalid field, reported like a schema violation so that clients handle both alike. */
export function invalidField(path: string, message: string): CofferError {
  return new CofferError('invalid_request', `${path} ${message}.`, { details: [{ path, message }] });
}

export const notFound = (what = 'The resource') => new CofferError('not_found', `${what} was not found.`);
export const forbidden = (why: string) => new CofferError('forbidden', why);
export const conflict = (why: string) => new CofferError('conflict', why);
