import { compactVerify, decodeJwt, decodeProtectedHeader, importJWK, type JWK } from 'jose';
import { TrustError } from '../trust-error.ts';

/**
 * Entity Statements of OpenID Federation 1.0 §3: an Entity Configuration (`iss` = `sub`, about
 * itself) or a Subordinate Statement (a superior about an immediate subordinate). Each is read and
 * checked on its own here (§3.2); how statements bind to each other is trust-chain.ts's.
 */

export const ENTITY_STATEMENT_TYPE = 'entity-statement+jwt';
/** Algorithms a statement may use: asymmetric only, never `none` (§3). */
const ALGORITHMS = ['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519', 'PS256', 'RS256'];
/** Seconds of clock difference tolerated on `iat` and `exp`. */
const SKEW = 60;

export interface JwkSet {
  keys: JWK[];
}

export interface EntityStatement {
  jwt: string;
  kid: string;
  alg: string;
  iss: string;
  sub: string;
  iat: number;
  exp: number;
  jwks: JwkSet;
  /** Everything else the statement says (metadata, authority_hints, constraints, …). */
  claims: Record<string, unknown>;
  /** An Entity Configuration: about itself. */
  configuration: boolean;
}

const invalid = (why: string) => new TrustError('invalid_trust_chain', why);

/** An Entity Identifier (§1.2): an https URL with a host, without query or fragment. */
export function isEntityIdentifier(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > 2048) return false;
  try {
    const url = new URL(value);
    return (
      url.protocol === 'https:' &&
      url.hostname !== '' &&
      url.search === '' &&
      url.hash === '' &&
      !url.username
    );
  } catch {
    return false;
  }
}

/** Where an entity publishes its Entity Configuration (§9): appended after its path. */
export const entityConfigurationUrl = (entityId: string) =>
  `${entityId.replace(/\/$/, '')}/.well-known/openid-federation`;

function readJwks(value: unknown, where: string): JwkSet {
  const keys = (value as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > 20)
    throw invalid(`${where} has no jwks of 1 to 20 keys`);
  const kids = new Set<string>();
  for (const key of keys) {
    if (key === null || typeof key !== 'object' || typeof key.kid !== 'string' || key.kid === '')
      throw invalid(`${where} has a key without a kid`);
    if (kids.has(key.kid)) throw invalid(`${where} names the kid ${key.kid} twice`);
    if ('d' in key || key.kty === 'oct') throw invalid(`${where} publishes a private or symmetric key`);
    kids.add(key.kid);
  }
  return { keys: keys as JWK[] };
}

/** Claims only one kind of statement may carry (§3.1.1, §3.1.2). */
const ONLY_IN_CONFIGURATIONS = [
  'authority_hints',
  'trust_anchor_hints',
  'trust_marks',
  'trust_mark_issuers',
  'trust_mark_owners',
];
const ONLY_IN_SUBORDINATE = ['metadata_policy', 'metadata_policy_crit', 'constraints', 'source_endpoint'];

/**
 * Reads a statement and checks it alone (§3.2): header, identifiers, times, keys, the claims its
 * kind may carry, `crit`. Its signature is checked by whoever knows which keys vouch for it.
 */
export function readEntityStatement(jwt: string, now: Date): EntityStatement {
  let header: Record<string, unknown>;
  let claims: Record<string, unknown>;
  try {
    header = decodeProtectedHeader(jwt) as Record<string, unknown>;
    claims = decodeJwt(jwt) as Record<string, unknown>;
  } catch {
    throw invalid('a statement is not a compact JWS');
  }
  if (header['typ'] !== ENTITY_STATEMENT_TYPE)
    throw invalid(`a statement's typ is not ${ENTITY_STATEMENT_TYPE}`);
  const alg = header['alg'];
  if (typeof alg !== 'string' || !ALGORITHMS.includes(alg))
    throw invalid('a statement uses no accepted algorithm');
  const kid = header['kid'];
  if (typeof kid !== 'string' || kid === '') throw invalid('a statement names no kid');
  if ('trust_chain' in header || 'peer_trust_chain' in header)
    throw invalid('a statement carries a trust_chain header (§4.3)');
  const { iss, sub, iat, exp } = claims;
  if (!isEntityIdentifier(iss) || !isEntityIdentifier(sub))
    throw invalid('a statement has no https iss and sub');
  if (typeof iat !== 'number' || typeof exp !== 'number')
    throw invalid(`the statement about ${sub} has no iat and exp`);
  const seconds = now.getTime() / 1000;
  if (iat > seconds + SKEW) throw invalid(`the statement about ${sub} is issued in the future`);
  if (exp <= seconds - SKEW) throw invalid(`the statement by ${iss} about ${sub} has expired`);
  const configuration = iss === sub;
  for (const name of configuration ? ONLY_IN_SUBORDINATE : ONLY_IN_CONFIGURATIONS) {
    if (name in claims)
      throw invalid(
        `${name} may not appear in ${configuration ? 'an Entity Configuration' : 'a Subordinate Statement'}`,
      );
  }
  // No extension claims are understood here, so none may be critical (§13.4).
  if ('crit' in claims)
    throw invalid(`the statement about ${sub} names critical claims Coffer does not understand`);
  const metadata = claims['metadata'];
  if (
    metadata !== undefined &&
    (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata))
  )
    throw invalid(`the metadata about ${sub} is not an object`);
  for (const [type, value] of Object.entries((metadata ?? {}) as Record<string, unknown>)) {
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw invalid(`the ${type} metadata about ${sub} is not an object`);
    if (Object.values(value).some((member) => member === null))
      throw invalid(`the ${type} metadata about ${sub} has a null value (§5)`);
  }
  const hints = claims['authority_hints'];
  if (
    hints !== undefined &&
    (!Array.isArray(hints) || hints.length === 0 || !hints.every(isEntityIdentifier))
  )
    throw invalid(`the authority_hints of ${sub} are not a non-empty list of entity identifiers`);
  return {
    jwt,
    kid,
    alg,
    iss,
    sub,
    iat,
    exp,
    jwks: readJwks(claims['jwks'], `the statement about ${sub}`),
    claims,
    configuration,
  };
}

/**
 * Checks a statement's signature with the key of `jwks` its `kid` names (exactly); `who` says
 * whose keys they are, for the error.
 */
export async function verifyEntityStatement(
  statement: EntityStatement,
  jwks: JwkSet,
  who: string,
): Promise<void> {
  const jwk = jwks.keys.find((key) => key.kid === statement.kid);
  if (!jwk)
    throw invalid(
      `the statement by ${statement.iss} about ${statement.sub} is signed with a key ${who} does not list`,
    );
  try {
    const key = await importJWK(jwk, statement.alg);
    await compactVerify(statement.jwt, key, { algorithms: [statement.alg] });
  } catch {
    throw invalid(
      `the signature of the statement by ${statement.iss} about ${statement.sub} does not verify with ${who}'s key`,
    );
  }
}
