import { X509Certificate } from 'node:crypto';
import { createLru } from '../lru.ts';

/**
 * Parsed certificates by their text (PEM) or bytes (DER): a verifier's trusted issuers and an
 * issuer's chain come again with every request and presentation, and parsing one costs about
 * 90 µs. A certificate is immutable, so an entry is never stale; bounded.
 */
const parsedCertificates = createLru<string, X509Certificate>(512);

/** `new X509Certificate(input)`, parsed once per distinct input; throws on an unreadable one. */
export function parseCertificate(input: string | Uint8Array): X509Certificate {
  const key = typeof input === 'string' ? input : `der:${Buffer.from(input).toString('base64')}`;
  let certificate = parsedCertificates.get(key);
  if (!certificate) {
    certificate = new X509Certificate(input);
    parsedCertificates.set(key, certificate);
  }
  return certificate;
}

/** Every PEM certificate of a text, in order (a chain file, a trust-anchor file); throws on an unreadable one. */
export function pemCertificates(text: string): X509Certificate[] {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((pem) => parseCertificate(pem));
}

/** The longest chain Coffer follows: deeper ones are refused rather than walked. */
export const MAX_CHAIN = 10;

/** Whether the certificate is within its validity period at `now`. */
export const validAt = (certificate: X509Certificate, now: Date) =>
  new Date(certificate.validFrom) <= now && now <= new Date(certificate.validTo);

/**
 * Whether `issuer`'s key signed `certificate`, checked once per pair of parsed certificates (a
 * fact about their bytes; with parseCertificate the same objects come back for the same bytes).
 */
const signatureChecks = new WeakMap<X509Certificate, WeakMap<X509Certificate, boolean>>();

function signedBy(certificate: X509Certificate, issuer: X509Certificate): boolean {
  let byIssuer = signatureChecks.get(certificate);
  if (!byIssuer) {
    byIssuer = new WeakMap();
    signatureChecks.set(certificate, byIssuer);
  }
  let signed = byIssuer.get(issuer);
  if (signed === undefined) {
    signed = certificate.verify(issuer.publicKey);
    byIssuer.set(issuer, signed);
  }
  return signed;
}

function issuedBy(certificate: X509Certificate, issuer: X509Certificate, now: Date): boolean {
  return certificate.checkIssued(issuer) && signedBy(certificate, issuer) && validAt(issuer, now);
}

/**
 * Whether the leaf chains, through the given intermediates, to a trust anchor, every certificate
 * of the chain — the leaf and the anchor included — within its validity now: an expired signer
 * certificate vouches for nothing, however good its CA. An intermediate must be a CA (RFC 5280 §6.1.4 (k)): checkIssued looks at names and key
 * usage only, and without this any holder of a trusted end-entity certificate could issue
 * trusted certificates for any subject.
 */
export function chainsToAnchor(
  leaf: X509Certificate,
  intermediates: X509Certificate[],
  anchors: X509Certificate[],
  now: Date,
): boolean {
  return anchorOf(leaf, intermediates, anchors, now) !== undefined;
}

/** The trust anchor the leaf chains to (see chainsToAnchor), or undefined. */
export function anchorOf(
  leaf: X509Certificate,
  intermediates: X509Certificate[],
  anchors: X509Certificate[],
  now: Date,
): X509Certificate | undefined {
  const anchorEqual = (c: X509Certificate) => anchors.find((a) => a.raw.equals(c.raw));
  // Each certificate above the leaf is checked as it is reached (issuedBy).
  if (!validAt(leaf, now)) return undefined;
  let current = leaf;
  for (let depth = 0; depth < MAX_CHAIN; depth++) {
    const anchor = anchorEqual(current);
    if (anchor) return anchor;
    let next: X509Certificate | undefined;
    for (const candidate of [...anchors, ...intermediates.filter((c) => c.ca)]) {
      if (issuedBy(current, candidate, now)) {
        next = candidate;
        break;
      }
    }
    if (!next) return undefined;
    current = next;
  }
  return undefined;
}
