import {
  decodeProtectedHeader,
  importJWK,
  type JWK,
  type JWTPayload,
  errors as joseErrors,
  jwtVerify,
  UnsecuredJWT,
} from 'jose';
import { invalidRequest, invalidRequestObject } from './oid4vp-errors.ts';

/**
 * Request Objects (JAR, RFC 9101, as OpenID4VP §5 profiles it): `typ` oauth-authz-req+jwt, an
 * asymmetric signature, and a `client_id` equal to the one in the query. An `exp` is honoured
 * but not required: neither RFC 9101 nor OpenID4VP 1.0 asks for one, and the OpenID Foundation
 * conformance suite's verifier sends none; replay of a presentation is stopped by the nonce,
 * which is answered once per verifier.
 */
export const SIGNING_ALGORITHMS = [
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
  'PS256',
  'PS384',
  'PS512',
  'RS256',
];
const REQUEST_OBJECT_TYPE = 'oauth-authz-req+jwt';
const CLOCK_SKEW_SECONDS = 60;

export function protectedHeaderOf(jwt: string) {
  if (jwt.split('.').length !== 3) {
    throw invalidRequestObject('the request object must be a signed JWT (JWS compact serialization)');
  }
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(jwt);
  } catch {
    throw invalidRequestObject('the request object header cannot be read');
  }
  if (header.typ !== REQUEST_OBJECT_TYPE) {
    throw invalidRequestObject(`the request object must have typ ${REQUEST_OBJECT_TYPE}`);
  }
  if (typeof header.alg !== 'string' || !SIGNING_ALGORITHMS.includes(header.alg)) {
    throw invalidRequestObject(`the request object algorithm ${String(header.alg)} is not accepted`);
  }
  return header as typeof header & { alg: string };
}

export async function verifySignature(
  jwt: string,
  key: Parameters<typeof jwtVerify>[1],
  alg: string,
  now: Date,
) {
  try {
    const { payload } = await jwtVerify(jwt, key as never, {
      typ: REQUEST_OBJECT_TYPE,
      algorithms: [alg],
      clockTolerance: CLOCK_SKEW_SECONDS,
      currentDate: now,
    });
    return payload;
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) throw invalidRequestObject('the request object has expired');
    if (error instanceof joseErrors.JWTClaimValidationFailed) {
      throw invalidRequestObject(`the request object's ${error.claim} claim is not valid`);
    }
    throw invalidRequestObject('the request object signature does not verify');
  }
}

/** A registered verifier's request object, signed with a key from its registered JWKS. */
export async function verifyRegisteredRequestObject(
  jwt: string,
  jwks: JWK[],
  now: Date,
): Promise<JWTPayload> {
  const header = protectedHeaderOf(jwt);
  const candidates = jwks.filter(
    (k) =>
      k.use !== 'enc' &&
      (header.kid === undefined || k.kid === header.kid) &&
      (!k.alg || k.alg === header.alg),
  );
  if (candidates.length !== 1) {
    throw invalidRequestObject(
      'no single registered key of this verifier matches the request object (kid, alg)',
    );
  }
  let key: Awaited<ReturnType<typeof importJWK>>;
  try {
    key = await importJWK(candidates[0]!, header.alg);
  } catch {
    throw invalidRequestObject('the registered key cannot verify this request object');
  }
  return verifySignature(jwt, key, header.alg, now);
}

/** The claims every request object must meet besides its signature. */
export function checkRequestObjectClaims(
  payload: JWTPayload,
  expected: { clientId: string; audiences: string[]; walletNonce?: string; now: Date },
): void {
  if (payload['client_id'] !== expected.clientId) {
    throw invalidRequestObject('the request object client_id differs from the client_id of the request');
  }
  const aud = payload.aud;
  if (aud !== undefined) {
    const audiences = Array.isArray(aud) ? aud : [aud];
    if (!audiences.some((a) => expected.audiences.includes(a))) {
      throw invalidRequestObject(
        `the request object is meant for another audience (expected ${expected.audiences[0]})`,
      );
    }
  }
  if (typeof payload.iat === 'number' && payload.iat > expected.now.getTime() / 1000 + CLOCK_SKEW_SECONDS) {
    throw invalidRequestObject('the request object is issued in the future');
  }
  if (expected.walletNonce !== undefined && payload['wallet_nonce'] !== expected.walletNonce) {
    throw invalidRequestObject('the request object does not carry the wallet_nonce this wallet sent');
  }
}

/**
 * A redirect_uri verifier's request object: an unsecured JWT (`alg` none, RFC 7519 §6), as the
 * OpenID Foundation suite sends by request_uri, since §5.9.3 says its requests cannot be signed.
 * It proves nothing, as plain parameters prove nothing; a signed one is refused, for the wallet
 * has no key to check it with. An `exp` is honoured when present.
 */
export function readUnsecuredRequestObject(jwt: string, now: Date): JWTPayload {
  let alg: unknown;
  try {
    alg = decodeProtectedHeader(jwt).alg;
  } catch {
    throw invalidRequestObject('the request object cannot be read');
  }
  if (alg !== 'none') {
    throw invalidRequest(
      'a redirect_uri verifier cannot send signed requests (§5.9.3); send the parameters unsigned',
    );
  }
  try {
    return UnsecuredJWT.decode(jwt, { currentDate: now, clockTolerance: CLOCK_SKEW_SECONDS }).payload;
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) throw invalidRequestObject('the request object has expired');
    if (error instanceof joseErrors.JWTClaimValidationFailed)
      throw invalidRequestObject(`the request object's ${error.claim} claim is not valid`);
    throw invalidRequestObject('the request object cannot be read');
  }
}
