import { createHash, createHmac, type KeyObject } from 'node:crypto';
import { CofferError } from '../errors.ts';
import {
  type DecodedJws,
  decodeCompactJws,
  isJwsAlgorithm,
  type JwsAlgorithm,
  publicKeyFromJwk,
  verifyJwsSignature,
} from '../keys/compact-jws.ts';
import { jwkThumbprint } from '../keys/jwk-thumbprint.ts';

/**
 * DPoP proofs (RFC 9449 §4.3), checked the same way at the token endpoint, at PAR and at every
 * resource endpoint. Plain logic: the replay store, the nonce key and the clock are passed in.
 */

/** Asymmetric algorithms only (§4.2); discovery publishes the same list. */
export const DPOP_ALGORITHMS: JwsAlgorithm[] = ['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519', 'PS256'];

/** How far a proof's iat may be from now, either way (DESIGN.md: 60 s). */
export const DPOP_IAT_WINDOW = 60;
/** Server nonces change every five minutes; the previous one is still accepted, so each lives 5–10 min. */
const NONCE_PERIOD = 300;
const MAX_PROOF_LENGTH = 8192;
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

export interface DpopDeps {
  /** A key every instance shares, so a nonce from one is good at the others. */
  nonceKey: Uint8Array;
  /** Records a proof id; false if it was seen already (on any instance). */
  recordProof: (proofKey: string, expiresAt: number) => Promise<boolean>;
  now?: () => number;
}

export interface DpopExpectation {
  /** htm */
  method: string;
  /** htu: the endpoint's URL without query and fragment. */
  url: string;
  /** At resource endpoints: the access token the proof must name (ath). */
  accessToken?: string;
}

export interface VerifiedDpopProof {
  /** JWK SHA-256 thumbprint of the proof's key (RFC 7638), base64url. */
  jkt: string;
}

const seconds = (deps: DpopDeps) => Math.floor((deps.now ? deps.now() : Date.now()) / 1000);

// Every DPoP request compares with two nonces; they change only every five minutes.
const nonceCache = new WeakMap<Uint8Array, Map<number, string>>();

function nonceOfPeriod(key: Uint8Array, period: number): string {
  let byPeriod = nonceCache.get(key);
  if (!byPeriod) {
    byPeriod = new Map();
    nonceCache.set(key, byPeriod);
  }
  let nonce = byPeriod.get(period);
  if (nonce === undefined) {
    nonce = createHmac('sha256', key).update(`dpop-nonce:${period}`).digest('base64url').slice(0, 32);
    if (byPeriod.size > 4) byPeriod.clear();
    byPeriod.set(period, nonce);
  }
  return nonce;
}

/** The nonce to hand out now (DPoP-Nonce). Stateless: an HMAC of the current five-minute period. */
export function currentDpopNonce(deps: DpopDeps): string {
  return nonceOfPeriod(deps.nonceKey, Math.floor(seconds(deps) / NONCE_PERIOD));
}

function nonceIsCurrent(deps: DpopDeps, nonce: unknown): boolean {
  if (typeof nonce !== 'string') return false;
  const period = Math.floor(seconds(deps) / NONCE_PERIOD);
  return nonce === nonceOfPeriod(deps.nonceKey, period) || nonce === nonceOfPeriod(deps.nonceKey, period - 1);
}

const invalidProof = (why: string) => new CofferError('invalid_dpop_proof', why);

/** htu compares without query and fragment (§4.3 step 9), after URL normalisation. */
function sameEndpoint(htu: unknown, expected: string): boolean {
  if (typeof htu !== 'string') return false;
  try {
    const url = new URL(htu);
    url.search = '';
    url.hash = '';
    return url.href === new URL(expected).href;
  } catch {
    return false;
  }
}

export const accessTokenHash = (token: string) =>
  createHash('sha256').update(token, 'ascii').digest('base64url');

/**
 * The one DPoP header of a request. Node joins repeated headers with ", ", which no compact JWS
 * contains, so a comma means more than one (§4.3 step 1).
 */
export function dpopHeaderOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (Array.isArray(header) || header.includes(',')) throw invalidProof('Send exactly one DPoP header.');
  return header.trim();
}

/** What a proof header yields once checked: the same for every proof a client makes with its key. */
interface ProofHeader {
  alg: JwsAlgorithm;
  key: KeyObject;
  jkt: string;
}

// Clients sign proof after proof with one key, so the header segment repeats byte for byte; its
// parse, key import and thumbprint are kept (a bounded map; the oldest entry leaves first).
const proofHeaders = new Map<string, ProofHeader>();
const MAX_PROOF_HEADERS = 2048;

async function proofHeaderOf(decoded: DecodedJws): Promise<ProofHeader> {
  const known = proofHeaders.get(decoded.encodedHeader);
  if (known) return known;
  const { header } = decoded;
  if (header['typ'] !== 'dpop+jwt') throw invalidProof('The DPoP proof must have typ dpop+jwt.');
  const alg = header['alg'];
  if (!isJwsAlgorithm(alg) || !DPOP_ALGORITHMS.includes(alg))
    throw invalidProof(`The DPoP proof's alg must be one of ${DPOP_ALGORITHMS.join(', ')}.`);
  const jwk = header['jwk'];
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk))
    throw invalidProof('The DPoP proof header must carry its public key (jwk).');
  if (PRIVATE_MEMBERS.some((member) => member in jwk))
    throw invalidProof('The DPoP proof header must carry a public key only.');
  let key: KeyObject;
  let jkt: string;
  try {
    key = publicKeyFromJwk(jwk);
    jkt = jwkThumbprint(jwk);
  } catch {
    throw invalidProof('The DPoP proof header carries no usable public key.');
  }
  const checked = { alg, key, jkt };
  if (proofHeaders.size >= MAX_PROOF_HEADERS) proofHeaders.delete(proofHeaders.keys().next().value!);
  proofHeaders.set(decoded.encodedHeader, checked);
  return checked;
}

export async function verifyDpopProof(
  deps: DpopDeps,
  proof: string,
  expected: DpopExpectation,
): Promise<VerifiedDpopProof> {
  if (proof.length > MAX_PROOF_LENGTH) throw invalidProof('The DPoP proof is not a compact JWS.');
  let decoded: DecodedJws;
  try {
    decoded = decodeCompactJws(proof);
  } catch {
    throw invalidProof('The DPoP proof is not a compact JWS.');
  }
  const { alg, key, jkt } = await proofHeaderOf(decoded);
  try {
    verifyJwsSignature(decoded, alg, key);
  } catch {
    throw invalidProof('The DPoP proof does not verify with the key in its header.');
  }
  const { payload } = decoded;
  if (typeof payload['jti'] !== 'string' || payload['jti'].length === 0 || payload['jti'].length > 256)
    throw invalidProof('The DPoP proof needs a jti of 1 to 256 characters.');
  if (payload['htm'] !== expected.method)
    throw invalidProof(`The DPoP proof's htm must be ${expected.method}.`);
  if (!sameEndpoint(payload['htu'], expected.url))
    throw invalidProof(`The DPoP proof's htu must be ${expected.url}.`);
  const now = seconds(deps);
  const iat = payload['iat'];
  if (typeof iat !== 'number' || !Number.isFinite(iat) || Math.abs(now - iat) > DPOP_IAT_WINDOW)
    throw invalidProof(`The DPoP proof's iat must be within ${DPOP_IAT_WINDOW} s of the server's time.`);
  if (expected.accessToken !== undefined && payload['ath'] !== accessTokenHash(expected.accessToken))
    throw invalidProof("The DPoP proof's ath does not match the access token.");
  if (!nonceIsCurrent(deps, payload['nonce'])) {
    throw new CofferError('use_dpop_nonce', 'Use the DPoP-Nonce this answer carries in the proof.', {
      headers: { 'dpop-nonce': currentDpopNonce(deps) },
    });
  }
  const proofKey = createHash('sha256').update(`${jkt}:${payload['jti']}`).digest('base64url');
  if (!(await deps.recordProof(proofKey, Math.floor(iat) + DPOP_IAT_WINDOW + 1)))
    throw invalidProof('This DPoP proof has been used already.');
  return { jkt };
}

/**
 * At a resource endpoint DPoP errors are 401 with a DPoP challenge (§7.1, §9); the algorithms
 * are named so a client can pick one.
 */
export function resourceChallenge(error: CofferError, deps: DpopDeps): CofferError {
  const code =
    error.code === 'use_dpop_nonce' || error.code === 'invalid_dpop_proof' ? error.code : 'invalid_token';
  // RFC 6750 §3: error_description is printable ASCII without " and \ (and a header must be ASCII).
  const description = error.message.replace(/["\\]/g, "'").replace(/[^\x20-\x7E]/g, '-');
  return new CofferError(code, error.message, {
    status: 401,
    headers: {
      'www-authenticate': `DPoP error="${code}", error_description="${description}", algs="${DPOP_ALGORITHMS.join(' ')}"`,
      ...(code === 'use_dpop_nonce' ? { 'dpop-nonce': currentDpopNonce(deps) } : {}),
    },
  });
}
