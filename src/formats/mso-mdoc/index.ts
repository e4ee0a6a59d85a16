import { createHash, createPrivateKey, createPublicKey, type JsonWebKey, X509Certificate } from 'node:crypto';
import {
  cborDecode,
  cborEncode,
  compareBytes,
  DataItem,
  DateOnly,
  DeviceAuth,
  DeviceAuthentication,
  DeviceNamespaces,
  DeviceResponse,
  DeviceSignature,
  DeviceSigned,
  Document,
  Header,
  IssuerAuth,
  type IssuerAuthEncodedStructure,
  IssuerNamespaces,
  IssuerSigned,
  type IssuerSignedItem,
  type MobileSecurityObject,
  ProtectedHeaders,
  SessionTranscript,
  type SignatureAlgorithm,
  UnprotectedHeaders,
} from '@owf/mdoc';
import type {
  CredentialFormat,
  CredentialSummary,
  IssuerCertificate,
  ParseContext,
} from '../credential-format.ts';
import { compactListEntry, rejected } from '../credential-format.ts';
import { authorityOfChain, certificateChain, certificateOf, publicKeyOf } from '../jose-credentials.ts';
import { tokenStatusReference } from '../status-entries.ts';
import {
  ALGORITHMS_OF_CURVE,
  algorithmFitsKey,
  algorithmForKey,
  algorithmOf,
  COSE_ALGORITHMS,
  coseKeyOfJwk,
  curveOf,
  jwkOfCoseKey,
  mdocContext,
} from './mdoc-context.ts';

/**
 * ISO/IEC 18013-5 mdocs (`mso_mdoc`, OpenID4VP B.2): stored as the base64url CBOR IssuerSigned
 * that OpenID4VCI delivers; presented as a DeviceResponse holding only the requested elements,
 * signed by the device key (the holder key) over the OpenID4VP SessionTranscript.
 *
 * Built on @owf/mdoc's structures, with one correction: the library re-encodes what it decodes
 * (each IssuerSignedItem, the issuerAuth protected header) and hashes or sends its own encoding.
 * Where another CBOR encoder made the mdoc (a half-precision float, say), that is not the
 * issuer's bytes: a genuine mdoc would fail its digests and a presentation its verifier. So the
 * digests are checked here over the bytes as issued, and the structures below encode as issued.
 */

const BASE64URL = /^[A-Za-z0-9_-]+$/;
const CLOCK_SKEW_MS = 60_000;
const DIGEST_ALGORITHMS = ['SHA-256', 'SHA-384', 'SHA-512'];
/** The issuerAuth algorithms taken: ES256, ES384, ES512, EdDSA, and the fully specified ESP256 and Ed25519. */
const ISSUER_ALGORITHMS = [-7, -35, -36, -8, -9, -19];

const iso = (date: Date) => date.toISOString();
const algorithmName = (alg: number) => `${COSE_ALGORITHMS[alg]?.name ?? 'unknown'} (${alg})`;

/** IssuerNamespaces that encode as the issuer's IssuerSignedItemBytes, not the library's re-encoding. */
class IssuerNamespacesAsIssued extends IssuerNamespaces {
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
class IssuerAuthAsIssued extends IssuerAuth {
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

interface Element {
  namespace: string;
  item: IssuerSignedItem;
  /** The IssuerSignedItemBytes (tag 24) as the issuer encoded them: what its digest covers. */
  asIssued: DataItem;
}

interface Mdoc {
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
function jsonOf(value: unknown): unknown {
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
 * Decoded mdocs by their encoding: decoding (CBOR and the library's schema checks) is most of an
 * mdoc's cost, and a consent reads the same credential for the page, the matching and the
 * presentation. Bounded; the structures are never modified.
 */
const decodedMdocs = new Map<string, Mdoc>();
const MAX_DECODED = 512;

/** The structure of a stored or offered value; throws `rejected` naming what is malformed. */
function decode(value: unknown): Mdoc {
  if (typeof value !== 'string' || !BASE64URL.test(value) || value.length % 4 === 1) {
    throw rejected('an mso_mdoc credential is base64url (no padding) of the CBOR IssuerSigned structure');
  }
  const known = decodedMdocs.get(value);
  if (known) return known;
  let raw: unknown;
  try {
    raw = cborDecode(new Uint8Array(Buffer.from(value, 'base64url')));
  } catch {
    throw rejected('it is not CBOR (base64url of the CBOR IssuerSigned structure)');
  }
  if (!(raw instanceof Map) || !raw.has('issuerAuth')) {
    throw rejected('it is not an IssuerSigned structure (a CBOR map with nameSpaces and issuerAuth)');
  }
  const namespacesAsIssued = raw.get('nameSpaces') ?? new Map();
  if (!isItemBytesMap(namespacesAsIssued)) {
    throw rejected('its nameSpaces is not a map of namespaces to arrays of IssuerSignedItemBytes');
  }
  let issuerAuth: IssuerAuthAsIssued;
  let namespaces: IssuerNamespacesAsIssued;
  try {
    issuerAuth = new IssuerAuthAsIssued(raw.get('issuerAuth') as IssuerAuthEncodedStructure);
  } catch {
    throw rejected('its issuerAuth is not a COSE_Sign1 structure');
  }
  try {
    const items = IssuerNamespaces.fromEncodedStructure(namespacesAsIssued).issuerNamespaces;
    namespaces = new IssuerNamespacesAsIssued(items, namespacesAsIssued);
  } catch {
    throw rejected(
      'one of its IssuerSignedItems cannot be read (digestID, random, elementIdentifier, elementValue)',
    );
  }
  if (!issuerAuth.payload) throw rejected('its issuerAuth carries no Mobile Security Object');
  let msoMap: unknown;
  try {
    msoMap = cborDecode(issuerAuth.payload);
  } catch {
    throw rejected('its Mobile Security Object is not CBOR');
  }
  const digestAlgorithm = msoMap instanceof Map ? msoMap.get('digestAlgorithm') : undefined;
  if (!DIGEST_ALGORITHMS.includes(digestAlgorithm)) {
    throw rejected(`its digest algorithm ${String(digestAlgorithm)} is not SHA-256, SHA-384 or SHA-512`);
  }
  let mso: MobileSecurityObject;
  try {
    mso = issuerAuth.mobileSecurityObject;
  } catch {
    throw rejected(
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
  const mdoc: Mdoc = {
    issuerAuth,
    mso,
    elements,
    id: createHash('sha256').update(cborEncode(issuerAuth.encodedStructure)).digest('base64url'),
    claims,
    deviceJwk: publicDeviceJwk(mso),
    status: msoStatusOf(msoMap),
  };
  if (decodedMdocs.size >= MAX_DECODED) decodedMdocs.delete(decodedMdocs.keys().next().value!);
  decodedMdocs.set(value, mdoc);
  return mdoc;
}

/** The x5chain of issuerAuth (leaf first), as DER certificates. */
function x5chainOf(mdoc: Mdoc): Uint8Array[] {
  const chain = mdoc.issuerAuth.x5chain ?? [];
  if (chain.length === 0) throw rejected('its issuerAuth carries no x5chain certificate');
  if (!chain.every((der) => der instanceof Uint8Array)) {
    throw rejected('its x5chain is not DER certificates');
  }
  return chain;
}

/** The issuer's certificate as the summary shows it; when stored, whatever its validity now. */
function issuerCertificateOf(chain: Uint8Array[], context: ParseContext): IssuerCertificate {
  let certificates: X509Certificate[];
  try {
    certificates = chain.map((der) => new X509Certificate(der));
  } catch {
    throw rejected('a certificate of its issuer cannot be read');
  }
  return certificateOf(certificates[0]!, certificates.slice(1), context);
}

function summaryOf(mdoc: Mdoc, certificate: IssuerCertificate): CredentialSummary {
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

/** The issuer's signature, the signing time within its certificate, and every element's digest. */
async function verifyMdoc(mdoc: Mdoc, leaf: X509Certificate): Promise<void> {
  const { issuerAuth, mso } = mdoc;
  const alg = algorithmOf(issuerAuth)!;
  if (!algorithmFitsKey(alg, leaf.publicKey)) {
    throw rejected(
      `its issuerAuth algorithm ${algorithmName(alg)} does not fit its issuer's certificate key`,
    );
  }
  const key = await mdocContext.x509.getPublicKey({ certificate: issuerAuth.certificate, alg: String(alg) });
  if (!(await issuerAuth.verifySignature({ key }, mdocContext))) {
    throw rejected("its issuer's signature (issuerAuth) does not verify");
  }
  const { signed } = mso.validityInfo;
  const notBefore = new Date(leaf.validFrom);
  const notAfter = new Date(leaf.validTo);
  if (
    signed.getTime() < notBefore.getTime() - CLOCK_SKEW_MS ||
    signed.getTime() > notAfter.getTime() + CLOCK_SKEW_MS
  ) {
    throw rejected(
      `it was signed at ${iso(signed)}, outside its issuer certificate's validity (${iso(notBefore)} to ${iso(notAfter)})`,
    );
  }
  const digests = mso.valueDigests.valueDigests;
  for (const { namespace, item, asIssued } of mdoc.elements) {
    const digest = await mdocContext.crypto.digest({
      digestAlgorithm: mso.digestAlgorithm,
      bytes: cborEncode(asIssued),
    });
    const signedDigest = digests.get(namespace)?.get(item.digestId);
    if (!signedDigest || !compareBytes(digest, signedDigest)) {
      throw rejected(
        `its element ${namespace}/${item.elementIdentifier} does not match the digest the issuer signed`,
      );
    }
  }
}

function msoStatusOf(decoded: unknown): unknown {
  const mso = decoded instanceof DataItem ? decoded.data : decoded;
  return mso instanceof Map ? mso.get('status') : undefined;
}

/** The COSE algorithms a verifier may list for (alg, curve): the one used and its fully specified twin. */
function namesOf(alg: number, curve: string | null | undefined): number[] {
  const family = curve ? ALGORITHMS_OF_CURVE[curve] : undefined;
  return family?.includes(alg) ? family : [alg];
}

const accepts = (list: unknown, names: number[]) =>
  !Array.isArray(list) || names.some((name) => list.includes(name));

function issuerCurveOf(mdoc: Mdoc): string | null {
  if (mdoc.issuerCurve === undefined) {
    try {
      mdoc.issuerCurve = curveOf(new X509Certificate(mdoc.issuerAuth.certificate).publicKey) ?? null;
    } catch {
      mdoc.issuerCurve = null;
    }
  }
  return mdoc.issuerCurve;
}

function deviceCurveOf(mdoc: Mdoc): string | null {
  return mdoc.deviceJwk ? String(mdoc.deviceJwk.crv) : null;
}

/** The tokens of a JSON pointer (RFC 6901). */
const tokensOf = (pointer: string) =>
  pointer
    .split('/')
    .slice(1)
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));

/** The elements that the pointers name (`/namespace/element`), in the issuer's order, each once. */
function elementsNamed(mdoc: Mdoc, pointers: string[]): Element[] {
  const wanted = new Map<string, Set<string>>();
  for (const pointer of pointers) {
    const [namespace, element] = tokensOf(pointer);
    if (!pointer.startsWith('/') || namespace === undefined || element === undefined) {
      throw new Error(`${pointer} names no mdoc element (/namespace/element)`);
    }
    if (!wanted.has(namespace)) wanted.set(namespace, new Set());
    wanted.get(namespace)!.add(element);
  }
  const chosen: Element[] = [];
  for (const element of mdoc.elements) {
    const names = wanted.get(element.namespace);
    if (names?.delete(element.item.elementIdentifier)) chosen.push(element);
  }
  for (const [namespace, names] of wanted) {
    for (const name of names) throw new Error(`the mdoc holds no element ${namespace}/${name}`);
  }
  return chosen;
}

export const msoMdocFormat: CredentialFormat = {
  id: 'mso_mdoc',
  shape: 'base64url',
  disclosesEverything: false,
  recognises(value) {
    if (typeof value !== 'string' || !BASE64URL.test(value)) return false;
    try {
      decode(value);
      return true;
    } catch {
      return false;
    }
  },
  parse(value, context) {
    const mdoc = decode(value);
    const alg = algorithmOf(mdoc.issuerAuth);
    if (alg === undefined || !ISSUER_ALGORITHMS.includes(alg)) {
      throw rejected(
        `its issuerAuth algorithm ${String(alg)} is not one of ES256 (-7), ES384 (-35), ES512 (-36), EdDSA (-8), ESP256 (-9), Ed25519 (-19)`,
      );
    }
    const { validFrom, validUntil } = mdoc.mso.validityInfo;
    if (validFrom.getTime() > context.now.getTime() + CLOCK_SKEW_MS) {
      throw rejected(`it is not valid before ${iso(validFrom)} (validityInfo.validFrom)`);
    }
    if (validUntil.getTime() <= context.now.getTime() - CLOCK_SKEW_MS) {
      throw rejected(`it expired at ${iso(validUntil)} (validityInfo.validUntil)`);
    }
    const { leaf, info } = certificateChain(x5chainOf(mdoc), context);
    if (!mdoc.deviceJwk) {
      throw rejected('its deviceKeyInfo holds no usable device key (EC P-256, P-384, P-521 or Ed25519)');
    }
    return {
      summary: summaryOf(mdoc, info),
      holder: { kind: 'key', jwk: mdoc.deviceJwk },
      stored: value,
      verify: async () => {
        await verifyMdoc(mdoc, leaf);
        return {};
      },
    };
  },
  summarize(stored, context) {
    const mdoc = decode(stored);
    return summaryOf(mdoc, issuerCertificateOf(x5chainOf(mdoc), context));
  },
  listEntry: compactListEntry,
  async dcqlInput(stored, summary) {
    const authority = authorityOfChain(x5chainOf(decode(stored)));
    return {
      credential_format: 'mso_mdoc',
      doctype: summary.type as string,
      namespaces: summary.claims as Record<string, Record<string, unknown>>,
      ...(authority ? { authority } : {}),
    };
  },
  verifierCanVerify(stored, parameters, _holderBinding) {
    if (parameters === undefined) return false;
    const mdoc = decode(stored);
    const issuerAlg = algorithmOf(mdoc.issuerAuth);
    if (issuerAlg === undefined) return false;
    const deviceCurve = deviceCurveOf(mdoc);
    // Every mdoc presentation carries a DeviceSignature, so the device algorithm always counts.
    const deviceAlg = deviceCurve ? ALGORITHMS_OF_CURVE[deviceCurve]?.[0] : undefined;
    return (
      accepts(parameters['issuerauth_alg_values'], namesOf(issuerAlg, issuerCurveOf(mdoc))) &&
      deviceAlg !== undefined &&
      accepts(parameters['deviceauth_alg_values'], namesOf(deviceAlg, deviceCurve))
    );
  },
  async present({ stored, disclosed, holder, audience }) {
    if (!holder)
      throw new Error('an mdoc presentation is signed by its device key, and no holder key was given');
    const mdoc = decode(stored);
    const privateKey = createPrivateKey({ key: holder.privateJwk, format: 'jwk' });
    const publicJwk = createPublicKey(privateKey).export({ format: 'jwk' });
    if (!mdoc.deviceJwk || publicJwk.x !== mdoc.deviceJwk.x || publicJwk.y !== mdoc.deviceJwk.y) {
      throw new Error("the holder key is not this mdoc's device key");
    }

    const items = new Map<string, IssuerSignedItem[]>();
    const asIssued = new Map<string, DataItem[]>();
    for (const element of elementsNamed(mdoc, disclosed)) {
      if (!items.has(element.namespace)) {
        items.set(element.namespace, []);
        asIssued.set(element.namespace, []);
      }
      items.get(element.namespace)!.push(element.item);
      asIssued.get(element.namespace)!.push(element.asIssued);
    }
    const issuerSigned = IssuerSigned.create({
      issuerNamespaces: new IssuerNamespacesAsIssued(items, asIssued),
      issuerAuth: mdoc.issuerAuth,
    });

    const docType = mdoc.mso.docType;
    const sessionTranscript = await SessionTranscript.forOid4Vp(
      {
        clientId: audience.clientId,
        nonce: audience.nonce,
        responseUri: audience.responseUri,
        ...(audience.encryptionJwkThumbprint ? { jwkThumbprint: audience.encryptionJwkThumbprint } : {}),
      },
      mdocContext,
    );
    const deviceNamespaces = DeviceNamespaces.create({ deviceNamespaces: new Map() });
    const alg = algorithmForKey(privateKey);
    const deviceSignature = await DeviceSignature.create(
      {
        protectedHeaders: ProtectedHeaders.create({ protectedHeaders: new Map([[Header.Algorithm, alg]]) }),
        unprotectedHeaders: UnprotectedHeaders.create({}),
        detachedPayload: DeviceAuthentication.create({ sessionTranscript, docType, deviceNamespaces }).encode(
          {
            asDataItem: true,
          },
        ),
        signingKey: coseKeyOfJwk(holder.privateJwk),
        algorithm: alg as SignatureAlgorithm,
      },
      mdocContext,
    );
    const document = Document.create({
      docType,
      issuerSigned,
      deviceSigned: DeviceSigned.create({
        deviceNamespaces,
        deviceAuth: DeviceAuth.create({ deviceSignature }),
      }),
    });
    const response = DeviceResponse.createSimple({ version: '1.0', status: 0, documents: [document] });
    return Buffer.from(response.encode()).toString('base64url');
  },
  statusReference(stored, context) {
    try {
      const mdoc = decode(stored);
      const status = mdoc.status;
      if (status === undefined) return null;
      const { leaf } = certificateChain(x5chainOf(mdoc), context, false);
      return tokenStatusReference(jsonOf(status), { kind: 'jose', key: publicKeyOf(leaf) });
    } catch {
      return null;
    }
  },
};
