/**
 * OpenID4VP error codes (§8.5, and RFC 6749 §4.1.2.1 for the OAuth ones). Logic throws
 * Oid4vpError; whether it goes back to the verifier or to an error page depends on how far the
 * request got (see authorization-request.ts), not on the error.
 */
export type Oid4vpErrorCode =
  | 'invalid_request'
  | 'invalid_request_object'
  | 'invalid_request_uri'
  | 'invalid_client'
  | 'invalid_scope'
  | 'unsupported_response_type'
  | 'access_denied'
  | 'vp_formats_not_supported'
  | 'invalid_request_uri_method'
  | 'invalid_transaction_data'
  | 'server_error'
  /** RFC 6749 §4.1.2.1: something the request depends on (a federation's statements) cannot be had now. */
  | 'temporarily_unavailable';

export class Oid4vpError extends Error {
  override readonly name = 'Oid4vpError';
  readonly code: Oid4vpErrorCode;
  constructor(code: Oid4vpErrorCode, description: string) {
    super(description);
    this.code = code;
  }
}

export const invalidRequest = (why: string) => new Oid4vpError('invalid_request', why);
export const invalidRequestObject = (why: string) => new Oid4vpError('invalid_request_object', why);
