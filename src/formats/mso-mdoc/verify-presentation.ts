import { createPublicKey, type X509Certificate } from 'node:crypto';
import { cborDecode, cborEncode, DataItem } from '@owf/mdoc';
import { MAX_CHAIN, parseCertificate, validAt } from '../../keys/certificate-chain.ts';
import type { IssuerCertificate } from '../credential-format.ts';
import { certificateOf } from '../jose-credentials.ts';
import {
  type CheckName,
  type NamedCheck,
  type PresentationExpectation,
  presentationResult,
  type VerifiedPresentation,
  withAuthority,
} from '../presentation-verification.ts';
import {
  algorithmName,
  CLOCK_SKEW_MS,
  digestProblem,
  iso,
  issuerSignatureProblem,
  type Mdoc,
  readIssuerSigned,
  reasonOf,
  signingTimeProblem,
  statusReferenceOf,
  summaryOf,
  x5chainOf,
} from './issuer-signed.ts';
import { algorithmFitsKey, algorithmOf, verifyCoseSignature } from './mdoc-context.ts';
import { deviceAuthenticationBytes, oid4vpSessionTranscript } from './session-transcript.ts';

/**
 * The verifier side of `mso_mdoc` (OpenID4VP 1.0 B.2, ISO/IEC 18013-5 §9.3): one vp_token entry,
 * a base64url DeviceResponse, checked without network or storage. The checks run in order and
 * the first that fails ends the work (presentationResult): `format`, `issuer_signature`,
 * `issuer_trusted`, `digests`, `validity`, `device_signature`.
 *
 * The DeviceResponse must hold exactly one document: OpenID4VP puts one presentation in each
 * vp_token entry of a query, and a second document would be claims nobody asked about under a
 * signature this result does not describe. The DeviceSignature is the holder binding, checked
 * over the SessionTranscript that session-transcript.ts builds for the wallet too; a DeviceMac
 * needs a reader key that an OpenID4VP verifier never sends, so it is refused. Only where the
 * query does not require holder binding may deviceSigned be absent (device_signature is then not
 * listed); when present it is checked all the same. Claims are the issuer-signed elements
 * presented; device-signed elements are not the issuer's claims and are left out.
 */

const BASE64URL = /^[A-Za-z0-9_-]+$/;
/**
 * The issuerAuth and DeviceSignature algorithms taken: what the verifier lists in
 * `issuerauth_alg_values` and `deviceauth_alg_values` (ES256, ES384, ES512, EdDSA), and the fully
 * specified ESP256 and Ed25519, which are the same signatures and which the hosted wallet (like
 * the store) counts as its polymorphic twin's (index.ts, verifierCanVerify).
 */
const ALGORITHMS = [-7, -35, -36, -8, -9, -19];
const ALGORITHM_NAMES = 'ES256 (-7), ES384 (-35), ES512 (-36), EdDSA (-8), ESP256 (-9) or Ed25519 (-19)';

/** A reason of issuer-signed.ts ("its element … does not match …") as a check's sentence. */
const sentence = (why: string) => `${why[0]!.toUpperCase()}${why.slice(1)}.`;

interface Presented {
  docType: string;
  mdoc: Mdoc;
  /** The document's deviceSigned, when it has one: DeviceNameSpacesBytes as carried and deviceAuth. */
  deviceSigned: { nameSpaces: DataItem; deviceAuth: Map<unknown, unknown> } | undefined;
}

/** The one document of a DeviceResponse, or why it cannot be read (`format`). */
function readPresentation(presented: unknown): Presented | string {
  if (typeof presented !== 'string' || !BASE64URL.test(presented) || presented.length % 4 === 1) {
    return 'An mso_mdoc presentation is a string: base64url (no padding) of a CBOR DeviceResponse.';
  }
  let response: unknown;
  try {
    response = cborDecode(new Uint8Array(Buffer.from(presented, 'base64url')));
  } catch {
    return 'The presentation is not CBOR (base64url of a CBOR DeviceResponse).';
  }
  if (
    !(response instanceof Map) ||
    typeof response.get('version') !== 'string' ||
    typeof response.get('status') !== 'number'
  ) {
    return 'The presentation is not a DeviceResponse (a CBOR map with version, documents and status).';
  }
  if (response.get('status') !== 0) {
    return `The DeviceResponse's status is ${response.get('status')}, not 0 (OK).`;
  }
  const documents = response.get('documents');
  if (!Array.isArray(documents) || documents.length === 0) {
    return 'The DeviceResponse holds no document.';
  }
  if (documents.length > 1) {
    return `The DeviceResponse holds ${documents.length} documents; a vp_token entry presents exactly one.`;
  }
  const document = documents[0];
  if (!(document instanceof Map) || typeof document.get('docType') !== 'string') {
    return 'Its document is not a Document (a CBOR map with docType, issuerSigned and deviceSigned).';
  }
  let mdoc: Mdoc;
  try {
    mdoc = readIssuerSigned(document.get('issuerSigned'));
  } catch (error) {
    const why = reasonOf(error);
    if (why === null) throw error;
    return sentence(why);
  }
  const deviceSigned = document.get('deviceSigned');
  if (deviceSigned === undefined) return { docType: document.get('docType'), mdoc, deviceSigned: undefined };
  const nameSpaces = deviceSigned instanceof Map ? deviceSigned.get('nameSpaces') : undefined;
  const deviceAuth = deviceSigned instanceof Map ? deviceSigned.get('deviceAuth') : undefined;
  if (!(nameSpaces instanceof DataItem) || !(deviceAuth instanceof Map) || !isDeviceNameSpaces(nameSpaces)) {
    return 'Its deviceSigned is not DeviceSigned (nameSpaces as DeviceNameSpacesBytes, and deviceAuth).';
  }
  return { docType: document.get('docType'), mdoc, deviceSigned: { nameSpaces, deviceAuth } };
}

/** Whether tag-24 bytes hold DeviceNameSpaces: a map of namespaces to maps of element names. */
function isDeviceNameSpaces(item: DataItem): boolean {
  try {
    const data: unknown = item.data;
    return (
      data instanceof Map &&
      [...data].every(
        ([namespace, elements]) =>
          typeof namespace === 'string' &&
          elements instanceof Map &&
          [...elements.keys()].every((name) => typeof name === 'string'),
      )
    );
  } catch {
    return false;
  }
}

/** The x5chain as certificates, leaf first, or why it cannot be (`issuer_signature`). */
function chainOf(mdoc: Mdoc): X509Certificate[] | string {
  let ders: Uint8Array[];
  try {
    ders = x5chainOf(mdoc);
  } catch (error) {
    const why = reasonOf(error);
    if (why === null) throw error;
    return sentence(why);
  }
  if (ders.length > MAX_CHAIN) return `Its x5chain holds more than ${MAX_CHAIN} certificates.`;
  try {
    return ders.map((der) => parseCertificate(der));
  } catch {
    return 'A certificate of its x5chain cannot be read.';
  }
}

/** The COSE_Sign1 DeviceSignature checked over DeviceAuthentication with the MSO's device key (`device_signature`). */
function deviceSignatureProblem(
  presented: Presented,
  deviceSigned: NonNullable<Presented['deviceSigned']>,
  expected: PresentationExpectation,
): string | null {
  const { deviceAuth, nameSpaces } = deviceSigned;
  if (deviceAuth.has('deviceMac')) {
    return 'Its deviceAuth is a DeviceMac, which needs a reader key an OpenID4VP verifier never sends; only a DeviceSignature is taken.';
  }
  const sign1 = deviceAuth.get('deviceSignature');
  if (
    !Array.isArray(sign1) ||
    sign1.length !== 4 ||
    !(sign1[0] instanceof Uint8Array) ||
    !(sign1[1] instanceof Map) ||
    !(sign1[3] instanceof Uint8Array)
  ) {
    return 'Its deviceAuth holds no DeviceSignature (an untagged COSE_Sign1).';
  }
  const [protectedBytes, , payload, signature] = sign1 as [Uint8Array, unknown, unknown, Uint8Array];
  if (payload !== null) {
    return 'Its DeviceSignature carries a payload; the DeviceAuthentication it signs is detached (null).';
  }
  let header: unknown;
  try {
    header = protectedBytes.length === 0 ? new Map() : cborDecode(protectedBytes);
  } catch {
    return "Its DeviceSignature's protected header is not CBOR.";
  }
  const alg = header instanceof Map ? header.get(1) : undefined;
  if (typeof alg !== 'number' || !ALGORITHMS.includes(alg)) {
    return `Its DeviceSignature's algorithm ${typeof alg === 'number' ? algorithmName(alg) : '(none in the protected header)'} is not ${ALGORITHM_NAMES}.`;
  }
  const { deviceJwk } = presented.mdoc;
  if (!deviceJwk) {
    return 'Its deviceKeyInfo holds no usable device key (EC P-256, P-384, P-521 or Ed25519).';
  }
  const deviceKey = createPublicKey({ key: deviceJwk, format: 'jwk' });
  if (!algorithmFitsKey(alg, deviceKey)) {
    return `Its DeviceSignature's algorithm ${algorithmName(alg)} does not fit the MSO's ${String(deviceJwk.crv)} device key.`;
  }
  const transcript = oid4vpSessionTranscript(expected.audience, expected.origin);
  const detached = deviceAuthenticationBytes(transcript, presented.docType, nameSpaces);
  const toBeSigned = cborEncode(['Signature1', protectedBytes, new Uint8Array(), detached]);
  if (!verifyCoseSignature(alg, deviceKey, toBeSigned, signature)) {
    return expected.origin === undefined
      ? "Its DeviceSignature does not verify with the MSO's device key over this request's SessionTranscript (client_id, nonce, response encryption key, response_uri)."
      : "Its DeviceSignature does not verify with the MSO's device key over this request's SessionTranscript (origin, nonce, response encryption key).";
  }
  return null;
}

/**
 * Checks one `mso_mdoc` vp_token entry against what the request expects. Never throws: whatever
 * is wrong with the input is a failed check with one sentence.
 */
export async function verifyMdocPresentation(
  presented: unknown,
  expected: PresentationExpectation,
): Promise<VerifiedPresentation> {
  const checks: NamedCheck[] = [];
  let read: Presented | undefined;
  let chain: X509Certificate[] | undefined;
  let certificate = null as IssuerCertificate | null;
  /** The TRUSTED_LISTS list whose issuer service the chain reaches, when no anchor does. */
  let trustedList: string | null = null;

  const steps: [CheckName, () => Promise<string | null | undefined> | string | null | undefined][] = [
    [
      'format',
      () => {
        const outcome = readPresentation(presented);
        if (typeof outcome === 'string') return outcome;
        read = outcome;
        return null;
      },
    ],
    [
      'issuer_signature',
      async () => {
        const { mdoc } = read!;
        const alg = algorithmOf(mdoc.issuerAuth);
        if (alg === undefined || !ALGORITHMS.includes(alg)) {
          return `Its issuerAuth algorithm ${alg === undefined ? '(none in the protected header)' : algorithmName(alg)} is not ${ALGORITHM_NAMES}.`;
        }
        const outcome = chainOf(mdoc);
        if (typeof outcome === 'string') return outcome;
        chain = outcome;
        certificate = { ...certificateOf(chain[0]!, chain.slice(1), expected), trusted: false };
        const why = await issuerSignatureProblem(mdoc, chain[0]!);
        return why === null ? null : sentence(why);
      },
    ],
    [
      'issuer_trusted',
      async () => {
        const [leaf, ...intermediates] = chain!;
        const marked = certificateOf(leaf!, intermediates, expected);
        if (!validAt(leaf!, expected.now)) {
          return `Its issuer's certificate (${marked.subject}) is not valid at ${iso(expected.now)}: it is valid from ${iso(new Date(leaf!.validFrom))} to ${iso(new Date(leaf!.validTo))}.`;
        }
        if (!marked.trusted && expected.trustedListTrust)
          trustedList = await expected.trustedListTrust(leaf!, intermediates, expected.now);
        if (!marked.trusted && !trustedList) {
          return `Its issuer's certificate (${marked.subject}) does not chain to a trusted issuer certificate${expected.trustedListTrust ? ' nor to a granted issuer service of a trusted list' : ''}.`;
        }
        certificate = { ...marked, trusted: true };
        return null;
      },
    ],
    [
      'digests',
      async () => {
        const { mdoc, docType } = read!;
        if (mdoc.mso.docType !== docType) {
          return `Its MSO is signed for docType ${mdoc.mso.docType}, not for the document's ${docType}.`;
        }
        const why = await digestProblem(mdoc);
        return why === null ? null : sentence(why);
      },
    ],
    [
      'validity',
      () => {
        const { mdoc } = read!;
        const { signed, validFrom, validUntil } = mdoc.mso.validityInfo;
        const now = expected.now.getTime();
        if (signed.getTime() > now + CLOCK_SKEW_MS) {
          return `It was signed at ${iso(signed)}, which is later than now (validityInfo.signed).`;
        }
        const why = signingTimeProblem(mdoc, chain![0]!);
        if (why !== null) return sentence(why);
        if (validFrom.getTime() > now + CLOCK_SKEW_MS) {
          return `It is not valid before ${iso(validFrom)} (validityInfo.validFrom).`;
        }
        if (validUntil.getTime() <= now - CLOCK_SKEW_MS) {
          return `It expired at ${iso(validUntil)} (validityInfo.validUntil).`;
        }
        return null;
      },
    ],
    [
      'device_signature',
      () => {
        const { deviceSigned } = read!;
        if (deviceSigned === undefined) {
          // Without holder binding asked for, an mdoc may come without deviceSigned: nothing to check.
          return expected.holderBinding
            ? 'Its document has no deviceSigned, and the query requires cryptographic holder binding.'
            : undefined;
        }
        return deviceSignatureProblem(read!, deviceSigned, expected);
      },
    ],
  ];

  for (const [name, run] of steps) {
    let problem: string | null | undefined;
    try {
      problem = await run();
    } catch {
      problem = `The ${name} check could not be completed on this presentation.`;
    }
    if (problem === undefined) continue;
    checks.push(problem === null ? { name, ok: true } : { name, ok: false, detail: problem });
    if (problem !== null) break;
  }

  const mdoc = read?.mdoc;
  const leaf = chain?.[0];
  return presentationResult(checks, {
    issuer: certificate
      ? {
          id: certificate.subject,
          trusted: certificate.trusted,
          certificate,
          ...(trustedList && certificate.trusted
            ? { trustedBy: 'etsi_tl' as const, trustAnchor: trustedList }
            : {}),
        }
      : null,
    summary: mdoc && certificate ? orNull(() => summaryOf(mdoc, certificate!)) : null,
    dcqlInput: mdoc
      ? withAuthority(
          { credential_format: 'mso_mdoc', doctype: mdoc.mso.docType, namespaces: mdoc.claims },
          chain?.map((certificate) => new Uint8Array(certificate.raw)) ?? null,
        )
      : null,
    statusReference: mdoc && leaf ? orNull(() => statusReferenceOf(mdoc, leaf)) : null,
  });
}

/** What could be read of a refused presentation is best effort: null rather than an exception. */
function orNull<T>(read: () => T): T | null {
  try {
    return read();
  } catch {
    return null;
  }
}
