import type { X509Certificate } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import {
  Certificate,
  id_ce_keyUsage,
  id_ce_subjectAltName,
  KeyUsage,
  KeyUsageFlags,
  SubjectAlternativeName,
} from '@peculiar/asn1-x509';

/**
 * Fields node:crypto's X509Certificate does not expose as data: key usage bits and the SAN's
 * dNSName entries (its `subjectAltName` is display text, and `checkHost` matches wildcards,
 * which a client identifier must not).
 */
function extensionsOf(certificate: X509Certificate) {
  return AsnConvert.parse(certificate.raw, Certificate).tbsCertificate.extensions ?? [];
}

/** Whether the certificate's key may sign (RFC 5280 §4.2.1.3): no keyUsage, or digitalSignature set. */
export function maySign(certificate: X509Certificate): boolean {
  const extension = extensionsOf(certificate).find((e) => e.extnID === id_ce_keyUsage);
  if (!extension) return true;
  const usage = AsnConvert.parse(extension.extnValue, KeyUsage);
  return (usage.toNumber() & KeyUsageFlags.digitalSignature) !== 0;
}

/** The dNSName entries of the subject alternative name, lower-cased. */
export function dnsNamesOf(certificate: X509Certificate): string[] {
  const extension = extensionsOf(certificate).find((e) => e.extnID === id_ce_subjectAltName);
  if (!extension) return [];
  return [...AsnConvert.parse(extension.extnValue, SubjectAlternativeName)]
    .filter((name) => name.dNSName !== undefined)
    .map((name) => name.dNSName!.toLowerCase());
}
