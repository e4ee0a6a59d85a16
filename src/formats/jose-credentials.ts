import { createPublicKey, type JsonWebKey, type KeyObject, type X509Certificate } from 'node:crypto';
import {
  compactVerify,
  decodeJwt,
  decodeProtectedHeader,
  type JWTPayload,
  type ProtectedHeaderParameters,
} from 'jose';
import { chainsToAnchor, MAX_CHAIN, parseCertificate, validAt } from '../keys/certificate-chain.ts';
import { authorityKeyIdentifierOf } from '../keys/certificate-fields.ts';
import { isJwsAlgorithm, verifyCompactJws } from '../keys/compact-jws.ts';
import type { CredentialAuthority, IssuerCertificate, ParseContext } from './credential-format.ts';
import { rejected } from './credential-format.ts';
import { DidResolutionError, resolveDidKey } from './did-resolution.ts';

/**
 * What the JWT-secured formats (dc+sd-jwt, jwt_vc_json) share: reading a compact JWS without
 * trusting it, the accepted algorithms, validity times, and where the issuer's key comes from.
 */

/** ES256, ES384, ES512 and EdDSA (DESIGN.md), and Ed25519, EdDSA's fully specified name. */
export const JWS_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
const CLOCK_SKEW_SECONDS = 60;

export interface DecodedJws {
  header: ProtectedHeaderParameters & { alg: string };
  payload: JWTPayload;
}

export function decodeJws(jws: string, what: string): DecodedJws {
  if (jws.split('.').length !== 3) throw rejected(`${what} is not a compact JWS (three dot-separated parts)`);
  let header: ProtectedHeaderParameters;
  let payload: JWTPayload;
  try {
    header = decodeProtectedHeader(jws);
    payload = decodeJwt(jws);
  } catch {
    throw rejected(`${what} cannot be decoded (base64url JSON header and payload)`);
  }
  if (typeof header.alg !== 'string' || !JWS_ALGORITHMS.includes(header.alg)) {
    throw rejected(`${what} is signed with ${String(header.alg)}; accepted are ${JWS_ALGORITHMS.join(', ')}`);
  }
  return { header: header as DecodedJws['header'], payload };
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** `exp` not past, `nbf` not ahead (60 s of clock skew either way). */
export function checkTimes(payload: JWTPayload, now: Date): void {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  for (const claim of ['exp', 'nbf', 'iat'] as const) {
    const value = payload[claim];
    if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value))) {
      throw rejected(`its ${claim} is not a number of seconds`);
    }
  }
  if (payload.exp !== undefined && payload.exp <= nowSeconds - CLOCK_SKEW_SECONDS) {
    throw rejected(`it expired at ${iso(payload.exp)}`);
  }
  if (payload.nbf !== undefined && payload.nbf > nowSeconds + CLOCK_SKEW_SECONDS) {
    throw rejected(`it is not valid before ${iso(payload.nbf)}`);
  }
}

export const isoOrNull = (seconds: unknown) => (typeof seconds === 'number' ? iso(seconds) : null);

export interface IssuerKey {
  key: KeyObject | JsonWebKey;
  certificate: IssuerCertificate | null;
  /** The x5c leaf the key is from, if any. */
  leaf?: X509Certificate;
  /** The x5c certificates after the leaf (a trusted list's service may be any of them, or above). */
  intermediates?: X509Certificate[];
  /** The DID whose key it is, when no certificate names the issuer (a verifier's trust is by DID). */
  did?: string;
}

export function certificateOf(
  leaf: X509Certificate,
  chain: X509Certificate[],
  context: ParseContext,
): IssuerCertificate {
  return {
    subject: leaf.subject.replaceAll('\n', ', '),
    issuer: leaf.issuer.replaceAll('\n', ', '),
    fingerprint: leaf.fingerprint256,
    notAfter: new Date(leaf.validTo).toISOString(),
    trusted: chainsToAnchor(leaf, chain, context.issuerTrustAnchors, context.now),
  };
}

const publicKeys = new WeakMap<X509Certificate, KeyObject>();
/** The certificate's key, made once per parsed certificate. */
export function publicKeyOf(certificate: X509Certificate): KeyObject {
  let key = publicKeys.get(certificate);
  if (!key) {
    key = certificate.publicKey;
    publicKeys.set(certificate, key);
  }
  return key;
}

/**
 * Parsed issuer chains by their DER bytes: an issuer signs many credentials with one document
 * signer certificate, and parsing it is a good part of a store. Bounded; entries are facts about
 * immutable bytes, so nothing needs invalidating.
 */
const parsedChains = new Map<string, X509Certificate[]>();
const MAX_PARSED_CHAINS = 256;

function parseChain(ders: Uint8Array[]): X509Certificate[] {
  const key = ders.map((der) => Buffer.from(der).toString('base64')).join('.');
  let chain = parsedChains.get(key);
  if (!chain) {
    try {
      chain = ders.map((der) => parseCertificate(der));
      publicKeyOf(chain[0]!);
    } catch {
      throw rejected('a certificate of its issuer cannot be read');
    }
    if (parsedChains.size >= MAX_PARSED_CHAINS) parsedChains.delete(parsedChains.keys().next().value!);
    parsedChains.set(key, chain);
  }
  return chain;
}

/**
 * The leaf of an `x5c` / `x5chain` (DER certificates, leaf first). Storing requires it valid now;
 * describing a credential already stored does not (its signer certificate may expire since).
 */
export function certificateChain(
  ders: Uint8Array[],
  context: ParseContext,
  requireValidNow = true,
): { leaf: X509Certificate; intermediates: X509Certificate[]; info: IssuerCertificate } {
  if (ders.length === 0 || ders.length > MAX_CHAIN)
    throw rejected(`its certificate chain must hold 1 to ${MAX_CHAIN} certificates`);
  const chain = parseChain(ders);
  const leaf = chain[0]!;
  if (requireValidNow && !validAt(leaf, context.now)) {
    throw rejected("its issuer's certificate is not valid at this time");
  }
  return { leaf, intermediates: chain.slice(1), info: certificateOf(leaf, chain.slice(1), context) };
}

/**
 * The authority key identifiers of every certificate of an `x5c` / `x5chain` (DCQL
 * `trusted_authorities` of type `aki`, OpenID4VP §6.1.1: the chain may be a single certificate
 * or part of the issuer's chain, and any of its certificates may match); undefined when none
 * carries one.
 */
export function authorityOfChain(ders: Uint8Array[]): CredentialAuthority | undefined {
  if (ders.length === 0 || ders.length > MAX_CHAIN) return undefined;
  const identifiers = parseChain(ders)
    .map(authorityKeyIdentifierOf)
    .filter((identifier) => identifier !== null);
  return identifiers.length ? { type: 'aki', values: [...new Set(identifiers)] } : undefined;
}

/** The DER certificates of a JWS header's `x5c`, or null when it has none (or not an array of strings). */
export function x5cOf(decoded: DecodedJws): Uint8Array[] | null {
  const { x5c } = decoded.header;
  if (!Array.isArray(x5c) || !x5c.every((c) => typeof c === 'string')) return null;
  return x5c.map((c) => Buffer.from(c, 'base64'));
}

/** The issuer's key: the `x5c` leaf's, else the `kid` (or `iss`) DID's, resolved locally. */
export function issuerKeyOf(decoded: DecodedJws, context: ParseContext, requireValidNow = true): IssuerKey {
  const { x5c, kid } = decoded.header;
  if (x5c !== undefined) {
    const ders = x5cOf(decoded);
    if (!ders) throw rejected('its x5c is not an array of certificates');
    const { leaf, intermediates, info } = certificateChain(ders, context, requireValidNow);
    return { key: publicKeyOf(leaf), certificate: info, leaf, intermediates };
  }
  const iss = decoded.payload.iss;
  const didUrl =
    typeof kid === 'string' && kid.startsWith('did:')
      ? kid
      : typeof kid === 'string' && typeof iss === 'string' && kid.startsWith('#')
        ? `${iss}${kid}`
        : iss;
  if (typeof didUrl !== 'string')
    throw rejected('it names no issuer key (x5c, or a did:key / did:jwk in kid or iss)');
  try {
    const resolved = resolveDidKey(didUrl);
    if (typeof iss === 'string' && iss.startsWith('did:') && resolved.did !== iss) {
      throw rejected(`it is signed with a key of ${resolved.did}, not of its issuer ${iss}`);
    }
    return { key: resolved.jwk, certificate: null, did: resolved.did };
  } catch (error) {
    if (error instanceof DidResolutionError) throw rejected(error.message);
    throw error;
  }
}

/** The issuer's signature over a compact JWS. */
export async function verifyIssuerSignature(
  jws: string,
  decoded: DecodedJws,
  issuer: IssuerKey,
): Promise<void> {
  try {
    const key =
      'kty' in issuer.key ? createPublicKey({ key: issuer.key as JsonWebKey, format: 'jwk' }) : issuer.key;
    const alg = decoded.header.alg;
    // Coffer's own JWS check (node:crypto in one call) for the algorithms it knows; jose for others.
    if (isJwsAlgorithm(alg)) verifyCompactJws(jws, alg, key as KeyObject);
    else await compactVerify(jws, key as KeyObject, { algorithms: [alg] });
  } catch {
    throw rejected("its issuer's signature does not verify");
  }
}

/** Fully specified algorithm names (draft-ietf-jose-fully-specified-algorithms) for those Coffer uses. */
const SAME_ALGORITHM: Record<string, string[]> = {
  EdDSA: ['EdDSA', 'Ed25519'],
  Ed25519: ['EdDSA', 'Ed25519'],
};

/** Whether a verifier's algorithm list (absent: any) takes `alg`. */
export function takesAlgorithm(list: unknown, alg: string): boolean {
  if (!Array.isArray(list)) return true;
  return (SAME_ALGORITHM[alg] ?? [alg]).some((name) => list.includes(name));
}
