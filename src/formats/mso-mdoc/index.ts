import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import {
  cborDecode,
  DataItem,
  DeviceAuth,
  DeviceNamespaces,
  DeviceResponse,
  DeviceSignature,
  DeviceSigned,
  Document,
  Header,
  IssuerSigned,
  type IssuerSignedItem,
  ProtectedHeaders,
  type SignatureAlgorithm,
  UnprotectedHeaders,
} from '@owf/mdoc';
import type { CredentialFormat, IssuerCertificate, ParseContext } from '../credential-format.ts';
import { compactListEntry, rejected } from '../credential-format.ts';
import { authorityOfChain, certificateChain, certificateOf } from '../jose-credentials.ts';
import {
  CLOCK_SKEW_MS,
  digestProblem,
  type Element,
  IssuerNamespacesAsIssued,
  iso,
  issuerSignatureProblem,
  type Mdoc,
  readIssuerSigned,
  signingTimeProblem,
  statusReferenceOf,
  summaryOf,
  x5chainOf,
} from './issuer-signed.ts';
import {
  ALGORITHMS_OF_CURVE,
  algorithmForKey,
  algorithmOf,
  coseKeyOfJwk,
  curveOf,
  mdocContext,
} from './mdoc-context.ts';
import { deviceAuthenticationBytes, oid4vpSessionTranscript } from './session-transcript.ts';
import { verifyMdocPresentation } from './verify-presentation.ts';

/**
 * ISO/IEC 18013-5 mdocs (`mso_mdoc`, OpenID4VP B.2): stored as the base64url CBOR IssuerSigned
 * that OpenID4VCI delivers; presented as a DeviceResponse holding only the requested elements,
 * signed by the device key (the holder key) over the OpenID4VP SessionTranscript.
 */

const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** The issuerAuth algorithms taken: ES256, ES384, ES512, EdDSA, and the fully specified ESP256 and Ed25519. */
const ISSUER_ALGORITHMS = [-7, -35, -36, -8, -9, -19];

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
  const mdoc = readIssuerSigned(raw);
  if (decodedMdocs.size >= MAX_DECODED) decodedMdocs.delete(decodedMdocs.keys().next().value!);
  decodedMdocs.set(value, mdoc);
  return mdoc;
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

/** The issuer's signature, the signing time within its certificate, and every element's digest. */
async function verifyMdoc(mdoc: Mdoc, leaf: X509Certificate): Promise<void> {
  const problem =
    (await issuerSignatureProblem(mdoc, leaf)) ??
    signingTimeProblem(mdoc, leaf) ??
    (await digestProblem(mdoc));
  if (problem) throw rejected(problem);
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
  issuerChain: (stored) => x5chainOf(decode(stored)),
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
    const deviceNamespaces = DeviceNamespaces.create({ deviceNamespaces: new Map() });
    const alg = algorithmForKey(privateKey);
    const deviceSignature = await DeviceSignature.create(
      {
        protectedHeaders: ProtectedHeaders.create({ protectedHeaders: new Map([[Header.Algorithm, alg]]) }),
        unprotectedHeaders: UnprotectedHeaders.create({}),
        detachedPayload: deviceAuthenticationBytes(
          oid4vpSessionTranscript(audience),
          docType,
          DataItem.fromData(deviceNamespaces.encodedStructure),
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
  verifyPresentation: verifyMdocPresentation,
  statusReference(stored, context) {
    try {
      const mdoc = decode(stored);
      if (mdoc.status === undefined) return null;
      return statusReferenceOf(mdoc, certificateChain(x5chainOf(mdoc), context, false).leaf);
    } catch {
      return null;
    }
  },
};
