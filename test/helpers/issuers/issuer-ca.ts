import { type Certified, makeCertificate } from '../../oid4vp/certificates.ts';

/**
 * A credential issuer's X.509 identity, made with @peculiar/x509 (not Coffer's code): a CA (for
 * ISSUER_TRUST_ANCHORS) and a document-signer certificate under it. ISO 18013-5 wants the
 * signer's country in its subject, so both carry one.
 */
export interface IssuerIdentity {
  ca: Certified;
  signer: Certified;
}

export async function makeIssuerIdentity(name = 'Example Issuer'): Promise<IssuerIdentity> {
  const ca = await makeCertificate({ subject: `CN=${name} CA, O=${name}, C=GB`, ca: true });
  const signer = await makeCertificate({
    subject: `CN=${name} Document Signer, O=${name}, C=GB`,
    issuer: ca,
  });
  return { ca, signer };
}
