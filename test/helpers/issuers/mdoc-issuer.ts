import {
  createHash,
  createPrivateKey,
  type JsonWebKey,
  randomBytes,
  sign,
  verify,
  X509Certificate,
} from 'node:crypto';
import {
  base64url,
  CoseKey,
  cborDecode,
  cborEncode,
  DataItem,
  DateOnly,
  DeviceKey,
  Issuer,
  type MdocContext,
} from '@owf/mdoc';
import * as cborg from 'cborg';
import { chainOf, type IssuerIdentity } from './issuer-ca.ts';

/**
 * An mdoc issuer built on the OpenWallet Foundation's @owf/mdoc, with its own small crypto context
 * (not Coffer's): ES256 issuerAuth over the document-signer certificate (x5chain), device key =
 * the holder's key. The same context serves the test verifier's DeviceResponse checks.
 */

export const MDL_DOCTYPE = 'org.iso.18013.5.1.mDL';
export const MDL_NAMESPACE = 'org.iso.18013.5.1';

const hashOf = (alg: string) => ({ ES256: 'sha256', ES384: 'sha384', ES512: 'sha512' })[alg] ?? 'sha256';

function publicKeyOf(key: CoseKey) {
  const { kty, crv, x, y } = key.jwk as JsonWebKey;
  return {
    key: Object.fromEntries(Object.entries({ kty, crv, x, y }).filter(([, v]) => v)) as JsonWebKey,
    format: 'jwk' as const,
  };
}

export const testMdocContext: MdocContext = {
  crypto: {
    random: (length) => new Uint8Array(randomBytes(length)),
    digest: ({ digestAlgorithm, bytes }) =>
      new Uint8Array(createHash(digestAlgorithm.replace('-', '').toLowerCase()).update(bytes).digest()),
    calculateEphemeralMacKey: () => {
      throw new Error('not used');
    },
  },
  cose: {
    sign1: {
      sign: ({ toBeSigned, key }) => {
        const { alg: _a, kid: _k, key_ops: _o, ...jwk } = key.jwk as Record<string, unknown>;
        const privateKey = createPrivateKey({
          key: Object.fromEntries(Object.entries(jwk).filter(([, v]) => v !== undefined)) as JsonWebKey,
          format: 'jwk',
        });
        return new Uint8Array(sign('sha256', toBeSigned, { key: privateKey, dsaEncoding: 'ieee-p1363' }));
      },
      verify: ({ key, sign1 }) => {
        const alg = sign1.signatureAlgorithmName;
        const publicKey = publicKeyOf(key);
        return alg === 'EdDSA'
          ? verify(null, sign1.toBeSigned, publicKey, sign1.signature)
          : verify(
              hashOf(alg),
              sign1.toBeSigned,
              { ...publicKey, dsaEncoding: 'ieee-p1363' },
              sign1.signature,
            );
      },
    },
    mac0: {
      sign: () => {
        throw new Error('not used');
      },
      verify: () => false,
    },
  },
  x509: {
    getIssuerNameField: ({ certificate, field }) =>
      new X509Certificate(certificate).subject
        .split('\n')
        .filter((l) => l.startsWith(`${field}=`))
        .map((l) => l.slice(field.length + 1)),
    getPublicKey: ({ certificate }) =>
      CoseKey.fromJwk(
        new X509Certificate(certificate).publicKey.export({ format: 'jwk' }) as Record<string, unknown>,
      ),
    verifyCertificateChain: ({ trustedCertificates, x5chain }) => {
      const leaf = new X509Certificate(x5chain[0]!);
      if (!trustedCertificates.some((der) => leaf.verify(new X509Certificate(der).publicKey))) {
        throw new Error('the document signer is not issued by a trusted certificate');
      }
    },
    getCertificateData: ({ certificate }) => {
      const c = new X509Certificate(certificate);
      return {
        issuerName: c.issuer,
        subjectName: c.subject,
        serialNumber: c.serialNumber,
        thumbprint: c.fingerprint256,
        notBefore: new Date(c.validFrom),
        notAfter: new Date(c.validTo),
        pem: c.toString(),
      };
    },
  },
};

export const MDL_ELEMENTS = {
  given_name: 'Ada',
  family_name: 'Lovelace',
  birth_date: new DateOnly('1815-12-10'),
  age_over_18: true,
  nationality: 'GB',
  document_number: 'GB-123456',
};

export interface MdocOptions {
  deviceJwk: JsonWebKey;
  /** The docType (default org.iso.18013.5.1.mDL). */
  doctype?: string;
  /** The elements of MDL_NAMESPACE (default MDL_ELEMENTS); ignored when `namespaces` is given. */
  elements?: Record<string, unknown>;
  /** Every namespace with its elements, in place of `elements`. */
  namespaces?: Record<string, Record<string, unknown>>;
  signed?: Date;
  validFrom?: Date;
  validUntil?: Date;
  /** The issuerAuth algorithm over the P-256 document signer: -7 (ES256, the default) or -9 (ESP256). */
  algorithm?: -7 | -9;
}

/** A date on a whole second, as a CBOR tdate carries it. */
const wholeSecond = (time: number) => new Date(Math.floor(time / 1000) * 1000);

/** A base64url IssuerSigned (as OpenID4VCI delivers it). */
export async function issueMdoc(identity: IssuerIdentity, options: MdocOptions): Promise<string> {
  const signerJwk = (await crypto.subtle.exportKey('jwk', identity.signer.keys.privateKey)) as Record<
    string,
    unknown
  >;
  const now = Date.now();
  let issuer = new Issuer(options.doctype ?? MDL_DOCTYPE, testMdocContext);
  for (const [namespace, elements] of Object.entries(
    options.namespaces ?? { [MDL_NAMESPACE]: options.elements ?? MDL_ELEMENTS },
  )) {
    issuer = issuer.addIssuerNamespace(namespace, elements);
  }
  const issuerSigned = await issuer.sign({
    signingKey: CoseKey.fromJwk(signerJwk),
    algorithm: (options.algorithm ?? -7) as never,
    digestAlgorithm: 'SHA-256',
    validityInfo: {
      signed: options.signed ?? wholeSecond(now - 60_000),
      validFrom: options.validFrom ?? wholeSecond(now - 60_000),
      validUntil: options.validUntil ?? wholeSecond(now + 3600_000),
    },
    deviceKeyInfo: { deviceKey: DeviceKey.fromJwk(options.deviceJwk as Record<string, unknown>) },
    certificates: chainOf(identity).map((der) => new Uint8Array(Buffer.from(der, 'base64'))),
  });
  return base64url.encode(issuerSigned.encode());
}

type CborMap = Map<unknown, unknown>;

/** The parts of a base64url IssuerSigned, decoded with the library's CBOR (tag 24 items kept as bytes). */
function partsOf(value: string) {
  const issuerSigned = cborDecode<CborMap>(base64url.decode(value));
  const namespaces = issuerSigned.get('nameSpaces') as Map<string, DataItem<CborMap>[]>;
  const issuerAuth = issuerSigned.get('issuerAuth') as [Uint8Array, CborMap, Uint8Array, Uint8Array];
  return { issuerSigned, namespaces, issuerAuth };
}

const itemIndex = (items: DataItem<CborMap>[], element: string) => {
  const index = items.findIndex((item) => item.data.get('elementIdentifier') === element);
  if (index < 0) throw new Error(`no element ${element}`);
  return index;
};

/**
 * Changes one element's value and re-encodes the IssuerSigned, keeping the issuer's signature:
 * the element no longer matches its digest in the MSO.
 */
export function alterElement(value: string, namespace: string, element: string, newValue: unknown): string {
  const { issuerSigned, namespaces } = partsOf(value);
  const items = namespaces.get(namespace)!;
  const index = itemIndex(items, element);
  items[index] = DataItem.fromData(new Map([...items[index]!.data, ['elementValue', newValue]]));
  return base64url.encode(cborEncode(issuerSigned));
}

/** Flips one bit of the issuerAuth signature. */
export function breakSignature(value: string): string {
  const { issuerSigned, issuerAuth } = partsOf(value);
  const signature = Uint8Array.from(issuerAuth[3]);
  signature[10]! ^= 1;
  issuerSigned.set('issuerAuth', [issuerAuth[0], issuerAuth[1], issuerAuth[2], signature]);
  return base64url.encode(cborEncode(issuerSigned));
}

export interface Reissue {
  /** Re-encodes one element with cborg (canonical map order, shortest floats), its digest updated. */
  element?: { namespace: string; element: string; value: unknown };
  /** Changes the decoded MSO (a Map) before it is signed again. */
  mso?: (mso: CborMap) => void;
  /** The protected header's alg, the signature still ES256. */
  alg?: number;
  /** False: no x5chain in the unprotected header. */
  x5chain?: false;
}

/**
 * The mdoc changed and signed again by its issuer (the test's own COSE_Sign1, over the issuer's
 * P-256 key): for an issuer whose CBOR encoder is not the library's, or an MSO that Coffer must
 * refuse although its signature is good. Returns the base64url IssuerSigned and the bytes of the
 * re-encoded element.
 */
export async function reissue(
  identity: IssuerIdentity,
  value: string,
  change: Reissue,
): Promise<{ value: string; elementBytes?: Uint8Array }> {
  const { issuerSigned, namespaces, issuerAuth } = partsOf(value);
  const mso = cborDecode<CborMap>(issuerAuth[2]);
  let elementBytes: Uint8Array | undefined;
  if (change.element) {
    const { namespace, element, value: newValue } = change.element;
    const items = namespaces.get(namespace)!;
    const index = itemIndex(items, element);
    elementBytes = cborg.encode(new Map([...items[index]!.data, ['elementValue', newValue]]));
    items[index] = DataItem.fromBuffer(elementBytes);
    const digest = createHash('sha256').update(cborEncode(items[index])).digest();
    const digests = (mso.get('valueDigests') as Map<string, Map<number, Uint8Array>>).get(namespace)!;
    digests.set(items[index]!.data.get('digestID') as number, new Uint8Array(digest));
  }
  change.mso?.(mso);
  const protectedHeader = change.alg === undefined ? issuerAuth[0] : cborEncode(new Map([[1, change.alg]]));
  const payload = cborEncode(DataItem.fromData(mso));
  const toBeSigned = cborEncode(['Signature1', protectedHeader, new Uint8Array(), payload]);
  const signature = new Uint8Array(
    await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, identity.signer.keys.privateKey, toBeSigned),
  );
  const unprotectedHeader = change.x5chain === false ? new Map() : issuerAuth[1];
  issuerSigned.set('issuerAuth', [protectedHeader, unprotectedHeader, payload, signature]);
  return { value: base64url.encode(cborEncode(issuerSigned)), ...(elementBytes ? { elementBytes } : {}) };
}
