import { fail, isObject, type Json, type WalletEnv } from './env.ts';

/**
 * The suite's conditions on the authorization request as a whole (OpenID4VP 1.0 §5, §5.1, §8.2):
 * the front-channel parameters, the effective request (URL parameters overridden by the request
 * object's claims), the nonce, and the parameters the suite's wallet refuses or warns about.
 */

/** CheckForUnexpectedParametersInVpAuthorizationEndpointHttpRequest: by reference, the URL carries only client_id, request_uri, request_uri_method. */
export function checkForUnexpectedParametersInVpAuthorizationEndpointHttpRequest(env: WalletEnv) {
  const names = Object.keys(env.httpParams);
  const allowed =
    'request_uri' in env.httpParams
      ? ['client_id', 'request_uri', 'request_uri_method']
      : 'request' in env.httpParams
        ? ['client_id', 'request']
        : names;
  const unexpected = names.filter((name) => !allowed.includes(name));
  if (unexpected.length)
    fail(`the URL carries parameters that belong in the request object: ${unexpected.join(', ')}`);
}

/**
 * CreateEffectiveAuthorizationRequestParameters: the URL's parameters but request_uri, JSON ones
 * (dcql_query, client_metadata, authorization_details) parsed, overridden by the request object's claims.
 */
export function createEffectiveAuthorizationRequestParameters(env: WalletEnv) {
  const effective: Record<string, Json> = { ...env.httpParams };
  delete effective['request_uri'];
  for (const name of ['authorization_details', 'dcql_query', 'client_metadata']) {
    if (typeof effective[name] === 'string') {
      try {
        effective[name] = JSON.parse(effective[name]);
      } catch {
        fail(`${name} is not JSON`);
      }
    }
  }
  Object.assign(effective, env.requestObject?.claims ?? {});
  env.effective = effective;
}

/** ExtractNonceFromAuthorizationRequest (§5.2). */
export function extractNonceFromAuthorizationRequest(env: WalletEnv) {
  const { nonce } = env.effective;
  if (typeof nonce !== 'string' || nonce === '') fail('the authorization request has no nonce');
  env.nonce = nonce;
}

/** CheckForInvalidCharsInNonce: non-empty, URL-safe unreserved characters only. */
export function checkForInvalidCharsInNonce(env: WalletEnv) {
  if (!/^[A-Za-z0-9._~-]+$/.test(env.nonce))
    fail(`the nonce ${env.nonce} has characters outside A-Z a-z 0-9 - . _ ~`);
}

/** VP1FinalCheckNonceMinimumLength: at least 16 characters. */
export function checkNonceMinimumLength(env: WalletEnv) {
  if (env.nonce.length < 16) fail(`the nonce has ${env.nonce.length} characters, fewer than 16`);
}

/** VP1FinalCheckNonceMaximumLength: at most 43 characters (the suite's interoperability bound). */
export function checkNonceMaximumLength(env: WalletEnv) {
  if (env.nonce.length > 43) fail(`the nonce has ${env.nonce.length} characters, more than 43`);
}

/** The Shannon entropy estimate of a string: bits per character (from its own frequencies) times its length. */
export function shannonEntropyBits(value: string): number {
  const counts = new Map<string, number>();
  for (const character of value) counts.set(character, (counts.get(character) ?? 0) + 1);
  let perCharacter = 0;
  for (const count of counts.values()) {
    const p = count / value.length;
    perCharacter -= p * Math.log2(p);
  }
  return perCharacter * value.length;
}

/** VP1FinalEnsureMinimumNonceEntropy: an estimate above 96 bits (for a 128-bit target). */
export function ensureMinimumNonceEntropy(env: WalletEnv) {
  const bits = shannonEntropyBits(env.nonce);
  if (!(bits > 96)) fail(`the nonce's estimated entropy is ${bits.toFixed(1)} bits, not above 96`);
}

/** EnsureAuthorizationRequestContainsPkceCodeChallenge (only when a code_challenge is sent): S256. */
export function ensureAuthorizationRequestContainsPkceCodeChallenge(env: WalletEnv) {
  if (env.effective.code_challenge === undefined) return;
  if (env.effective.code_challenge_method !== 'S256') fail('code_challenge_method is not S256');
}

/** EnsureResponseTypeIsVpToken. */
export function ensureResponseTypeIsVpToken(env: WalletEnv) {
  if (env.effective.response_type !== 'vp_token')
    fail(`response_type is ${String(env.effective.response_type)}`);
}

/** ValidateResponseMode: the configured response mode. */
export function validateResponseMode(env: WalletEnv) {
  if (env.effective.response_mode !== env.variant.responseMode) {
    fail(
      `response_mode is ${String(env.effective.response_mode)}, not the configured ${env.variant.responseMode}`,
    );
  }
}

/** CheckNoClientIdSchemeParameter: client_id_scheme is gone in 1.0 (prefixes instead). */
export function checkNoClientIdSchemeParameter(env: WalletEnv) {
  if ('client_id_scheme' in env.effective) fail('the request carries client_id_scheme');
}

/** CheckNoScopeParameter (§5.1): dcql_query, not scope. */
export function checkNoScopeParameter(env: WalletEnv) {
  if ('scope' in env.effective) fail('the request carries scope');
}

/** CheckRequestUriMethodParameter (§5.1): when given in the URL, get or post. */
export function checkRequestUriMethodParameter(env: WalletEnv) {
  const method = env.httpParams['request_uri_method'];
  if (method !== undefined && method !== 'get' && method !== 'post') fail(`request_uri_method is ${method}`);
}

const KNOWN_REQUEST_PARAMETERS = [
  'presentation_definition',
  'dcql_query',
  'client_id',
  'client_id_scheme',
  'response_uri',
  'client_metadata',
  'nonce',
  'state',
  'response_type',
  'response_mode',
  'verifier_info',
  'scope',
  'request_uri_method',
  'wallet_nonce',
  'aud',
  'iss',
  'iat',
  'nbf',
  'exp',
  'jti',
];

/** CheckForUnexpectedParametersInVpAuthorizationRequest: every effective parameter is one the suite knows. */
export function checkForUnexpectedParametersInVpAuthorizationRequest(env: WalletEnv) {
  const unknown = Object.keys(env.effective).filter((name) => !KNOWN_REQUEST_PARAMETERS.includes(name));
  if (unknown.length) fail(`unknown authorization request parameters: ${unknown.join(', ')}`);
}

/** CheckNoTransactionDataInVpAuthorizationRequest (§5.1, §8.4): the suite's wallet takes none. */
export function checkNoTransactionDataInVpAuthorizationRequest(env: WalletEnv) {
  if ('transaction_data' in env.effective) fail('the request carries transaction_data');
}

/** ExtractVerifierInfoFromAuthorizationRequest (when verifier_info is sent). */
export function extractVerifierInfoFromAuthorizationRequest(env: WalletEnv) {
  const info = env.effective.verifier_info;
  if (info !== undefined && !Array.isArray(info)) fail('verifier_info is not an array');
}

/** ValidateVerifierInfo (§5.1, when sent): a non-empty array of objects with a string format and data. */
export function validateVerifierInfo(env: WalletEnv) {
  const info = env.effective.verifier_info;
  if (info === undefined) return;
  if (!Array.isArray(info) || info.length === 0) fail('verifier_info is not a non-empty array');
  for (const [index, entry] of info.entries()) {
    if (!isObject(entry) || typeof entry.format !== 'string' || entry.data === undefined) {
      fail(`verifier_info[${index}] lacks format or data`);
    }
    if (entry.credential_ids !== undefined && !Array.isArray(entry.credential_ids)) {
      fail(`verifier_info[${index}].credential_ids is not an array`);
    }
  }
}

/** CheckForUnexpectedParametersInVerifierInfo (when sent): only format, data, credential_ids. */
export function checkForUnexpectedParametersInVerifierInfo(env: WalletEnv) {
  for (const entry of (env.effective.verifier_info ?? []) as Json[]) {
    const unknown = Object.keys(entry).filter((name) => !['format', 'data', 'credential_ids'].includes(name));
    if (unknown.length) fail(`verifier_info members the schema does not know: ${unknown.join(', ')}`);
  }
}

/** OIDCCGetStaticClientConfigurationForRPTests + OID4VPSetClientIdToIncludeClientIdScheme: the configured client id, prefixed. */
export function configuredX509SanDnsClientId(env: WalletEnv, dnsName: string) {
  if (!dnsName) fail('no client.client_id is configured');
  env.client.client_id = `x509_san_dns:${dnsName}`;
}

/** EnsureMatchingClientId (x509_san_dns): the request's client_id is the configured one. */
export function ensureMatchingClientId(env: WalletEnv) {
  if (env.effective.client_id !== env.client.client_id) {
    fail(`client_id ${String(env.effective.client_id)} is not the configured ${env.client.client_id}`);
  }
}

/** EnsureValidResponseUriForAuthorizationEndpointRequest (§8.2): an absolute https URI without fragment. */
export function ensureValidResponseUri(env: WalletEnv) {
  const uri = env.effective.response_uri;
  if (typeof uri !== 'string') fail('response_uri is not a string');
  let parsed: URL;
  try {
    parsed = new URL(uri);
  } catch {
    return fail(`response_uri ${uri} is not a URI`);
  }
  if (uri.includes('#')) fail('response_uri has a fragment');
  if (parsed.protocol !== 'https:') fail(`response_uri ${uri} is not https`);
}

/** CheckNoRedirectUriInVpAuthorizationRequest (§8.2): direct_post uses response_uri, never redirect_uri. */
export function checkNoRedirectUriInVpAuthorizationRequest(env: WalletEnv) {
  if ('redirect_uri' in env.effective) fail('the request carries redirect_uri');
}

/** CheckNoPresentationDefinitionInVpAuthorizationRequest: DCQL only in 1.0. */
export function checkNoPresentationDefinitionInVpAuthorizationRequest(env: WalletEnv) {
  if ('presentation_definition' in env.effective || 'presentation_definition_uri' in env.effective) {
    fail('the request carries a presentation definition');
  }
}
