import type { X509Certificate } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import {
  AuthorityKeyIdentifier,
  Certificate,
  id_ce_authorityKeyIdentifier,
  id_ce_keyUsage,
  id_ce_subjectAltName,
  KeyUsage,
  KeyUsageFlags,
  type Name,
  SubjectAlternativeName,
} from '@peculiar/asn1-x509';
import { createLru } from '../lru.ts';

/**
 * Fields node:crypto's X509Certificate does not expose as data: key usage bits, the SAN's
 * dNSName entries (its `subjectAltName` is display text, and `checkHost` matches wildcards,
 * which a client identifier must not) and the authority key identifier.
 */
interface CertificateFields {
  /** RFC 5280 §4.2.1.3: no keyUsage, or digitalSignature set. */
  maySign: boolean;
  dnsNames: readonly string[];
  /** The uniformResourceIdentifier entries of the subject alternative name, as written. */
  uris: readonly string[];
  /** The iPAddress entries of the subject alternative name, in text form. */
  ipAddresses: readonly string[];
  /** The keyIdentifier of the authorityKeyIdentifier extension (RFC 5280 §4.2.1.1), base64url; else null. */
  authorityKeyIdentifier: string | null;
  /** The countryName (C) values of the subject and of the issuer name. */
  subjectCountries: readonly string[];
  issuerCountries: readonly string[];
}

const COUNTRY_NAME = '2.5.4.6';

function countryValues(name: Name): readonly string[] {
  return Object.freeze(
    name.flatMap((rdn) => rdn.filter((a) => a.type === COUNTRY_NAME).map((a) => a.value.toString())),
  );
}

/**
 * A verifier signs every request object with the same certificate, and reading its extensions
 * with the ASN.1 schema costs about 0.5 ms; the fields are a function of the DER alone, so they
 * are kept per SHA-256 of it (a bounded number, least recently used out).
 */
const kept = createLru<string, CertificateFields>(256);

function readFields(certificate: X509Certificate): CertificateFields {
  const tbs = AsnConvert.parse(certificate.raw, Certificate).tbsCertificate;
  const extensions = tbs.extensions ?? [];
  const keyUsage = extensions.find((e) => e.extnID === id_ce_keyUsage);
  const altName = extensions.find((e) => e.extnID === id_ce_subjectAltName);
  const authorityKey = extensions.find((e) => e.extnID === id_ce_authorityKeyIdentifier);
  const keyIdentifier = authorityKey
    ? AsnConvert.parse(authorityKey.extnValue, AuthorityKeyIdentifier).keyIdentifier
    : undefined;
  const altNames = altName ? [...AsnConvert.parse(altName.extnValue, SubjectAlternativeName)] : [];
  return Object.freeze({
    maySign:
      !keyUsage ||
      (AsnConvert.parse(keyUsage.extnValue, KeyUsage).toNumber() & KeyUsageFlags.digitalSignature) !== 0,
    dnsNames: Object.freeze(
      altNames.filter((name) => name.dNSName !== undefined).map((name) => name.dNSName!.toLowerCase()),
    ),
    uris: Object.freeze(
      altNames
        .filter((name) => name.uniformResourceIdentifier !== undefined)
        .map((name) => name.uniformResourceIdentifier!),
    ),
    ipAddresses: Object.freeze(
      altNames.filter((name) => name.iPAddress !== undefined).map((name) => ipText(name.iPAddress!)),
    ),
    // An identifier given as issuer name and serial number instead (RFC 5280 allows both) is none.
    authorityKeyIdentifier: keyIdentifier ? Buffer.from(keyIdentifier.buffer).toString('base64url') : null,
    subjectCountries: countryValues(tbs.subject),
    issuerCountries: countryValues(tbs.issuer),
  });
}

function fieldsOf(certificate: X509Certificate): CertificateFields {
  const key = certificate.fingerprint256;
  const hit = kept.get(key);
  if (hit) return hit;
  const fields = readFields(certificate);
  kept.set(key, fields);
  return fields;
}

/** Whether the certificate's key may sign (RFC 5280 §4.2.1.3): no keyUsage, or digitalSignature set. */
export function maySign(certificate: X509Certificate): boolean {
  return fieldsOf(certificate).maySign;
}

/**
 * Whether the certificate names an `https` issuer identifier (SD-JWT VC, "Issuer-signed JWT
 * Verification Key Validation", X.509): a uniformResourceIdentifier equal to it, or its host as a
 * dNSName (an IP address host as an iPAddress, or as the dNSName a development certificate
 * carries). Exact names only: a wildcard would let one certificate speak for many issuers.
 */
export function namesIssuer(certificate: X509Certificate, issuer: string): boolean {
  const fields = fieldsOf(certificate);
  if (fields.uris.includes(issuer)) return true;
  let host: string;
  try {
    host = new URL(issuer).hostname.toLowerCase().replace(/^\[|\]$/g, '');
  } catch {
    return false;
  }
  return fields.dnsNames.includes(host) || fields.ipAddresses.includes(host);
}

/** An iPAddress entry as a URL host writes it (IPv6 compressed, without brackets). */
function ipText(address: string): string {
  if (!address.includes(':')) return address;
  try {
    return new URL(`http://[${address}]/`).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return address;
  }
}

/** The dNSName entries of the subject alternative name, lower-cased. */
export function dnsNamesOf(certificate: X509Certificate): readonly string[] {
  return fieldsOf(certificate).dnsNames;
}

/**
 * The keyIdentifier of the certificate's authorityKeyIdentifier extension (RFC 5280 §4.2.1.1):
 * the key identifier of the CA that issued it, base64url (what a DCQL `aki` trusted authority
 * names, OpenID4VP §6.1.1). Null when the extension or its keyIdentifier is absent.
 */
export function authorityKeyIdentifierOf(certificate: X509Certificate): string | null {
  return fieldsOf(certificate).authorityKeyIdentifier;
}

/**
 * The countryName (C) values of the certificate's subject and issuer names, as written: an mdoc
 * reader applying ISO/IEC 18013-5 Annex B refuses a document signer without one (Credo reads
 * the issuer name, the standard asks it of both).
 */
export function countriesOf(certificate: X509Certificate): {
  subject: readonly string[];
  issuer: readonly string[];
} {
  const fields = fieldsOf(certificate);
  return { subject: fields.subjectCountries, issuer: fields.issuerCountries };
}
