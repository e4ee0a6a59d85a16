import type { X509Certificate } from 'node:crypto';
import type {
  Audience,
  CredentialSummary,
  DcqlInput,
  IssuerCertificate,
  StatusReference,
} from './credential-format.ts';

/**
 * The verifier side of a format (OpenID4VP 1.0 §8.6, §14.1, Appendix B): what one presentation
 * in a `vp_token` is checked against, and every check's outcome by a stable name, so that a
 * result says what passed and what failed. The verifier (src/verifier/) adds the checks that
 * span presentations: DCQL satisfaction and status.
 */

/** What a presentation must be bound to and judged by. */
export interface PresentationExpectation {
  /**
   * The request's client_id with its prefix (`origin:<origin>` for the Digital Credentials API),
   * its nonce, response_uri and the thumbprint of the response encryption key (mdoc transcript).
   */
  audience: Audience;
  /** The Digital Credentials API's caller origin: mdoc's `OpenID4VPDCAPIHandover`. */
  origin?: string | undefined;
  now: Date;
  /** CA certificates an issuer's chain may reach (ISSUER_TRUST_ANCHORS and the request's). */
  issuerTrustAnchors: X509Certificate[];
  /** Issuer DIDs the request trusts besides certificates (`trusted_issuers`). */
  trustedIssuerDids: string[];
  /** `require_cryptographic_holder_binding` of the DCQL credential query (default true). */
  holderBinding: boolean;
  /**
   * The request's `transaction_data` items naming this query, as received (base64url strings);
   * an SD-JWT's key binding JWT must carry their hashes.
   */
  transactionData: string[];
  /** Hash algorithms the request allowed for them (`transaction_data_hashes_alg`), default sha-256. */
  transactionDataHashAlgorithms?: string[] | undefined;
  /** How old a key binding JWT or VP may be (`iat`), seconds; OpenID4VP leaves it to the verifier. */
  maxAgeSeconds: number;
}

/** Stable check names, as results and the docs list them. */
export type CheckName =
  | 'format'
  | 'issuer_signature'
  | 'issuer_trusted'
  | 'digests'
  | 'validity'
  | 'holder_binding'
  | 'audience'
  | 'nonce'
  | 'freshness'
  | 'sd_hash'
  | 'device_signature'
  | 'subject_binding'
  | 'transaction_data_hashes'
  | 'status'
  | 'dcql';

export interface NamedCheck {
  name: CheckName;
  ok: boolean;
  /** For a failed check: one sentence for the tenant's developers. */
  detail?: string;
}

export interface VerifiedPresentation {
  /** True when every check passed. */
  ok: boolean;
  checks: NamedCheck[];
  /** The issuer as far as it could be read; `trusted` only when its key chains to a trusted anchor or DID. */
  issuer: { id: string; trusted: boolean; certificate: IssuerCertificate | null } | null;
  /** The presented credential with only what was disclosed (claims decoded); null when unreadable. */
  summary: CredentialSummary | null;
  /** What DCQL matching sees of the disclosed claims; null when unreadable. */
  dcqlInput: DcqlInput | null;
  /** Where the credential's status is published, to be checked by the verifier. */
  statusReference: StatusReference | null;
}

/** Builds a result from the checks run so far; the first failing check ends a format's work. */
export function presentationResult(
  checks: NamedCheck[],
  rest: Omit<VerifiedPresentation, 'ok' | 'checks'>,
): VerifiedPresentation {
  return { ok: checks.every((check) => check.ok), checks, ...rest };
}

/** Whether a DID is one of the trusted issuer DIDs. */
export const trustedDid = (did: string, expected: PresentationExpectation) =>
  expected.trustedIssuerDids.includes(did);
