import { X509Certificate } from 'node:crypto';

/** Every PEM certificate of a text, in order (a chain file, a trust-anchor file); throws on an unreadable one. */
export function pemCertificates(text: string): X509Certificate[] {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((pem) => new X509Certificate(pem));
}

/** The longest chain Coffer follows: deeper ones are refused rather than walked. */
export const MAX_CHAIN = 10;

/** Whether the certificate is within its validity period at `now`. */
export const validAt = (certificate: X509Certificate, now: Date) =>
  new Date(certificate.validFrom) <= now && now <= new Date(certificate.validTo);

function issuedBy(certificate: X509Certificate, issuer: X509Certificate, now: Date): boolean {
  return certificate.checkIssued(issuer) && certificate.verify(issuer.publicKey) && validAt(issuer, now);
}

/**
 * Whether the leaf chains, through the given intermediates, to a trust anchor, every link valid
 * now. An intermediate must be a CA (RFC 5280 §6.1.4 (k)): checkIssued looks at names and key
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
