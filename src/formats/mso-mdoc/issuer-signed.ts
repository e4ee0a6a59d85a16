import { createHash, createPublicKey, type JsonWebKey, type X509Certificate } from 'node:crypto';
import {
  cborDecode,
  cborEncode,
  compareBytes,
  DataItem,
  DateOnly,
  IssuerAuth,
  type IssuerAuthEncodedStructure,
  IssuerNamespaces,
  type IssuerSignedItem,
  type MobileSecurityObject,
  ProtectedHeaders,
} from '@owf/mdoc';
import type { CredentialSummary, IssuerCertificate, StatusReference } from '../credential-format.ts';
import { rejected } from '../credential-format.ts';
import { publicKeyOf } from '../jose-credentials.ts';
import { tokenStatusReference } from '../status-entries.ts';
import { algorithmFitsKey, algorithmOf, COSE_ALGORITHMS, jwkOfCoseKey, mdocContext } from './mdoc-context.ts';

/**
 * An IssuerSigned structure read and checked part by part: what the store keeps, and what a
 * presented document carries. The store turns a failed part into its refusal; the verifier
 * (verify-presentation.ts) records it as that part's check.
 *
 * Built on @owf/mdoc's structures, with one correction: the library re-encodes what it decodes
 * (each IssuerSignedItem, the issuerAuth protected header) and hashes or sends its own encoding.
 * Where another CBOR encoder made the mdoc (a half-precision float, say), that is not the
 * issuer's bytes: a genuine mdoc would fail its digests and a presentation its verifier. So the
 * digests are checked here over the bytes as issued, and the structures below encode as issued.
 */

export const CLOCK_SKEW_MS = 60_000;
const DIGEST_ALGORITHMS = ['SHA-256', 'SHA-384', 'SHA-512'];

export const iso = (date: Date) => date.toISOString();
export const algorithmName = (alg: number) => `${COSE_ALGORITHMS[alg]?.name ?? 'unknown'} (${alg})`;

/** The store's refusal (`rejected`), with its reason kept apart for the verifier's check details. */
export const refused = (why: string) => Object.assign(rejected(why), { why });

/** The reason of a `refused` error; null for any other. */
export const reasonOf = (error: unknown): string | null =>
  error instanceof Error && 'why' in error && typeof error.why === 'string' ? error.why : null;

/** IssuerNamespaces that encode as the issuer's IssuerSignedItemBytes, not the library's re-encoding. */
export class IssuerNamespacesAsIssued extends IssuerNamespaces {
  asIssued: Map<string, DataItem[]>;
  constructor(items: Map<string, IssuerSignedItem[]>, asIssued: Map<string, DataItem[]>) {
    super(items);
    this.asIssued = asIssued;
  }
  override get encodedStructure() {
    return this.asIssued;
  }
}

/** A protected header that encodes as the issuer's bytes (which the signature covers). */
class ProtectedHeadersAsIssued extends ProtectedHeaders {
  asIssued: Uint8Array;
  constructor(asIssued: Uint8Array) {
    super(ProtectedHeaders.fromEncodedStructure(asIssued).decodedStructure);
    this.asIssued = asIssued;
  }
  override get encodedStructure() {
    return this.asIssued;
  }
}

/** The issuerAuth COSE_Sign1 as issued: signed-over bytes and encoding are the issuer's. */
export class IssuerAuthAsIssued extends IssuerAuth {
  asIssued: IssuerAuthEncodedStructure;
  protectedAsIssued: ProtectedHeadersAsIssued;
  constructor(asIssued: IssuerAuthEncodedStructure) {
    super(IssuerAuth.fromEncodedStructure(asIssued).decodedStructure);
    this.asIssued = asIssued;
    this.protectedAsIssued = new ProtectedHeadersAsIssued(asIssued[0]);
  }
  override get protectedHeaders() {
    return this.protectedAsIssued;
  }
  override get encodedStructure() {
    return this.asIssued;
  }
}

export interface Element {
  namespace: string;
  item: IssuerSignedItem;
  /** The IssuerSignedItemBytes (tag 24) as the issuer encoded them: what its digest covers. */
  asIssued: DataItem;
}

export interface Mdoc {
  issuerAuth: IssuerAuthAsIssued;
  mso: MobileSecurityObject;
  elements: Element[];
  /** base64url SHA-256 of the issuerAuth COSE_Sign1: the credential's identifier (the 409 rule). */
  id: string;
  claims: Record<string, Record<string, unknown>>;
  /** deviceKeyInfo.deviceKey as a public JWK; null when it is no key Coffer can use. */
  deviceJwk: JsonWebKey | null;
  /** The MSO's `status` (draft-ietf-oauth-status-list, mdoc section), which the library does not read. */
  status: unknown;
  /** The curve of the document signer's key, worked out when first asked. */
  issuerCurve?: string | null;
}

/** CBOR values as JSON: full-date and tdate as ISO strings, byte strings as base64url, maps as objects. */
export function jsonOf(value: unknown): unknown {
  if (value instanceof DataItem) return jsonOf(value.data);
  if (value instanceof DateOnly) {
    try {
      return value.toISOString();
    } catch {
      return null; // an invalid full-date: nothing to show
    }
  }
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64url');
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), jsonOf(v)]));
  if (Array.isArray(value)) return value.map(jsonOf);
  if (value !== null && typeof value === 'object' && 'value' in value && 'tag' in value) {
    return jsonOf((value as { value: unknown }).value);
  }
  if (typeof value === 'bigint') return Number(value);
  return value;
}

function publicDeviceJwk(mso: MobileSecurityObject): JsonWebKey | null {
  try {
    const jwk = jwkOfCoseKey(mso.deviceKeyInfo.deviceKey);
    if (!jwk) return null;
    const { d: _d, ...publicJwk } = jwk;
    createPublicKey({ key: publicJwk, format: 'jwk' }); // a point on its curve
    return publicJwk;
  } catch {
    return null;
  }
}

const isItemBytesMap = (value: unknown): value is Map<string, DataItem[]> =>
  value instanceof Map &&
  [...value].every(
    ([namespace, items]) =>
      typeof namespace === 'string' &&
      Array.isArray(items) &&
      items.every((item) => item instanceof DataItem),
  );

/**
 * An IssuerSigned from its CBOR (decoded with the library's `cborDecode`, tag-24 items kept as
 * issued); throws `refused` naming what is malformed.
 */
export function readIssuerSigned(raw: unknown): Mdoc {
  if (!(raw instanceof Map) || !raw.has('issuerAuth')) {
    throw refused('it is not an IssuerSigned structure (a CBOR map with nameSpaces and issuerAuth)');
  }
  const namespacesAsIssued = raw.get('nameSpaces') ?? new Map();
  if (!isItemBytesMap(namespacesAsIssued)) {
    throw refused('its nameSpaces is not a map of namespaces to arrays of IssuerSignedItemBytes');
  }
  let issuerAuth: IssuerAuthAsIssued;
  let namespaces: IssuerNamespacesAsIssued;
  try {
    issuerAuth = new IssuerAuthAsIssued(raw.get('issuerAuth') as IssuerAuthEncodedStructure);
  } catch {
    throw refused('its issuerAuth is not a COSE_Sign1 structure');
  }
  try {
    const items = IssuerNamespaces.fromEncodedStructure(namespacesAsIssued).issuerNamespaces;
    namespaces = new IssuerNamespacesAsIssued(items, namespacesAsIssued);
  } catch {
    throw refused(
      'one of its IssuerSignedItems cannot be read (digestID, random, elementIdentifier, elementValue)',
    );
  }
  if (!issuerAuth.payload) throw refused('its issuerAuth carries no Mobile Security Object');
  let msoMap: unknown;
  try {
    msoMap = cborDecode(issuerAuth.payload);
  } catch {
    throw refused('its Mobile Security Object is not CBOR');
  }
  const digestAlgorithm = msoMap instanceof Map ? msoMap.get('digestAlgorithm') : undefined;
  if (!DIGEST_ALGORITHMS.includes(digestAlgorithm)) {
    throw refused(`its digest algorithm ${String(digestAlgorithm)} is not SHA-256, SHA-384 or SHA-512`);
  }
  let mso: MobileSecurityObject;
  try {
    mso = issuerAuth.mobileSecurityObject;
  } catch {
    throw refused(
      'its Mobile Security Object cannot be read (version 1.0, docType, valueDigests, deviceKeyInfo, validityInfo)',
    );
  }

  const elements: Element[] = [];
  const claims: Record<string, Record<string, unknown>> = {};
  for (const [namespace, items] of namespaces.issuerNamespaces) {
    const asIssued = namespacesAsIssued.get(namespace)!;
    claims[namespace] = {};
    items.forEach((item, i) => {
      elements.push({ namespace, item, asIssued: asIssued[i]! });
      claims[namespace]![item.elementIdentifier] = jsonOf(item.elementValue);
    });
  }
  return {
    issuerAuth,
    mso,
    elements,
    id: createHash('sha256').update(cborEncode(issuerAuth.encodedStructure)).digest('base64url'),
    claims,
    deviceJwk: publicDeviceJwk(mso),
    status: msoStatusOf(msoMap),
  };
}

/** The x5chain of issuerAuth (leaf first), as DER certificates. */
export function x5chainOf(mdoc: Mdoc): Uint8Array[] {
  const chain = mdoc.issuerAuth.x5chain ?? [];
  if (chain.length === 0) throw refused('its issuerAuth carries no x5chain certificate');
  if (!chain.every((der) => der instanceof Uint8Array)) {
    throw refused('its x5chain is not DER certificates');
  }
  return chain;
}

/** What the store, the list and the verifier's result say about the mdoc: its claims are the elements it carries. */
export function summaryOf(mdoc: Mdoc, certificate: IssuerCertificate): CredentialSummary {
  const { validityInfo, docType } = mdoc.mso;
  return {
    format: 'mso_mdoc',
    id: mdoc.id,
    issuer: certificate.subject,
    type: docType,
    validFrom: iso(validityInfo.validFrom),
    validUntil: iso(validityInfo.validUntil),
    claims: mdoc.claims,
    issuerCertificate: certificate,
  };
}

/**
 * The issuer's signature over the MSO, with the x5chain leaf's key, in an algorithm that fits
 * that key; null when it verifies.
 */
export async function issuerSignatureProblem(mdoc: Mdoc, leaf: X509Certificate): Promise<string | null> {
  const { issuerAuth } = mdoc;
  const alg = algorithmOf(issuerAuth);
  if (alg === undefined) return 'its issuerAuth names no algorithm in its protected header';
  if (!algorithmFitsKey(alg, leaf.publicKey)) {
    return `its issuerAuth algorithm ${algorithmName(alg)} does not fit its issuer's certificate key`;
  }
  const key = await mdocContext.x509.getPublicKey({ certificate: issuerAuth.certificate, alg: String(alg) });
  if (!(await issuerAuth.verifySignature({ key }, mdocContext))) {
    return "its issuer's signature (issuerAuth) does not verify";
  }
  return null;
}

/** Whether the MSO was signed (validityInfo.signed) within its issuer certificate's validity; null when it was. */
export function signingTimeProblem(mdoc: Mdoc, leaf: X509Certificate): string | null {
  const { signed } = mdoc.mso.validityInfo;
  const notBefore = new Date(leaf.validFrom);
  const notAfter = new Date(leaf.validTo);
  if (
    signed.getTime() < notBefore.getTime() - CLOCK_SKEW_MS ||
    signed.getTime() > notAfter.getTime() + CLOCK_SKEW_MS
  ) {
    return `it was signed at ${iso(signed)}, outside its issuer certificate's validity (${iso(notBefore)} to ${iso(notAfter)})`;
  }
  return null;
}

/**
 * Whether every element carried matches the digest the issuer signed for its namespace and
 * digestID (over the IssuerSignedItemBytes as issued); null when all do.
 */
export async function digestProblem(mdoc: Mdoc): Promise<string | null> {
  const { mso } = mdoc;
  const digests = mso.valueDigests.valueDigests;
  for (const { namespace, item, asIssued } of mdoc.elements) {
    const digest = await mdocContext.crypto.digest({
      digestAlgorithm: mso.digestAlgorithm,
      bytes: cborEncode(asIssued),
    });
    const signedDigest = digests.get(namespace)?.get(item.digestId);
    if (!signedDigest || !compareBytes(digest, signedDigest)) {
      return `its element ${namespace}/${item.elementIdentifier} does not match the digest the issuer signed`;
    }
  }
  return null;
}

/** The MSO's Token Status List entry, whose list the document signer's key signs; null when it has none Coffer can use. */
export function statusReferenceOf(mdoc: Mdoc, leaf: X509Certificate): StatusReference | null {
  if (mdoc.status === undefined) return null;
  return tokenStatusReference(jsonOf(mdoc.status), { kind: 'jose', key: publicKeyOf(leaf) });
}

function msoStatusOf(decoded: unknown): unknown {
  const mso = decoded instanceof DataItem ? decoded.data : decoded;
  return mso instanceof Map ? mso.get('status') : undefined;
}
