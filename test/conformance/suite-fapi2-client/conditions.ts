import assert from 'node:assert/strict';
import { type Exchange, mediaTypeOf } from './http.ts';

/**
 * The suite's client-side conditions (net.openid.conformance.condition.client) that the FAPI 2.0
 * authorization-server modules run, reimplemented from their descriptions: each function
 * asserts what the condition of (nearly) the same name checks.
 */

// ---- entropy and lengths (AbstractEnsureMinimumEntropy, Ensure…Length) ----

/** Shannon entropy of the characters, times the length (the suite's estimate of a value's bits). */
export function estimatedEntropyBits(value: string): number {
  const counts = new Map<string, number>();
  for (const ch of value) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let perCharacter = 0;
  for (const count of counts.values()) {
    const p = count / value.length;
    perCharacter -= p * Math.log2(p);
  }
  return perCharacter * value.length;
}

/** Ensure…Entropy: more than `bits` estimated bits. */
export function ensureMinimumEntropy(value: string, bits = 96) {
  const estimated = estimatedEntropyBits(value);
  assert.ok(estimated > bits, `estimated entropy ${estimated.toFixed(1)} bits, at most ${bits}`);
}

/** Ensure…Length: at least `bits` bits of characters (bytes × 8). */
export function ensureMinimumLength(value: string, bits = 128) {
  assert.ok(Buffer.byteLength(value) * 8 >= bits, `${Buffer.byteLength(value) * 8} bits, fewer than ${bits}`);
}

// ---- generic HTTP ----

export function ensureHttpStatus(response: Exchange, allowed: number[]) {
  assert.ok(
    allowed.includes(response.status),
    `HTTP ${response.status}, expected ${allowed.join(' or ')}: ${response.text.slice(0, 300)}`,
  );
}

/** EnsureHttpStatusCodeIs4xx */
export function ensureHttpStatusCodeIs4xx(response: Exchange) {
  assert.ok(
    response.status >= 400 && response.status < 500,
    `HTTP ${response.status}: ${response.text.slice(0, 300)}`,
  );
}

/** EnsureContentTypeJson (parameters such as charset ignored). */
export function ensureContentTypeJson(response: Exchange) {
  assert.equal(mediaTypeOf(response.headers), 'application/json');
}

/** CheckCacheControlHeaderContainsNoStore */
export function checkCacheControlHeaderContainsNoStore(response: Exchange) {
  assert.match(response.headers.get('cache-control') ?? '', /\bno-store\b/);
}

// ---- error members (RFC 6749 §5.2 character sets) ----

const ERROR_CHARACTERS = /^[\x20-\x21\x23-\x5B\x5D-\x7E]+$/;

/** ValidateErrorFromTokenEndpointResponseError (and its PAR twin): a non-empty error of allowed characters. */
export function validateErrorField(body: Record<string, unknown> | undefined) {
  const error = body?.['error'];
  assert.equal(typeof error, 'string', 'no error member');
  assert.match(error as string, ERROR_CHARACTERS);
}

/** CheckErrorDescriptionFromTokenEndpointResponseErrorContainsCRLFTAB */
export function checkErrorDescriptionContainsNoCrLfTab(body: Record<string, unknown> | undefined) {
  const description = body?.['error_description'];
  if (typeof description === 'string') assert.doesNotMatch(description, /[\r\n\t]/);
}

/** ValidateErrorDescriptionFromTokenEndpointResponseError */
export function validateErrorDescription(body: Record<string, unknown> | undefined) {
  const description = body?.['error_description'];
  if (description === undefined) return;
  assert.equal(typeof description, 'string');
  assert.match(description as string, ERROR_CHARACTERS, `error_description ${JSON.stringify(description)}`);
}

/** ValidateErrorUriFromTokenEndpointResponseError */
export function validateErrorUri(body: Record<string, unknown> | undefined) {
  const uri = body?.['error_uri'];
  if (uri === undefined) return;
  assert.equal(typeof uri, 'string');
  assert.match(uri as string, /^[\x21\x23-\x5B\x5D-\x7E]+$/);
  new URL(uri as string);
}

/** An error response's `error`, one of `allowed` (the Check…Error… / Ensure…Error conditions). */
export function errorIsOneOf(body: Record<string, unknown> | undefined, allowed: string[]) {
  assert.ok(
    allowed.includes(body?.['error'] as string),
    `error ${JSON.stringify(body?.['error'])}, expected ${allowed.join(' or ')}`,
  );
}

/**
 * AbstractCheckTokenEndpointReturnedExpectedErrorAndHttpStatus: the error is one of the table's
 * and came with one of its statuses.
 */
export function errorWithStatus(response: Exchange, table: Record<string, number[]>) {
  const error = response.body?.error as string;
  assert.ok(error in table, `error ${JSON.stringify(error)}, expected ${Object.keys(table).join(' or ')}`);
  assert.ok(table[error]!.includes(response.status), `${error} with HTTP ${response.status}`);
}

// ---- pushed authorization requests ----

/** CheckPAREndpointResponse201WithNoError */
export function checkParResponse201WithNoError(response: Exchange) {
  assert.equal(response.status, 201, response.text);
  assert.equal(response.body?.error, undefined);
}

/** CheckForRequestUriValue */
export function checkForRequestUriValue(response: Exchange) {
  const uri = response.body?.request_uri;
  assert.equal(typeof uri, 'string');
  assert.ok(uri.length > 0);
  assert.match(uri, /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/);
}

/** CheckForPARResponseExpiresIn: at least 5 s, less than a year. */
export function checkForParResponseExpiresIn(response: Exchange) {
  const expiresIn = response.body?.expires_in;
  assert.equal(typeof expiresIn, 'number');
  assert.ok(expiresIn >= 5 && expiresIn < 365 * 86400, `expires_in ${expiresIn}`);
}

/** EnsureMinimumRequestUriEntropy: the part after urn:ietf:params:oauth:request_uri:. */
export function ensureMinimumRequestUriEntropy(requestUri: string) {
  ensureMinimumEntropy(requestUri.replace(/^urn:ietf:params:oauth:request_uri:/, ''));
}

/** AbstractEnsureSpecifiedErrorFromPushedAuthorizationEndpointResponse: 400 and one of the errors. */
export function ensureParError(response: Exchange, allowed: string[]) {
  assert.equal(response.status, 400, response.text);
  errorIsOneOf(response.body, allowed);
}

/** EnsureParHTTPError: the PAR endpoint answered an error status (4xx or 5xx). */
export function ensureParHttpError(response: Exchange) {
  assert.ok(response.status >= 400 && response.status < 600, `HTTP ${response.status}`);
}

// ---- the authorization response at the suite's callback ----

export interface Callback {
  url: URL;
  /** Query parameters: the authorization response of the code flow. */
  query: Record<string, string>;
  /** Fragment parameters. */
  fragment: Record<string, string>;
}

export function callbackOf(url: string): Callback {
  const parsed = new URL(url);
  return {
    url: parsed,
    query: Object.fromEntries(parsed.searchParams),
    fragment: Object.fromEntries(new URLSearchParams(parsed.hash.replace(/^#/, ''))),
  };
}

/** RejectErrorInUrlFragment */
export const rejectErrorInUrlFragment = (cb: Callback) => assert.equal(cb.fragment['error'], undefined);
/** RejectAuthCodeInUrlFragment */
export const rejectAuthCodeInUrlFragment = (cb: Callback) => assert.equal(cb.fragment['code'], undefined);
/** RejectAuthCodeInUrlQuery */
export const rejectAuthCodeInUrlQuery = (cb: Callback) => assert.equal(cb.query['code'], undefined);
/** RejectStateInUrlFragmentForCodeFlow */
export const rejectStateInUrlFragment = (cb: Callback) => assert.equal(cb.fragment['state'], undefined);

/** CheckMatchingCallbackParameters: query parameters of the redirect URI come back unchanged. */
export function checkMatchingCallbackParameters(cb: Callback, redirectUri: string) {
  const registered = new URL(redirectUri);
  assert.equal(cb.url.origin + cb.url.pathname, registered.origin + registered.pathname);
  for (const [name, value] of registered.searchParams)
    assert.equal(cb.query[name], value, `${name} not returned`);
}

/** CheckIfAuthorizationEndpointError */
export const checkIfAuthorizationEndpointError = (params: Record<string, string>) =>
  assert.equal(params['error'], undefined, `error ${params['error']}: ${params['error_description']}`);

/** ValidateSuccessfulAuthCodeFlowResponseFromAuthorizationEndpoint */
export function validateSuccessfulAuthCodeFlowResponse(params: Record<string, string>) {
  const allowed = ['code', 'state', 'id_token', 'session_state', 'iss', 'dummy1', 'dummy2'];
  const unexpected = Object.keys(params).filter((name) => !allowed.includes(name));
  assert.deepEqual(unexpected, []);
}

/** CheckStateInAuthorizationResponse: the state sent comes back unchanged, none if none was sent. */
export function checkStateInAuthorizationResponse(params: Record<string, string>, sent: string | undefined) {
  if (sent === undefined) {
    if (params['error'] !== 'invalid_request_object') assert.equal(params['state'], undefined);
    return;
  }
  assert.equal(params['state'], sent);
}

/** VerifyNoStateInAuthorizationResponse */
export const verifyNoStateInAuthorizationResponse = (params: Record<string, string>) =>
  assert.equal(params['state'], undefined);

/** RequireIssInAuthorizationResponse (RFC 9207) */
export const requireIssInAuthorizationResponse = (params: Record<string, string>, issuer: string) =>
  assert.equal(params['iss'], issuer);

/** ExtractAuthorizationCodeFromAuthorizationResponse */
export function extractAuthorizationCode(params: Record<string, string>): string {
  const code = params['code'];
  assert.ok(typeof code === 'string' && code.length > 0, 'no code');
  return code;
}

/** EnsureErrorFromAuthorizationEndpointResponse */
export const ensureErrorFromAuthorizationEndpoint = (params: Record<string, string>) =>
  assert.ok(params['error'], 'no error in the authorization response');

/** CheckForUnexpectedParametersInErrorResponseFromAuthorizationEndpoint */
export function checkForUnexpectedParametersInErrorResponse(
  params: Record<string, string>,
  expectDummies = false,
) {
  ensureErrorFromAuthorizationEndpoint(params);
  const allowed = [
    'error',
    'error_description',
    'error_uri',
    'state',
    'iss',
    ...(expectDummies ? ['dummy1', 'dummy2'] : []),
  ];
  assert.deepEqual(
    Object.keys(params).filter((name) => !allowed.includes(name)),
    [],
  );
}

// ---- token endpoint ----

/** CheckTokenEndpointReturnedJsonContentType */
export const checkTokenEndpointReturnedJsonContentType = ensureContentTypeJson;

/** CheckIfTokenEndpointResponseError */
export const checkIfTokenEndpointResponseError = (response: Exchange) =>
  assert.equal(response.body?.error, undefined, response.text);

/** CheckForAccessTokenValue */
export function checkForAccessTokenValue(response: Exchange) {
  assert.ok(typeof response.body?.access_token === 'string' && response.body.access_token.length > 0);
  assert.ok(typeof response.body?.token_type === 'string' && response.body.token_type.length > 0);
}

/** ExtractExpiresInFromTokenEndpointResponse */
export const extractExpiresIn = (response: Exchange) => assert.notEqual(response.body?.expires_in, undefined);

/** ValidateExpiresIn: a positive number, at most a year. */
export function validateExpiresIn(response: Exchange) {
  const expiresIn = response.body?.expires_in;
  assert.equal(typeof expiresIn, 'number');
  assert.ok(expiresIn > 0 && expiresIn <= 365 * 86400);
}

/** ExpectNoIdTokenInTokenResponse */
export const expectNoIdTokenInTokenResponse = (response: Exchange) =>
  assert.equal(response.body?.id_token, undefined);

/** CheckTokenEndpointHttpStatusIs400Allowing401ForInvalidClientError */
export function checkTokenStatus400Allowing401ForInvalidClient(response: Exchange) {
  if (response.body?.error === 'invalid_client') ensureHttpStatus(response, [400, 401]);
  else ensureHttpStatus(response, [400]);
}

export const INVALID_REQUEST_GRANT_OR_DPOP_PROOF = {
  invalid_request: [400],
  invalid_grant: [400],
  invalid_dpop_proof: [400],
};

export const INVALID_CLIENT_GRANT_REQUEST_OR_ATTESTATION = {
  invalid_request: [400],
  invalid_grant: [400],
  invalid_client: [400, 401],
  invalid_client_attestation: [400, 401],
  use_fresh_attestation: [400, 401],
};

// ---- resource (credential) endpoint ----

/** CheckForDateHeaderInResourceResponse: an RFC 7231 date within five minutes. */
export function checkForDateHeader(response: Exchange) {
  const date = response.headers.get('date');
  assert.ok(date, 'no Date header');
  assert.match(date, /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
  assert.ok(Math.abs(Date.parse(date) - Date.now()) < 5 * 60_000);
}

/** VCIValidateNoUnknownKeysInCredentialResponse (OpenID4VCI 1.0 §8.3) */
export function validateNoUnknownKeysInCredentialResponse(response: Exchange) {
  const known = ['credentials', 'transaction_id', 'notification_id', 'interval'];
  assert.deepEqual(
    Object.keys(response.body ?? {}).filter((k) => !known.includes(k)),
    [],
  );
}

/** VCICheckForDeferredCredentialResponse: credentials or a transaction_id. */
export function checkForDeferredCredentialResponse(response: Exchange): boolean {
  const deferred = response.body?.transaction_id !== undefined;
  assert.ok(deferred || response.body?.credentials !== undefined, 'neither credentials nor transaction_id');
  return deferred;
}

/** VCIExtractCredentialResponse: a non-empty array of objects with a string credential. */
export function extractCredentialResponse(response: Exchange): string[] {
  const credentials = response.body?.credentials;
  assert.ok(Array.isArray(credentials) && credentials.length > 0, 'no credentials');
  return credentials.map((entry: { credential?: unknown }) => {
    assert.equal(typeof entry?.credential, 'string');
    return entry.credential as string;
  });
}
