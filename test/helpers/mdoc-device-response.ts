import { createHash, generateKeyPairSync, type JsonWebKey, type KeyObject, sign } from 'node:crypto';
import { base64url, cborDecode, cborEncode, DataItem } from '@owf/mdoc';
import * as cborg from 'cborg';
import { MDL_DOCTYPE, MDL_NAMESPACE } from './issuers/mdoc-issuer.ts';

/**
 * A phone wallet's mso_mdoc presentation, made without Coffer's code: the SessionTranscript
 * encoded with cborg from the request's values (OpenID4VP 1.0 B.2.6), DeviceAuthenticationBytes
 * put together byte by byte around it, and the COSE_Sign1 signed with node:crypto. Shared by the
 * format's own tests and the verifier's end-to-end tests.
 */

export type Handover =
  | { clientId: string; nonce: string; thumbprint: Uint8Array | null; responseUri: string }
  | { origin: string; nonce: string; thumbprint: Uint8Array | null };

const sha256 = (bytes: Uint8Array) => new Uint8Array(createHash('sha256').update(bytes).digest());

/** The SessionTranscript of OpenID4VP 1.0 B.2.6.1 (redirects) or B.2.6.2 (DC API), encoded with cborg. */
export function transcriptOf(handover: Handover): Uint8Array {
  if ('origin' in handover) {
    const info = cborg.encode([handover.origin, handover.nonce, handover.thumbprint]);
    return cborg.encode([null, null, ['OpenID4VPDCAPIHandover', sha256(info)]]);
  }
  const info = cborg.encode([handover.clientId, handover.nonce, handover.thumbprint, handover.responseUri]);
  return cborg.encode([null, null, ['OpenID4VPHandover', sha256(info)]]);
}

const concat = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));
/** `#6.24(bstr .cbor …)` around bytes already encoded. */
const tag24 = (encoded: Uint8Array) => concat(new Uint8Array([0xd8, 0x18]), cborg.encode(encoded));

export interface Device {
  privateKey: KeyObject;
  publicJwk: JsonWebKey;
  alg: number;
}

export function deviceKey(kind: 'P-256' | 'ed25519'): Device {
  const { privateKey, publicKey } =
    kind === 'ed25519' ? generateKeyPairSync('ed25519') : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateKey, publicJwk: publicKey.export({ format: 'jwk' }), alg: kind === 'ed25519' ? -8 : -7 };
}

export interface MdocPresentation {
  /** Elements of MDL_NAMESPACE to disclose (the rest are left out, as a wallet does). */
  disclose: string[];
  transcript: Uint8Array;
  device: Device;
  docType?: string;
  /** A DeviceMac in place of the signature; or no deviceSigned at all. */
  deviceAuth?: 'mac' | 'none';
  /** Extra documents in the DeviceResponse. */
  extraDocuments?: number;
}

/**
 * A DeviceResponse (ISO 18013-5 §8.3.2.1.2.2) for one mdoc, as a wallet sends it in vp_token:
 * the chosen IssuerSignedItemBytes as issued, and a DeviceSignature over
 * DeviceAuthenticationBytes = #6.24(["DeviceAuthentication", SessionTranscript, DocType,
 * DeviceNameSpacesBytes]) with the transcript's own bytes inside.
 */
export function presentMdoc(mdoc: string, options: MdocPresentation): string {
  const issuerSigned = cborDecode(base64url.decode(mdoc)) as Map<string, unknown>;
  const items = (issuerSigned.get('nameSpaces') as Map<string, DataItem[]>).get(MDL_NAMESPACE)!;
  const chosen = items.filter((item) =>
    options.disclose.includes((item.data as Map<string, unknown>).get('elementIdentifier') as string),
  );
  const docType = options.docType ?? MDL_DOCTYPE;
  const deviceNameSpaces = cborg.encode(new Map());
  const deviceAuthentication = concat(
    new Uint8Array([0x84]),
    cborg.encode('DeviceAuthentication'),
    options.transcript,
    cborg.encode(docType),
    tag24(deviceNameSpaces),
  );
  const protectedHeader = cborg.encode(new Map([[1, options.deviceAuth === 'mac' ? 5 : options.device.alg]]));
  const toBeSigned = cborg.encode([
    'Signature1',
    protectedHeader,
    new Uint8Array(),
    tag24(deviceAuthentication),
  ]);
  const signature =
    options.device.alg === -8
      ? sign(null, toBeSigned, options.device.privateKey)
      : sign('sha256', toBeSigned, { key: options.device.privateKey, dsaEncoding: 'ieee-p1363' });
  const deviceAuth =
    options.deviceAuth === 'mac'
      ? new Map([['deviceMac', [protectedHeader, new Map(), null, new Uint8Array(32)]]])
      : new Map([['deviceSignature', [protectedHeader, new Map(), null, new Uint8Array(signature)]]]);
  const document = new Map<string, unknown>([
    ['docType', docType],
    [
      'issuerSigned',
      new Map<string, unknown>([
        ['nameSpaces', new Map([[MDL_NAMESPACE, chosen]])],
        ['issuerAuth', issuerSigned.get('issuerAuth')],
      ]),
    ],
  ]);
  if (options.deviceAuth !== 'none') {
    document.set(
      'deviceSigned',
      new Map<string, unknown>([
        ['nameSpaces', DataItem.fromBuffer(deviceNameSpaces)],
        ['deviceAuth', deviceAuth],
      ]),
    );
  }
  const response = new Map<string, unknown>([
    ['version', '1.0'],
    ['documents', Array.from({ length: 1 + (options.extraDocuments ?? 0) }, () => document)],
    ['status', 0],
  ]);
  return base64url.encode(cborEncode(response));
}
