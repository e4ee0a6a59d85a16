// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect metadata
// polyfill; only the CLI loads this module, so the server's global Reflect stays untouched.
import 'reflect-metadata';
import { KeyObject, type webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { CofferError } from '../errors.ts';

const ES256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 24 * 3600 * 1000;

/** The user-assigned ISO 3166-1 code (§2.1.3): a development issuer is of no country. */
export const DEVELOPMENT_COUNTRY = 'ZZ';

/**
 * A development signing certificate: self-signed, P-256, digital signature only, with the
 * service's host as its dNSName, so that `x509_san_dns:<host>` and `x509_hash:` both name it.
 * Wallets trust it only if told to; production uses a certificate from the ecosystem's CA.
 *
 * It carries what ISO/IEC 18013-5 Annex B asks of a document signer certificate that mdoc
 * readers check: a subject with countryName (PrintableString) and commonName (Credo refuses an
 * mdoc whose certificate names no country), an issuerAltName URI, the authority and subject
 * key identifiers, a critical keyUsage of digitalSignature, and a validity under Annex B's 457
 * days. It does not carry the mdlDS extended key usage: the same certificate signs SD-JWT VCs,
 * VC-JWTs, status lists and (for a verifier) request objects, which that usage would forbid.
 */
export async function createDevelopmentCertificate(input: {
  /** The organization the certificate names (O and CN): any text, kept as UTF8String, at most 64 characters. */
  name: string;
  /** ISO 3166-1 alpha-2, checked by the caller against the list of codes. */
  country: string;
  dnsName: string;
  /** PUBLIC_URL: the issuerAltName (Annex B asks for a URI or e-mail of the issuer). */
  url: string;
  now: Date;
}): Promise<{ keyPem: string; chainPem: string }> {
  // countryName is a PrintableString of two letters (RFC 5280 Appendix A, X520countryName).
  if (!/^[A-Z]{2}$/.test(input.country)) {
    throw new CofferError(
      'invalid_request',
      `the country must be an ISO 3166-1 alpha-2 code, not ${input.country}`,
    );
  }
  // X.520's upper bound for commonName and organizationName (RFC 5280 Appendix A): 64 characters.
  const name = [...input.name].slice(0, 64).join('');
  const keys = (await crypto.subtle.generateKey(ES256, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  // Structured attributes with explicit string types, never a DN string: a name with a comma,
  // a plus, quotes or a leading # would otherwise be parsed into other attributes or hex bytes.
  const subject = new x509.Name([
    { C: [{ printableString: input.country }] },
    { O: [{ utf8String: name }] },
    { CN: [{ utf8String: name }] },
  ]);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    // 16 random bytes: RFC 5280 and Annex B ask for at least 63 bits of entropy, at most 20 octets.
    serialNumber: Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('hex'),
    name: subject,
    notBefore: new Date(input.now.getTime() - DAY),
    notAfter: new Date(input.now.getTime() + 365 * DAY),
    keys,
    signingAlgorithm: ES256,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: input.dnsName }]),
      new x509.IssuerAlternativeNameExtension([{ type: 'url', value: input.url }]),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      // Self-signed: its own key is its authority, as Annex B's signer profile asks it be named.
      await x509.AuthorityKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const keyPem = KeyObject.from(keys.privateKey).export({ format: 'pem', type: 'pkcs8' }).toString();
  return { keyPem, chainPem: `${certificate.toString('pem')}\n` };
}
