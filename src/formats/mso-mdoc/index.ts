import { createHash, type JsonWebKey } from 'node:crypto';
import {
  base64url,
  CoseKey,
  DataItem,
  DateOnly,
  DeviceRequest,
  DocRequest,
  Header,
  Holder,
  IssuerSigned,
  ItemsRequest,
  SessionTranscript,
  type VerificationAssessment,
} from '@owf/mdoc';
import type { CredentialFormat, CredentialSummary, ParseContext } from '../credential-format.ts';
import { compactListEntry, rejected } from '../credential-format.ts';
import { certificateChain } from '../jose-credentials.ts';
import { mdocContext } from './mdoc-context.ts';

/**
 * ISO/IEC 18013-5 mdocs (`mso_mdoc`, OpenID4VP B.2): stored as the base64url CBOR IssuerSigned
 * that OpenID4VCI delivers; presented as a DeviceResponse holding only the requested elements,
 * signed by the device key (the holder key) over the OpenID4VP SessionTranscript.
 */

const BASE64URL = /^[A-Za-z0-9_-]+$/;
const CLOCK_SKEW_SECONDS = 60;
/** COSE algorithms Coffer accepts for issuerAuth (DESIGN.md): ES256, ES384, ES512, EdDSA. */
const ISSUER_ALGORITHMS = [-7, -35, -36, -8];
/** Fully specified equivalents (draft-ietf-jose-fully-specified-algorithms) of what the keys here use. */
const FULLY_SPECIFIED: Record<string, number> = { 'P-256': -9, Ed25519: -19 };
const EDDSA = -8;

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

/**
 * Decoded IssuerSigned structures by their encoding: decoding (CBOR and the library's schema
 * checks) is most of an mdoc's cost, and a consent reads the same credential for the page, the
 * matching and the presentation. Bounded; the structures are never modified.
 */
const decodedMdocs = new Map<string, IssuerSigned>();
const MAX_DECODED = 512;

function decode(value: unknown): IssuerSigned {
  if (typeof value !== 'string' || !BASE64URL.test(value)) {
    throw rejected('an mso_mdoc credential is base64url (no padding) CBOR IssuerSigned');
  }
  const known = decodedMdocs.get(value);
  if (known) return known;
  let issuerSigned: IssuerSigned;
  try {
    issuerSigned = IssuerSigned.decode(base64url.decode(value));
    void issuerSigned.issuerAuth.mobileSecurityObject.docType;
  } catch {
    throw rejected('it is not a CBOR IssuerSigned structure with a Mobile Security Object');
  }
  if (decodedMdocs.size >= MAX_DECODED) decodedMdocs.delete(decodedMdocs.keys().next().value!);
  decodedMdocs.set(value, issuerSigned);
  return issuerSigned;
}

const contents = new WeakMap<
  IssuerSigned,
  { id: string; claims: Record<string, Record<string, unknown>>; deviceJwk: JsonWebKey | null }
>();

/** The identifier (SHA-256 of issuerAuth) and decoded claims of a decoded mdoc, worked out once. */
function contentOf(issuerSigned: IssuerSigned) {
  let content = contents.get(issuerSigned);
  if (!content) {
    const claims: Record<string, Record<string, unknown>> = {};
    for (const [namespace, items] of issuerSigned.issuerNamespaces?.issuerNamespaces ?? new Map()) {
      claims[namespace] = Object.fromEntries(
        items.map((item) => [item.elementIdentifier, jsonOf(item.elementValue)]),
      );
    }
    const id = createHash('sha256').update(issuerSigned.issuerAuth.encode()).digest('base64url');
    let deviceJwk: JsonWebKey | null = null;
    try {
      const { x, y, crv, kty } = issuerSigned.issuerAuth.mobileSecurityObject.deviceKeyInfo.deviceKey
        .jwk as JsonWebKey;
      deviceJwk = Object.fromEntries(
        Object.entries({ kty, crv, x, y }).filter(([, v]) => v !== undefined),
      ) as JsonWebKey;
    } catch {
      // No usable device key: parse refuses the credential.
    }
    content = { id, claims, deviceJwk };
    contents.set(issuerSigned, content);
  }
  return content;
}

const algorithmOf = (issuerSigned: IssuerSigned) =>
  issuerSigned.issuerAuth.protectedHeaders.headers?.get(Header.Algorithm) as number | undefined;

function read(value: unknown, context: ParseContext) {
  const issuerSigned = decode(value);
  const { issuerAuth } = issuerSigned;
  const mso = issuerAuth.mobileSecurityObject;
  const alg = algorithmOf(issuerSigned);
  if (alg === undefined || !ISSUER_ALGORITHMS.includes(alg)) {
    throw rejected(`its issuerAuth algorithm ${String(alg)} is not one of ES256, ES384, ES512, EdDSA`);
  }
  if (!['SHA-256', 'SHA-384', 'SHA-512'].includes(mso.digestAlgorithm)) {
    throw rejected(`its digest algorithm ${String(mso.digestAlgorithm)} is not SHA-256, SHA-384 or SHA-512`);
  }
  const chain = issuerAuth.certificateChain;
  if (!chain?.length) throw rejected('its issuerAuth carries no x5chain certificate');
  const certificate = certificateChain(chain, context);
  const { id, claims } = contentOf(issuerSigned);
  const summary: CredentialSummary = {
    format: 'mso_mdoc',
    id,
    issuer: certificate.info.subject,
    type: mso.docType,
    validFrom: mso.validityInfo.validFrom.toISOString(),
    validUntil: mso.validityInfo.validUntil.toISOString(),
    claims,
    issuerCertificate: certificate.info,
  };
  return { issuerSigned, summary, alg };
}

function deviceJwkOf(issuerSigned: IssuerSigned): JsonWebKey {
  const { deviceJwk } = contentOf(issuerSigned);
  if (!deviceJwk) throw rejected('its deviceKeyInfo holds no usable device key');
  return deviceJwk;
}

/** A failed check of the library, as a sentence for the issuer. */
function reasonOf(failure: VerificationAssessment): string {
  const digest = /calculated digest for (.+) attribute/.exec(failure.check);
  if (digest) return `its element ${digest[1]} does not match the digest the issuer signed`;
  if (failure.check === 'Issuer auth signature is invalid')
    return "its issuer's signature (issuerAuth) does not verify";
  return (failure.reason ?? failure.check).replace(/\.$/, '');
}

const tokensOf = (pointer: string) =>
  pointer
    .split('/')
    .slice(1)
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));

export const msoMdocFormat: CredentialFormat = {
  id: 'mso_mdoc',
  disclosesEverything: false,
  recognises(value) {
    if (typeof value !== 'string' || !BASE64URL.test(value) || value.includes('.')) return false;
    try {
      decode(value);
      return true;
    } catch {
      return false;
    }
  },
  parse(value, context) {
    const { issuerSigned, summary } = read(value, context);
    const { validityInfo } = issuerSigned.issuerAuth.mobileSecurityObject;
    if (validityInfo.validUntil.getTime() <= context.now.getTime() - CLOCK_SKEW_SECONDS * 1000) {
      throw rejected(`it expired at ${summary.validUntil}`);
    }
    if (validityInfo.validFrom.getTime() > context.now.getTime() + CLOCK_SKEW_SECONDS * 1000) {
      throw rejected(`it is not valid before ${summary.validFrom}`);
    }
    return {
      summary,
      holder: { kind: 'key', jwk: deviceJwkOf(issuerSigned) },
      stored: value,
      async verify() {
        const failures: VerificationAssessment[] = [];
        await Holder.verifyIssuerSigned(
          {
            issuerSigned,
            now: context.now,
            disableCertificateChainValidation: true,
            skewSeconds: CLOCK_SKEW_SECONDS,
            verificationCallback: (check) => {
              if (check.status === 'FAILED') failures.push(check);
            },
          },
          mdocContext,
        );
        if (failures.length > 0) throw rejected(reasonOf(failures[0]!));
      },
    };
  },
  summarize: (stored, context) => read(stored, context).summary,
  listEntry: compactListEntry,
  async dcqlInput(_stored, summary) {
    return {
      credential_format: 'mso_mdoc',
      doctype: summary.type as string,
      namespaces: summary.claims as Record<string, Record<string, unknown>>,
    };
  },
  verifierCanVerify(stored, parameters, holderBinding) {
    if (parameters === undefined) return false;
    const issuerSigned = decode(stored);
    const alg = algorithmOf(issuerSigned)!;
    const leafCurve = issuerSigned.issuerAuth.certificate
      ? (
          mdocContext.x509.getPublicKey({
            certificate: issuerSigned.issuerAuth.certificate,
            alg: '',
          }) as CoseKey
        ).jwk['crv']
      : undefined;
    const takes = (list: unknown, algorithm: number, curve: unknown) =>
      !Array.isArray(list) || list.includes(algorithm) || list.includes(FULLY_SPECIFIED[String(curve)]);
    return (
      takes(parameters['issuerauth_alg_values'], alg, leafCurve) &&
      (!holderBinding || takes(parameters['deviceauth_alg_values'], EDDSA, 'Ed25519'))
    );
  },
  async present({ stored, disclosed, holder, audience }) {
    if (!holder) throw new Error('an mdoc presentation is signed by the device key');
    const issuerSigned = decode(stored);
    const docType = issuerSigned.issuerAuth.mobileSecurityObject.docType;
    const namespaces: Record<string, Record<string, boolean>> = {};
    for (const pointer of disclosed) {
      const [namespace, element] = tokensOf(pointer);
      if (namespace === undefined || element === undefined) continue;
      namespaces[namespace] ??= {};
      namespaces[namespace][element] = false;
    }
    const deviceRequest = DeviceRequest.create({
      docRequests: [DocRequest.create({ itemsRequest: ItemsRequest.create({ docType, namespaces }) })],
    });
    const sessionTranscript = await SessionTranscript.forOid4Vp(
      {
        clientId: audience.clientId,
        nonce: audience.nonce,
        responseUri: audience.responseUri,
        ...(audience.encryptionJwkThumbprint ? { jwkThumbprint: audience.encryptionJwkThumbprint } : {}),
      },
      mdocContext,
    );
    const signingKey = CoseKey.fromJwk({ ...(holder.privateJwk as Record<string, unknown>), alg: 'EdDSA' });
    const response = await Holder.createDeviceResponseForDeviceRequest(
      { deviceRequest, sessionTranscript, issuerSigned: [issuerSigned], signature: { signingKey } },
      mdocContext,
    );
    return base64url.encode(response.encode());
  },
};
