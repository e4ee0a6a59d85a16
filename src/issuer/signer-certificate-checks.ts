import { pemCertificates } from '../keys/certificate-chain.ts';
import { countriesOf, namesIssuer } from '../keys/certificate-fields.ts';

/**
 * What readers will refuse in an operator's own signer certificate (`issuer enable --key
 * --chain`). Warnings, not refusals: an issuer may serve only formats that do not need them,
 * and the operator's CA decides what the certificate names.
 */
export function signerCertificateWarnings(chainPem: string, credentialIssuer: string): string[] {
  const leaf = pemCertificates(chainPem)[0];
  if (!leaf) return [];
  const warnings: string[] = [];
  const countries = countriesOf(leaf);
  // ISO/IEC 18013-5 Annex B: countryName in the document signer's subject and in its issuer's
  // (the IACA's) subject; Credo and other readers refuse an mdoc whose certificate lacks it.
  const lacking = [
    ...(countries.subject.length ? [] : ['subject']),
    ...(countries.issuer.length ? [] : ['issuer name']),
  ];
  if (lacking.length) {
    warnings.push(
      `The signer certificate's ${lacking.join(' and ')} names no country (C): mdoc readers that apply ISO/IEC 18013-5 Annex B refuse its mso_mdoc credentials.`,
    );
  }
  // SD-JWT VC, "Issuer-signed JWT Verification Key Validation": a reader accepts x5c only when
  // the leaf names the `iss` URL or its host.
  if (!namesIssuer(leaf, credentialIssuer)) {
    warnings.push(
      `The signer certificate names neither ${new URL(credentialIssuer).hostname} nor ${credentialIssuer} in its subject alternative name: readers refuse its SD-JWT VCs, whose iss is that URL.`,
    );
  }
  return warnings;
}
