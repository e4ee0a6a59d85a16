import { type Certified, makeCertificate } from '../../oid4vp/certificates.ts';

/**
 * A credential issuer's X.509 identity, made with @peculiar/x509 (not Coffer's code): a CA (for
 * ISSUER_TRUST_ANCHORS), optionally an intermediate CA, and a document-signer certificate under
 * them. ISO 18013-5 wants the signer's country in its subject, so all carry one; all carry
 * subject and authority key identifiers, as real chains do.
 */
export interface IssuerIdentity {
  ca: Certified;
  /** Intermediate CAs, nearest the signer first; credentials carry them after the signer. */
  intermediates?: Certified[];
  signer: Certified;
}

/** The DER certificates (base64) a credential carries: the signer, then its intermediates. */
export const chainOf = (identity: IssuerIdentity) => [
  identity.signer.der,
  ...(identity.intermediates ?? []).map((c) => c.der),
];

/** The host an issuer identity's signer certificate names (the SD-JWT VCs' `iss` is https://ISSUER_HOST). */
export const ISSUER_HOST = 'issuer.example.com';

export async function makeIssuerIdentity(
  name = 'Example Issuer',
  options: { intermediate?: boolean; host?: string } = {},
): Promise<IssuerIdentity> {
  const ca = await makeCertificate({
    subject: `CN=${name} CA, O=${name}, C=GB`,
    ca: true,
    keyIdentifiers: true,
  });
  const intermediates = options.intermediate
    ? [
        await makeCertificate({
          subject: `CN=${name} Intermediate CA, O=${name}, C=GB`,
          issuer: ca,
          ca: true,
          keyIdentifiers: true,
        }),
      ]
    : [];
  const signer = await makeCertificate({
    subject: `CN=${name} Document Signer, O=${name}, C=GB`,
    issuer: intermediates[0] ?? ca,
    keyIdentifiers: true,
    // The host of the SD-JWT VCs' iss (sd-jwt-issuer.ts): a verifier ties the two.
    dnsNames: [options.host ?? ISSUER_HOST],
  });
  return { ca, intermediates, signer };
}
