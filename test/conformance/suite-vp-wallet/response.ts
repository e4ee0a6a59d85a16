import { randomBytes } from 'node:crypto';
import { CompactEncrypt, importJWK, type JWK } from 'jose';
import { fail, isObject, type Json, mediaTypeOf, recordResponse, type WalletEnv } from './env.ts';

/**
 * The suite's wallet answering at the verifier's response_uri (OpenID4VP 1.0 §8.1–§8.3) and its
 * conditions on what the response_uri answers (§8.2; HAIP §5).
 */

/** CreateAuthorizationEndpointResponseParams: the response starts with the request's state. */
export function createAuthorizationEndpointResponseParams(env: WalletEnv) {
  env.responseParams = env.effective.state === undefined ? {} : { state: env.effective.state };
}

/** The one credential query the suite answers: the only one, or the only one a single required credential set names. */
function answeredQueryId(dcql: Json): string {
  const credentials = dcql.credentials;
  if (!Array.isArray(credentials)) fail('the DCQL query has no credentials array');
  if (dcql.credential_sets === undefined) {
    if (credentials.length !== 1) fail('the suite answers one credential; the query asks for several');
    return credentials[0].id;
  }
  const required = (dcql.credential_sets as Json[]).filter((set) => set.required !== false);
  if (required.length !== 1 || required[0].options?.length !== 1 || required[0].options[0].length !== 1) {
    fail('the credential sets do not name a single credential to answer');
  }
  return required[0].options[0][0];
}

/** AddVP1FinalDCQLVPTokenToAuthorizationEndpointResponseParams (§8.1): vp_token = {<query id>: [presentation]}. */
export function addDcqlVpTokenToResponseParams(env: WalletEnv) {
  env.responseParams = { ...env.responseParams, vp_token: { [answeredQueryId(env.dcql)]: [env.credential] } };
}

/** BuildUnsignedRequestToDirectPostEndpoint (direct_post): the form is the parameters, vp_token as JSON. */
export function buildUnsignedRequestToDirectPostEndpoint(env: WalletEnv) {
  env.formParams = Object.fromEntries(
    Object.entries(env.responseParams).map(([name, value]) => [
      name,
      typeof value === 'string' ? value : JSON.stringify(value),
    ]),
  );
}

/**
 * VP1FinalEncryptVPResponse (§8.3, direct_post.jwt): the parameters as a JWE to the first key of
 * client_metadata.jwks, with that key's alg, the first enc offered (A128GCM when none), random
 * apu/apv; posted as `response`.
 */
export async function encryptVpResponse(env: WalletEnv) {
  const metadata = env.effective.client_metadata;
  const key = metadata?.jwks?.keys?.[0];
  if (!isObject(key)) fail('an encrypted response was requested but client_metadata.jwks has no key');
  if (typeof key.alg !== 'string') fail('the key in client_metadata.jwks has no alg');
  const enc = metadata.encrypted_response_enc_values_supported?.[0] ?? 'A128GCM';
  const random = () => new TextEncoder().encode(randomBytes(12).toString('base64url'));
  const jwe = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(env.responseParams)))
    .setProtectedHeader({ alg: key.alg, enc, ...(typeof key.kid === 'string' ? { kid: key.kid } : {}) })
    .setKeyManagementParameters({ apu: random(), apv: random() })
    .encrypt(await importJWK(key as JWK, key.alg));
  env.formParams = { response: jwe };
}

/** CallDirectPostEndpoint: the form POSTed to response_uri; any status is recorded. */
export async function callDirectPostEndpoint(env: WalletEnv) {
  const response = await env.world.fetch(String(env.effective.response_uri), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(env.formParams).toString(),
  });
  env.directPostResponse = await recordResponse(response);
}

const answerOf = (env: WalletEnv) => env.directPostResponse ?? fail('nothing was posted to the response_uri');

/** EnsureHttpStatusCodeIs200 (of the response_uri, or of the request_uri POST in the POST module). */
export function ensureHttpStatusCodeIs200(status: number, body: string) {
  if (status !== 200) fail(`HTTP ${status}, not 200: ${body.slice(0, 300)}`);
}

/** EnsureHttpStatusCodeIs4xx: a negative module's immediate rejection. */
export function ensureHttpStatusCodeIs4xx(env: WalletEnv) {
  const { status } = answerOf(env);
  if (status < 400 || status > 499) fail(`HTTP ${status}, not 4xx`);
}

/** EnsureContentTypeJson (§8.2). */
export function ensureContentTypeJson(env: WalletEnv) {
  const type = mediaTypeOf(answerOf(env).headers.get('content-type'));
  if (type !== 'application/json') fail(`the response_uri answered ${type}, not application/json`);
}

/** ValidateDirectPostResponse (§8.2): a JSON object, empty or with redirect_uri alone. */
export function validateDirectPostResponse(env: WalletEnv) {
  const { json } = answerOf(env);
  if (!isObject(json)) fail('the response_uri did not answer a JSON object');
  const names = Object.keys(json);
  if (names.length > 0 && !(names.length === 1 && names[0] === 'redirect_uri')) {
    fail(`the response_uri answered unexpected members: ${names.join(', ')}`);
  }
}

/** ValidateDirectPostResponseRedirectUriWhenPresent (§8.2): a present redirect_uri is a non-empty string. */
export function validateDirectPostResponseRedirectUriWhenPresent(env: WalletEnv) {
  const { json } = answerOf(env);
  if (
    isObject(json) &&
    'redirect_uri' in json &&
    (typeof json.redirect_uri !== 'string' || json.redirect_uri === '')
  ) {
    fail('redirect_uri is not a non-empty string');
  }
}

/** VP1FinalEnsureDirectPostResponseHasRedirectUriForHaip (HAIP §5): the answer carries redirect_uri. */
export function ensureDirectPostResponseHasRedirectUriForHaip(env: WalletEnv) {
  const { json } = answerOf(env);
  if (!isObject(json) || typeof json.redirect_uri !== 'string')
    fail('the response_uri answered no redirect_uri');
}

/** The response_code the redirect carries back to the tenant's page, if the answer redirects. */
export function responseCodeOf(env: WalletEnv): string | undefined {
  const redirect = answerOf(env).json?.redirect_uri;
  if (typeof redirect !== 'string') return undefined;
  return new URLSearchParams(new URL(redirect).hash.slice(1)).get('response_code') ?? undefined;
}

export const directPostWas2xx = (env: WalletEnv) => {
  const { status } = answerOf(env);
  return status >= 200 && status <= 299;
};
