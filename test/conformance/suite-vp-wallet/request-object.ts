import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import { compactVerify, decodeJwt, decodeProtectedHeader } from 'jose';
import { fail, type RequestObject, recordResponse, type WalletEnv } from './env.ts';

/**
 * The suite's conditions on fetching and reading the verifier's request object (RFC 9101, OpenID4VP
 * 1.0 §5, §5.9.3, §5.10), reimplemented with jose and node:crypto: one function per condition,
 * named after it.
 */

const SELF_ISSUED_V2 = 'https://self-issued.me/v2';
/** What Spring's RestTemplate asks for when it fetches a String (the suite's GET of request_uri). */
const REST_TEMPLATE_ACCEPT = 'text/plain, application/json, application/*+json, */*';

/** A compact JWS request object, header and claims decoded (a JWE would have five parts). */
export function parseRequestObject(value: string): RequestObject {
  const parts = value.split('.');
  if (parts.length === 5) fail('the request object is encrypted, and no key was published to encrypt it to');
  if (parts.length !== 3) fail(`the request_uri did not answer a JWT: ${value.slice(0, 80)}`);
  return { value, header: decodeProtectedHeader(value), claims: decodeJwt(value) };
}

const requestUriOf = (env: WalletEnv) =>
  env.httpParams['request_uri'] ?? fail('the authorization request does not contain a request_uri parameter');

/** FetchRequestUriAndExtractRequestObject: GET request_uri, a 2xx body that parses as the request object. */
export async function fetchRequestUriAndExtractRequestObject(env: WalletEnv) {
  const response = await env.world.fetch(requestUriOf(env), { headers: { accept: REST_TEMPLATE_ACCEPT } });
  const recorded = await recordResponse(response);
  if (recorded.status < 200 || recorded.status > 299) {
    fail(`unable to fetch request_uri: HTTP ${recorded.status} ${recorded.body.slice(0, 200)}`);
  }
  env.requestObject = parseRequestObject(recorded.body.trim());
}

/** CreateWalletNonce: a fresh wallet_nonce for the request_uri POST (§5.10). */
export function createWalletNonce(env: WalletEnv) {
  env.walletNonce = randomBytes(24).toString('base64url');
}

/**
 * PostToRequestUriAndExtractRequestObject: form POST of wallet_nonce to request_uri, Accept
 * application/oauth-authz-req+jwt; an HTTP error ends the flow (§5.10.2), the body must parse.
 */
export async function postToRequestUriAndExtractRequestObject(env: WalletEnv) {
  const response = await env.world.fetch(requestUriOf(env), {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/oauth-authz-req+jwt',
    },
    body: new URLSearchParams(env.walletNonce ? { wallet_nonce: env.walletNonce } : {}).toString(),
  });
  const recorded = await recordResponse(response);
  env.requestUriPostResponse = recorded;
  if (recorded.status >= 400) {
    fail(
      `the verifier answered the request_uri POST with HTTP ${recorded.status}; the wallet must stop (§5.10.2)`,
    );
  }
  env.requestObject = parseRequestObject(recorded.body.trim());
}

/** EnsureRequestUriIsHttps. */
export function ensureRequestUriIsHttps(env: WalletEnv) {
  const uri = requestUriOf(env);
  if (new URL(uri).protocol !== 'https:') fail(`request_uri ${uri} is not https`);
}

/** EnsureRequestUriHasNoFragment. */
export function ensureRequestUriHasNoFragment(env: WalletEnv) {
  const uri = requestUriOf(env);
  if (uri.includes('#')) fail(`request_uri ${uri} has a fragment`);
  new URL(uri);
}

const requestObjectOf = (env: WalletEnv) => env.requestObject ?? fail('no request object was fetched');

/**
 * ExtractAndValidateX509HashClientId: client_id is `x509_hash:` + base64url SHA-256 of the DER of
 * the first x5c certificate; that becomes the expected client id.
 */
export function extractAndValidateX509HashClientId(env: WalletEnv) {
  const { header, claims } = requestObjectOf(env);
  const x5c = header.x5c;
  if (!Array.isArray(x5c)) fail('the request object header has no x5c array');
  if (x5c.length === 0) fail('the request object header has an empty x5c array');
  if (typeof x5c[0] !== 'string') fail('the first x5c entry is not a string');
  const expected = `x509_hash:${createHash('sha256').update(Buffer.from(x5c[0], 'base64')).digest('base64url')}`;
  env.client.client_id = expected;
  if (claims.client_id !== expected) {
    fail(`client_id ${String(claims.client_id)} is not the x509 hash of the x5c leaf, ${expected}`);
  }
}

/** ValidateRequestObjectTypIsOAuthQauthReqJwt (sic): typ oauth-authz-req+jwt (§5, RFC 9101 §10.8). */
export function validateRequestObjectTyp(env: WalletEnv) {
  const typ = requestObjectOf(env).header.typ;
  if (typ !== 'oauth-authz-req+jwt')
    fail(`the request object's typ is ${String(typ)}, not oauth-authz-req+jwt`);
}

const nowSeconds = () => Date.now() / 1000;

/** OIDCCValidateRequestObjectExp (when exp is present): not in the past, not 50 years ahead. */
export function oidccValidateRequestObjectExp(env: WalletEnv) {
  const { exp } = requestObjectOf(env).claims;
  if (exp === undefined) return;
  if (typeof exp !== 'number') fail(`exp ${JSON.stringify(exp)} is not a number`);
  if (exp < nowSeconds()) fail(`the request object expired at ${new Date(exp * 1000).toISOString()}`);
  if (exp > nowSeconds() + 50 * 365 * 86400)
    fail('exp is more than 50 years ahead (milliseconds for seconds?)');
}

/** ValidateRequestObjectIat: when present, not ahead by more than 5 minutes, not more than a day old. */
export function validateRequestObjectIat(env: WalletEnv) {
  const { iat } = requestObjectOf(env).claims;
  if (iat === undefined) return;
  if (typeof iat !== 'number') fail(`iat ${JSON.stringify(iat)} is not a number`);
  if (iat > nowSeconds() + 300) fail('the request object was issued in the future');
  if (iat < nowSeconds() - 86400) fail("the request object's iat is more than a day in the past");
}

/** EnsureNumericRequestObjectClaimsAreNotNull: exp, iat, nbf, max_age are not JSON null. */
export function ensureNumericRequestObjectClaimsAreNotNull(env: WalletEnv) {
  const { claims } = requestObjectOf(env);
  const nulls = ['exp', 'iat', 'nbf', 'max_age'].filter((name) => claims[name] === null);
  if (nulls.length) fail(`numeric claims are null: ${nulls.join(', ')}`);
}

/** ValidateRequestObjectMaxAge: max_age, if present, is a number. */
export function validateRequestObjectMaxAge(env: WalletEnv) {
  const maxAge = requestObjectOf(env).claims.max_age;
  if (maxAge !== undefined && typeof maxAge !== 'number') fail('max_age is not a JSON number');
}

/** EnsureRequestObjectDoesNotContainRequestOrRequestUri (OIDC §6.1). */
export function ensureRequestObjectDoesNotContainRequestOrRequestUri(env: WalletEnv) {
  const { claims } = requestObjectOf(env);
  const present = ['request', 'request_uri'].filter((name) => name in claims);
  if (present.length) fail(`the request object contains ${present.join(' and ')}`);
}

/** EnsureRequestObjectDoesNotContainSubWithClientId (RFC 9101 §10.8). */
export function ensureRequestObjectDoesNotContainSubWithClientId(env: WalletEnv) {
  const { claims } = requestObjectOf(env);
  if (claims.sub !== undefined && claims.sub === (env.client.client_id ?? claims.client_id)) {
    fail('the request object has sub = client_id, which would let it pass as a client assertion');
  }
}

/** ValidateRequestObjectIssIfPresent: iss, when present, equals the client_id. */
export function validateRequestObjectIssIfPresent(env: WalletEnv) {
  const { claims } = requestObjectOf(env);
  if (claims.iss !== undefined && claims.iss !== (env.client.client_id ?? claims.client_id)) {
    fail(`iss ${String(claims.iss)} is not the client_id`);
  }
}

/** ValidateRequestObjectAudForVP (§5.8): aud is (or contains) https://self-issued.me/v2 or the wallet's issuer. */
export function validateRequestObjectAudForVP(env: WalletEnv) {
  const { aud } = requestObjectOf(env).claims;
  if (aud === undefined) fail('the request object has no aud');
  const accepted = [SELF_ISSUED_V2, env.server.issuer];
  const values = Array.isArray(aud) ? aud : [aud];
  if (!values.some((value) => accepted.includes(value))) {
    fail(`aud ${JSON.stringify(aud)} is neither ${SELF_ISSUED_V2} nor the wallet's issuer`);
  }
}

const selfSigned = (certificate: X509Certificate) =>
  certificate.checkIssued(certificate) && certificate.verify(certificate.publicKey);
const within = (certificate: X509Certificate, now: Date) =>
  new Date(certificate.validFrom) <= now && now <= new Date(certificate.validTo);
const issuedBy = (certificate: X509Certificate, issuer: X509Certificate) =>
  certificate.checkIssued(issuer) && certificate.verify(issuer.publicKey);

/**
 * The suite's x5c chain rules (HAIP: the leaf is not self-signed and the trust anchor is not in
 * the chain), with a path check to the trust anchor when one is configured: each certificate
 * issued by the next (names and signature), every one within its validity, the ones above the
 * leaf CAs, the last issued by the anchor. Without an anchor only the walk, and the chain must
 * not end in a self-signed root.
 */
export function validateX5cChain(x5c: unknown, anchorPem: string | undefined, now = new Date()) {
  if (!Array.isArray(x5c) || x5c.length === 0) fail('the x5c chain is missing or empty');
  const chain = x5c.map((der, index) => {
    try {
      return new X509Certificate(Buffer.from(String(der), 'base64'));
    } catch {
      return fail(`the certificate at index ${index} of x5c does not parse`);
    }
  });
  const leaf = chain[0]!;
  if (!within(leaf, now)) fail('the leaf certificate of x5c is not within its validity');
  if (selfSigned(leaf)) fail('the leaf certificate of x5c must not be self-signed');
  for (let i = 0; i + 1 < chain.length; i++) {
    if (!issuedBy(chain[i]!, chain[i + 1]!))
      fail(`the certificate at index ${i} is not issued by the next one`);
  }
  if (anchorPem === undefined) {
    if (chain.length > 1 && selfSigned(chain.at(-1)!)) {
      fail('the trust anchor (a self-signed root CA) must not be included in the x5c chain');
    }
    return chain;
  }
  const anchor = new X509Certificate(anchorPem);
  if (chain.some((certificate) => certificate.raw.equals(anchor.raw))) {
    fail('the trust anchor certificate must not be included in the x5c chain');
  }
  for (const [index, certificate] of chain.entries()) {
    if (!within(certificate, now))
      fail(`the certificate at index ${index} of x5c is not within its validity`);
    if (index > 0 && !certificate.ca) fail(`the certificate at index ${index} of x5c is not a CA`);
  }
  if (!issuedBy(chain.at(-1)!, anchor)) fail('the x5c chain does not lead to the configured trust anchor');
  return chain;
}

/**
 * ValidateRequestObjectSignatureAgainstX5cHeader (§5.9.3): an x5c header whose chain leads to the
 * configured trust anchor, and the request object's signature verified with the leaf's key.
 */
export async function validateRequestObjectSignatureAgainstX5cHeader(env: WalletEnv) {
  const { header, value } = requestObjectOf(env);
  if (header.x5c === undefined) fail('the request object has no x5c header');
  const [leaf] = validateX5cChain(header.x5c, env.trustAnchorPem);
  try {
    await compactVerify(value, leaf!.publicKey, { algorithms: [String(header.alg)] });
  } catch (error) {
    fail(`the request object's signature does not verify with the x5c leaf: ${(error as Error).message}`);
  }
}

/** EnsureClientIdInAuthorizationRequestParametersMatchRequestObject: the front-channel client_id equals the request object's. */
export function ensureClientIdInAuthorizationRequestParametersMatchRequestObject(env: WalletEnv) {
  const outer = env.httpParams['client_id'];
  if (!outer) fail('the authorization request has no client_id');
  const inner = requestObjectOf(env).claims.client_id;
  if (outer !== inner) fail(`client_id ${outer} differs from the request object's ${String(inner)}`);
}

/** ValidateEncryptedRequestObjectHasKid (only for an encrypted request object, which the wallet cannot get here). */
export function validateEncryptedRequestObjectHasKid(env: WalletEnv) {
  const { value, header } = requestObjectOf(env);
  if (value.split('.').length === 5 && !header.kid) fail('the encrypted request object has no kid');
}

/** EnsureOptionalAuthorizationRequestParametersMatchRequestObject: a parameter in both places has one value. */
export function ensureOptionalAuthorizationRequestParametersMatchRequestObject(env: WalletEnv) {
  const { claims } = requestObjectOf(env);
  const differing = Object.entries(env.httpParams)
    .filter(([name]) => name !== 'request_uri' && name in claims)
    .filter(
      ([name, value]) =>
        (typeof claims[name] === 'string' ? claims[name] : JSON.stringify(claims[name])) !== value,
    )
    .map(([name]) => name);
  if (differing.length) fail(`the request object and the URL disagree on ${differing.join(', ')}`);
}

/** WarnIfRequestUriMethodInRequestObject (§5.1): request_uri_method belongs in the URL only. */
export function warnIfRequestUriMethodInRequestObject(env: WalletEnv) {
  if ('request_uri_method' in requestObjectOf(env).claims)
    fail('request_uri_method is inside the request object');
}

/** EnsureNoWalletNonceInRequestObject (§5.10): without a posted wallet_nonce there is none in the request object. */
export function ensureNoWalletNonceInRequestObject(env: WalletEnv) {
  if (env.walletNonce === undefined && 'wallet_nonce' in requestObjectOf(env).claims) {
    fail('the request object carries a wallet_nonce although the wallet posted none');
  }
}

/** EnsureWalletNonceClaimMatchesPostedValue (§5.10). */
export function ensureWalletNonceClaimMatchesPostedValue(env: WalletEnv) {
  const claim = requestObjectOf(env).claims.wallet_nonce;
  if (typeof claim !== 'string') fail('the request object has no wallet_nonce string claim');
  if (claim !== env.walletNonce) fail(`wallet_nonce ${claim} is not the posted ${env.walletNonce}`);
}
