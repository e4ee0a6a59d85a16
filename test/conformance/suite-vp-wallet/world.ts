import { type IssuerIdentity, makeIssuerIdentity } from '../../helpers/issuers/issuer-ca.ts';
import { makeCertificate } from '../../oid4vp/certificates.ts';
import { startVerifierWorld, type VerifierWorld } from '../../verifier/verifier-helpers.ts';

/**
 * The world of the OpenID4VP 1.0 verifier plans: Coffer over real HTTP behind TLS (the verifier
 * world of test/verifier/, on SQLite) with one tenant made a verifier, and the suite's own part —
 * a mock web wallet at `baseUrl` whose credentials are signed by `credentialSigner` (the suite's
 * `credential.signing_jwk` with its x5c) and which trusts the verifier's CA for request objects
 * (`client.request_object_trust_anchor_pem`).
 */
export interface SuiteWalletWorld {
  coffer: VerifierWorld;
  /** The suite's test URL: its `/authorize` is where the verifier's request is delivered, and its SD-JWT VCs' `iss`. */
  baseUrl: string;
  /**
   * The suite's credential signer. The suite makes `iss` its base URL and signs with the key and
   * x5c it is configured with; Coffer takes an https `iss` only where the x5c leaf names it (SD-JWT
   * VC, issuer-signed JWT verification key validation), so the signer's certificate names the
   * suite's host, as a tester configuring the suite for Coffer would make it.
   */
  credentialSigner: IssuerIdentity;
  /** A signer under the same CA whose certificate names another host, not the suite's (for Coffer's issuer_named rule). */
  signerNamingElsewhere: IssuerIdentity;
  /** `client.request_object_trust_anchor_pem`: the verifier's CA. */
  requestObjectTrustAnchorPem: string;
  /**
   * Thumbprints of the response encryption keys of every authorization request seen so far, across
   * the plan's modules (the suite's per-user memory behind VP1FinalCheckEncryptionKeyNotReused).
   */
  seenEncryptionKeys: Set<string>;
  /** HTTP of the suite: over the TLS front, trusting its CA. */
  fetch: typeof fetch;
}

export const SUITE_HOST = 'suite.conformance.example';

export async function startSuiteWalletWorld(): Promise<SuiteWalletWorld> {
  const coffer = await startVerifierWorld('sqlite');
  const credentialSigner = await makeIssuerIdentity('Conformance Suite Wallet', { host: SUITE_HOST });
  const elsewhere = await makeCertificate({
    subject: 'CN=Another Document Signer, O=Conformance Suite Wallet, C=GB',
    issuer: credentialSigner.ca,
    keyIdentifiers: true,
    dnsNames: ['elsewhere.example'],
  });
  return {
    coffer,
    baseUrl: `https://${SUITE_HOST}/test/a/coffer`,
    credentialSigner,
    signerNamingElsewhere: { ca: credentialSigner.ca, signer: elsewhere },
    requestObjectTrustAnchorPem: coffer.verifier.ca.pem,
    seenEncryptionKeys: new Set(),
    fetch: coffer.front.fetch,
  };
}

export const stopSuiteWalletWorld = (world: SuiteWalletWorld) => world.coffer.close();
