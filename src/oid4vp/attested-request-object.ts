import {
  decodeProtectedHeader,
  importJWK,
  type JWK,
  type JWTPayload,
  errors as joseErrors,
  jwtVerify,
} from 'jose';
import { Oid4vpError } from './oid4vp-errors.ts';
import { protectedHeaderOf, SIGNING_ALGORITHMS, verifySignature } from './request-object.ts';

/**
 * `verifier_attestation` (§5.9.3, §12): the request object's `jwt` header holds a Verifier
 * Attestation JWT from an issuer of VERIFIER_ATTESTATION_ISSUERS whose `sub` is the client
 * identifier; the request itself is signed with the attestation's `cnf` key, which proves the
 * verifier holds it.
 */
const ATTESTATION_TYPE = 'verifier-attestation+jwt';
const CLOCK_SKEW_SECONDS = 60;

export interface VerifierAttestation {
  issuer: string;
  /** `redirect_uris` of the attestation: a fragment response may only go to one of these. */
  redirectUris: string[] | null;
}

const refused = (why: string) => new Oid4vpError('invalid_client', `the verifier attestation ${why}`);

/** The attestation's claims, once its signature checks out under a trusted issuer key. */
async function verifyAttestation(attestation: string, issuers: JWK[], now: Date): Promise<JWTPayload> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(attestation);
  } catch {
    throw refused('cannot be read');
  }
  if (header.typ !== ATTESTATION_TYPE) throw refused(`must have typ ${ATTESTATION_TYPE}`);
  if (typeof header.alg !== 'string' || !SIGNING_ALGORITHMS.includes(header.alg)) {
    throw refused(`is signed with an algorithm this wallet does not accept (${String(header.alg)})`);
  }
  const candidates = issuers.filter(
    (key) =>
      (header.kid === undefined || key.kid === header.kid) &&
      (key.alg === undefined || key.alg === header.alg) &&
      key.use !== 'enc',
  );
  for (const candidate of candidates) {
    let key: Awaited<ReturnType<typeof importJWK>>;
    try {
      const { iss: _issuer, ...jwk } = candidate as JWK & { iss?: string };
      key = await importJWK(jwk, header.alg);
    } catch {
      continue;
    }
    try {
      const { payload } = await jwtVerify(attestation, key, {
        typ: ATTESTATION_TYPE,
        algorithms: [header.alg],
        requiredClaims: ['iss', 'sub', 'exp', 'cnf'],
        clockTolerance: CLOCK_SKEW_SECONDS,
        currentDate: now,
        ...((candidate as { iss?: string }).iss ? { issuer: (candidate as { iss: string }).iss } : {}),
      });
      return payload;
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw refused('has expired');
      if (error instanceof joseErrors.JWTClaimValidationFailed) {
        throw refused(`${error.claim} claim is not valid (${error.reason})`);
      }
      // Another trusted key may have signed it.
    }
  }
  throw refused('is not signed by an issuer this wallet trusts (VERIFIER_ATTESTATION_ISSUERS)');
}

export async function verifyAttestedRequestObject(
  jwt: string,
  subject: string,
  options: { now: Date; attestationIssuers: JWK[] },
): Promise<{ payload: JWTPayload; attestation: VerifierAttestation }> {
  const header = protectedHeaderOf(jwt);
  if (typeof header['jwt'] !== 'string') {
    throw new Oid4vpError(
      'invalid_client',
      'a verifier_attestation request object carries its Verifier Attestation JWT in the jwt header',
    );
  }
  const claims = await verifyAttestation(header['jwt'], options.attestationIssuers, options.now);
  if (claims.sub !== subject) throw refused('is for another client identifier (sub)');
  if (typeof claims.iat === 'number' && claims.iat > options.now.getTime() / 1000 + CLOCK_SKEW_SECONDS) {
    throw refused('is issued in the future');
  }
  const cnf = claims['cnf'] as { jwk?: unknown } | undefined;
  const cnfJwk = cnf?.jwk;
  if (cnfJwk === null || typeof cnfJwk !== 'object' || 'd' in cnfJwk) {
    throw refused('has no public key in cnf.jwk');
  }
  let key: Awaited<ReturnType<typeof importJWK>>;
  try {
    key = await importJWK(cnfJwk as JWK, header.alg);
  } catch {
    throw refused(`cnf key cannot verify a ${header.alg} signature`);
  }
  const redirectUris = claims['redirect_uris'];
  if (
    redirectUris !== undefined &&
    !(Array.isArray(redirectUris) && redirectUris.every((uri) => typeof uri === 'string'))
  ) {
    throw refused('has redirect_uris that are not a list of URIs');
  }
  const payload = await verifySignature(jwt, key, header.alg, options.now);
  return {
    payload,
    attestation: { issuer: String(claims.iss), redirectUris: (redirectUris as string[] | undefined) ?? null },
  };
}
