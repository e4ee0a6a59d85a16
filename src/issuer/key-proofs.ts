import type { JsonWebKey, KeyObject, X509Certificate } from 'node:crypto';
import { isUniqueViolation } from '../db/dialect.ts';
import { CofferError } from '../errors.ts';
import { resolveDidKey } from '../formats/did-resolution.ts';
import {
  type DecodedJws,
  decodeCompactJws,
  type JwsAlgorithm,
  publicKeyFromJwk,
  verifyJwsSignature,
} from '../keys/compact-jws.ts';
import { jwkThumbprint } from '../keys/jwk-thumbprint.ts';
import { PROOF_ALGORITHMS } from './configurations.ts';
import { C_NONCE_TTL, checkCNonce } from './issuance-tokens.ts';
import type { IssuerDeps } from './issuer-deps.ts';
import { insertUsedCNonce } from './issuer-repository.ts';
import { verifyX5cJws, walletProviderAnchors } from './wallet-attestation-check.ts';

/** §8.2.1.1: a proof's iat within five minutes, a minute's clock skew ahead. */
const PROOF_AGE = 300;
const PROOF_SKEW = 60;

/** ASCII only: OpenID4VCI §8.3.1.2 restricts error_description to printable ASCII. */
export const invalidProof = (why: string) =>
  new CofferError('invalid_proof', `The key proof is not valid: ${why}.`, { status: 400 });
const invalidNonce = (why: string) => new CofferError('invalid_nonce', why, { status: 400 });

/** A key the wallet proved, as the credential binds it: a JWK, and the DID when the proof named one. */
export interface ProvenKey {
  jwk: JsonWebKey;
  did?: string;
}

export interface ProofExpectation {
  issuerId: string;
  /** Key attestations (Annex D) required: HAIP issuers and configurations that ask for them. */
  keyAttestation: boolean;
  /**
   * The metadata's batch_size (issuer-wide), read only when more proofs come than the
   * configuration's own batch_size, which never exceeds it: most requests carry one proof.
   */
  batchSize: { atLeast: number; advertised: () => Promise<number> };
}

const thumbprintOf = (jwk: JsonWebKey) => jwkThumbprint(jwk);

/**
 * The `proofs` of a credential request (§8.2.1): `jwt` proofs, one per copy, each by its own
 * key; or one `attestation` (a key attestation naming every key). Each c_nonce is accepted once.
 */
export async function verifyKeyProofs(
  deps: IssuerDeps,
  proofs: { jwt?: string[]; attestation?: string[] } | undefined,
  expected: ProofExpectation,
): Promise<ProvenKey[]> {
  const types = Object.keys(proofs ?? {}).filter((k) => (proofs as Record<string, unknown>)[k] !== undefined);
  if (!proofs || types.length !== 1)
    throw invalidProof('proofs must hold exactly one proof type (jwt or attestation)');
  const now = deps.now();
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const nonces = new Set<string>();
  const providers = await walletProviderAnchors(deps);
  let keys: ProvenKey[];
  if (proofs.jwt) {
    const most = await batchSizeFor(proofs.jwt.length, expected);
    if (proofs.jwt.length > most) {
      throw new CofferError('invalid_credential_request', `At most ${most} proofs are taken (batch_size).`, {
        status: 400,
      });
    }
    keys = proofs.jwt.map((jwt) => verifyJwtProof(deps, jwt, expected, nowSeconds, nonces, now, providers));
  } else if (proofs.attestation) {
    const attested = verifyKeyAttestation(providers, proofs.attestation[0]!, nowSeconds, now);
    if (typeof attested.nonce !== 'string') throw invalidProof('the attestation proof carries no nonce');
    checkNonce(deps, expected.issuerId, attested.nonce, nowSeconds);
    nonces.add(attested.nonce);
    const most = await batchSizeFor(attested.keys.length, expected);
    if (attested.keys.length > most) throw invalidProof(`it attests more keys than batch_size (${most})`);
    keys = attested.keys.map((jwk) => ({ jwk }));
  } else {
    throw invalidProof(`the proof type ${types[0]} is not supported`);
  }
  const thumbprints = new Set(keys.map((k) => thumbprintOf(k.jwk)));
  if (thumbprints.size !== keys.length) throw invalidProof('each copy must be bound to its own key');
  for (const nonce of nonces) {
    if (!(await markNonceUsed(deps, expected.issuerId, nonce, nowSeconds))) {
      throw invalidNonce('The c_nonce has been used already; fetch a new one from the Nonce Endpoint.');
    }
  }
  return keys;
}

const batchSizeFor = async (count: number, expected: ProofExpectation) =>
  count <= expected.batchSize.atLeast ? expected.batchSize.atLeast : expected.batchSize.advertised();

function checkNonce(deps: IssuerDeps, issuerId: string, nonce: unknown, nowSeconds: number): void {
  if (nonce === undefined) throw invalidProof('it carries no nonce (fetch one from the Nonce Endpoint)');
  if (checkCNonce(deps.secrets.cNonce, issuerId, nonce, nowSeconds) === null) {
    throw invalidNonce('The c_nonce is not valid or has expired; fetch a new one from the Nonce Endpoint.');
  }
}

function verifyJwtProof(
  deps: IssuerDeps,
  jwt: string,
  expected: ProofExpectation,
  nowSeconds: number,
  nonces: Set<string>,
  now: Date,
  providers: X509Certificate[],
): ProvenKey {
  let decoded: DecodedJws;
  try {
    decoded = decodeCompactJws(jwt);
  } catch {
    throw invalidProof('it is not a compact JWS');
  }
  const { header, payload } = decoded;
  if (header['typ'] !== 'openid4vci-proof+jwt') throw invalidProof('typ must be openid4vci-proof+jwt');
  const alg = header['alg'];
  if (typeof alg !== 'string' || !PROOF_ALGORITHMS.includes(alg))
    throw invalidProof(`the algorithm ${String(alg)} is not accepted`);
  const named = ['jwk', 'kid', 'x5c'].filter((member) => header[member] !== undefined);
  if (named.length !== 1 || named[0] === 'x5c')
    throw invalidProof('the header must name its key by jwk or by a did:key or did:jwk kid, not both');
  let key: KeyObject;
  let proven: ProvenKey;
  try {
    if (header['jwk'] !== undefined) {
      const jwk = header['jwk'] as JsonWebKey;
      if ('d' in jwk) throw invalidProof('the jwk holds a private key');
      key = publicKeyFromJwk(jwk);
      proven = { jwk: key.export({ format: 'jwk' }) };
    } else {
      const resolved = resolveDidKey(String(header['kid']));
      key = publicKeyFromJwk(resolved.jwk);
      proven = { jwk: resolved.jwk, did: resolved.did };
    }
  } catch (error) {
    if (error instanceof CofferError) throw error;
    throw invalidProof('its key cannot be read');
  }
  try {
    verifyJwsSignature(decoded, alg as JwsAlgorithm, key);
  } catch {
    throw invalidProof('the signature does not verify with its key');
  }
  const audiences = Array.isArray(payload['aud']) ? payload['aud'] : [payload['aud']];
  if (!audiences.includes(expected.issuerId))
    throw invalidProof(`aud must be the credential issuer ${expected.issuerId}`);
  const iat = payload['iat'];
  if (typeof iat !== 'number' || iat < nowSeconds - PROOF_AGE || iat > nowSeconds + PROOF_SKEW) {
    throw invalidProof('iat must be within the last five minutes');
  }
  checkNonce(deps, expected.issuerId, payload['nonce'], nowSeconds);
  nonces.add(payload['nonce'] as string);
  if (header['key_attestation'] !== undefined || expected.keyAttestation) {
    if (typeof header['key_attestation'] !== 'string')
      throw invalidProof('a key attestation (key_attestation header) is required');
    const attested = verifyKeyAttestation(providers, header['key_attestation'], nowSeconds, now);
    if (!attested.keys.some((k) => thumbprintOf(k) === thumbprintOf(proven.jwk))) {
      throw invalidProof('the key attestation does not name the proof key');
    }
  }
  return proven;
}

/** A key attestation (Annex D.1) from a trusted wallet provider: the keys it vouches for. */
function verifyKeyAttestation(providers: X509Certificate[], jwt: string, nowSeconds: number, now: Date) {
  let decoded: DecodedJws;
  try {
    decoded = decodeCompactJws(jwt);
  } catch {
    throw invalidProof('the key attestation is not a compact JWS');
  }
  if (decoded.header['typ'] !== 'key-attestation+jwt')
    throw invalidProof('the key attestation typ must be key-attestation+jwt');
  verifyX5cJws(decoded, providers, now, (why) => invalidProof(`key attestation: ${why}`));
  const {
    attested_keys: keys,
    exp,
    nonce,
  } = decoded.payload as { attested_keys?: unknown; exp?: unknown; nonce?: unknown };
  if (typeof exp === 'number' && exp <= nowSeconds) throw invalidProof('the key attestation has expired');
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > 100)
    throw invalidProof('the key attestation names no keys');
  const jwks = keys.map((jwk) => {
    try {
      return publicKeyFromJwk(jwk).export({ format: 'jwk' });
    } catch {
      throw invalidProof('the key attestation names a key that cannot be read');
    }
  });
  return { keys: jwks, nonce };
}

/**
 * Marks a c_nonce used, once, in the relaxed group commit (a nonce lives five minutes; a power
 * cut may forget the last marks, never a durable write). Expired marks go with the worker's sweep.
 */
async function markNonceUsed(
  deps: IssuerDeps,
  issuerId: string,
  nonce: string,
  nowSeconds: number,
): Promise<boolean> {
  try {
    await deps.writes.relaxedStatement((tx) =>
      insertUsedCNonce(tx, {
        verifier: `c_nonce:${issuerId}`,
        nonce,
        expiresAt: nowSeconds + C_NONCE_TTL + 60,
      }),
    );
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}
