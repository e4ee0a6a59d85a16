import { createPrivateKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { base58btc } from 'multiformats/bases/base58';
import { fastBbs } from '../bbs/index.ts';
import { CofferError } from '../errors.ts';
import { DidResolutionError, resolveDidKey } from './did-resolution.ts';

/**
 * What the four formats' issuance functions (`<format>/issue-credential.ts`) share: the issuer's
 * keys, the credential to sign, and the small helpers around holder keys and DIDs. Signing is
 * plain functions over plain data; the issuer (OpenID4VCI, src/issuer/) decides what to issue.
 */

export interface IssuerSigningMaterial {
  /** Credential issuer identifier (https URL): `iss` of SD-JWT VCs. */
  issuerId: string;
  /** ES256 P-256 private key as a JWK, and its chain as base64 DER, leaf first (x5c in JWS headers, x5chain in mdoc COSE). */
  es256: { privateJwk: JsonWebKey; x5c: string[] };
  /** BLS12-381 G2 key for bbs-2023, and its did:key (multikey zUC7…); verificationMethod = `${did}#${did.slice(8)}`. */
  bbs: { secretKey: Uint8Array; publicKey: Uint8Array; did: string };
}

/** The material with its ES256 key imported once: importing a JWK costs more than an ES256 signature. */
export interface PreparedSigningMaterial extends IssuerSigningMaterial {
  es256Key: KeyObject;
  /** The x5c chain as DER bytes (mdoc x5chain). */
  x5chain: Uint8Array[];
  /** did:jwk of the ES256 public key: the `iss` of VC-JWTs, whose readers want a DID. */
  es256Did: string;
}

/**
 * A claim path as OpenID4VCI's claims description has it (Appendix C): names into objects,
 * indexes into arrays, null for every element of an array.
 */
export type ClaimPath = ReadonlyArray<string | number | null>;

export interface CredentialToIssue {
  /** e.g. urn:uuid:… → jti (jwt_vc_json), VC id (ldp_vc); not carried by dc+sd-jwt and mso_mdoc. */
  id: string;
  /** vct (dc+sd-jwt) | doctype (mso_mdoc) | the VC type besides VerifiableCredential (jwt_vc_json, ldp_vc). */
  type: string;
  /**
   * The claims as the credential addresses them (nested allowed), so that claim paths apply to
   * them and to the credential alike: dc+sd-jwt the payload's claims; mso_mdoc
   * {namespace: {element: value}} with CBOR-ready values (DateOnly for full-date); jwt_vc_json
   * and ldp_vc {credentialSubject: {…}} (its `id` is the holder's, set by the issuer).
   */
  claims: Record<string, unknown>;
  /**
   * Claim paths into the credential that stay disclosed: dc+sd-jwt claims not made disclosures,
   * ldp_vc statements added to bbs-2023's mandatory pointers. Default: every claim is selectively
   * disclosable (the other formats have no choice to make).
   */
  alwaysDisclosed?: ClaimPath[];
  /** The key the wallet proved: SD-JWT cnf, mdoc deviceKey; the W3C formats' subject DID (a jwk becomes did:jwk). */
  holder: { jwk: JsonWebKey } | { did: string };
  validFrom: Date;
  validUntil?: Date;
  /** The credential's entry in its issuer's status list (Token Status List or Bitstring Status List). */
  status?: { uri: string; index: number };
  /** Shown by wallets from the issuer metadata; no format signs it. */
  display?: unknown;
}

/** A compact string (dc+sd-jwt, jwt_vc_json, mso_mdoc as base64url IssuerSigned) or a JSON object (ldp_vc). */
export type IssuedCredential = string | Record<string, unknown>;

export type IssueCredential = (
  material: IssuerSigningMaterial,
  credential: CredentialToIssue,
  now: Date,
) => Promise<IssuedCredential>;

/** A credential that cannot be signed as asked (a claim clashing with what the format sets itself). */
export const cannotIssue = (why: string) =>
  new CofferError('invalid_request', `The credential cannot be issued: ${why}.`);

/** The public members of an EC or OKP JWK, in the order did:jwk and cnf usually show them. */
export function publicJwkOf(jwk: JsonWebKey): JsonWebKey {
  if (jwk.kty === 'EC') return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y };
  if (jwk.kty === 'OKP') return { kty: jwk.kty, crv: jwk.crv, x: jwk.x };
  throw cannotIssue(`a holder key of type ${String(jwk.kty)} is not supported (EC or OKP)`);
}

/** `did:jwk:` + base64url of the public JWK's JSON (did:jwk method, §2). */
export const didJwkOf = (jwk: JsonWebKey) =>
  `did:jwk:${Buffer.from(JSON.stringify(publicJwkOf(jwk))).toString('base64url')}`;

/** The holder as a DID: the W3C formats name their subject by DID. */
export const holderDidOf = (holder: CredentialToIssue['holder']) =>
  'did' in holder ? holder.did : didJwkOf(holder.jwk);

/** The holder as a public JWK (mdoc deviceKey): a did:key or did:jwk is resolved locally. */
export function holderJwkOf(holder: CredentialToIssue['holder']): JsonWebKey {
  if ('jwk' in holder) return publicJwkOf(holder.jwk);
  try {
    return publicJwkOf(resolveDidKey(holder.did).jwk);
  } catch (error) {
    if (error instanceof DidResolutionError) throw cannotIssue(error.message);
    throw error;
  }
}

/** A DID URL of the DID's one key: did:key's fragment is its multibase, did:jwk's is 0. */
export function didUrlOf(did: string): string {
  if (did.includes('#')) return did;
  if (did.startsWith('did:key:')) return `${did}#${did.slice('did:key:'.length)}`;
  if (did.startsWith('did:jwk:')) return `${did}#0`;
  return did;
}

const preparedMaterials = new WeakMap<IssuerSigningMaterial, PreparedSigningMaterial>();

/**
 * Imports the ES256 key once. The issue functions take either form and remember what they
 * prepared per material object, so a caller that keeps its material needs nothing more.
 */
export function prepareSigningMaterial(material: IssuerSigningMaterial): PreparedSigningMaterial {
  if ('es256Key' in material) return material as PreparedSigningMaterial;
  let prepared = preparedMaterials.get(material);
  if (!prepared) {
    prepared = {
      ...material,
      es256Key: createPrivateKey({ key: material.es256.privateJwk, format: 'jwk' }),
      x5chain: material.es256.x5c.map((der) => new Uint8Array(Buffer.from(der, 'base64'))),
      es256Did: didJwkOf(material.es256.privateJwk),
    };
    preparedMaterials.set(material, prepared);
  }
  return prepared;
}

/** Multicodec `bls12_381-g2-pub` (0xeb) as an unsigned varint: the did:key prefix of BBS keys. */
const BLS12_381_G2_PREFIX = [0xeb, 0x01];

/** did:key of a BLS12-381 G2 public key (96 bytes compressed): `did:key:zUC7…`. */
export const bbsDidKeyOf = (publicKey: Uint8Array) =>
  `did:key:${base58btc.encode(Uint8Array.from([...BLS12_381_G2_PREFIX, ...publicKey]))}`;

/** The bbs-2023 key of a stored secret key (32 bytes): its public key and did:key. */
export async function bbsKeyOf(secretKey: Uint8Array): Promise<IssuerSigningMaterial['bbs']> {
  const publicKey = await fastBbs.secretKeyToPublicKey({ secretKey });
  return { secretKey, publicKey, did: bbsDidKeyOf(publicKey) };
}

/** A fresh bbs-2023 issuer key (BBS KeyGen from 32 random bytes) with its did:key. */
export async function generateBbsKey(): Promise<IssuerSigningMaterial['bbs']> {
  const { secretKey, publicKey } = await fastBbs.generateKeyPair();
  return { secretKey, publicKey, did: bbsDidKeyOf(publicKey) };
}

/** Whole seconds, as JWT NumericDate. */
export const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** An XML Schema dateTime on a whole second (VC Data Model validFrom / validUntil). */
export const dateTime = (date: Date) => new Date(seconds(date) * 1000).toISOString().replace('.000Z', 'Z');

/** The Bitstring Status List entry of VC-JWT and ldp_vc credentials (revocation, one bit). */
export function bitstringStatusEntry(status: { uri: string; index: number }) {
  return {
    id: `${status.uri}#${status.index}`,
    type: 'BitstringStatusListEntry',
    statusPurpose: 'revocation',
    statusListIndex: String(status.index),
    statusListCredential: status.uri,
  };
}

/**
 * The subject's claims of a W3C credential's claims (`{credentialSubject: {…}}`): nothing else of
 * the credential comes from claims, and the subject's id is the holder's.
 */
export function subjectClaimsOf(claims: Record<string, unknown>): Record<string, unknown> {
  const other = Object.keys(claims).filter((name) => name !== 'credentialSubject');
  if (other.length) {
    throw cannotIssue(
      `${other.join(', ')} is outside credentialSubject: a W3C credential's claims go under it, the rest the issuer sets`,
    );
  }
  const subject = claims['credentialSubject'] ?? {};
  if (subject === null || typeof subject !== 'object' || Array.isArray(subject))
    throw cannotIssue('credentialSubject must be an object of claims');
  refuseReserved(subject as Record<string, unknown>, ['id']);
  return subject as Record<string, unknown>;
}

/** Claims a format sets itself must not come in the subject claims. */
export function refuseReserved(claims: Record<string, unknown>, reserved: readonly string[]): void {
  const clash = reserved.filter((name) => Object.hasOwn(claims, name));
  if (clash.length)
    throw cannotIssue(`the claim ${clash.join(', ')} is set by the issuer, not by the claims`);
}
