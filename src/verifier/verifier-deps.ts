import type { X509Certificate } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { FormatId } from '../formats/credential-format.ts';
import type { PresentationExpectation, VerifiedPresentation } from '../formats/presentation-verification.ts';
import type { OutboundClient } from '../http/outbound.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';
import type { KeyRing } from '../keys/signing-keys.ts';
import type { StatusChecker } from '../status/status-checker.ts';

/** Checks one presentation of a format (the format's verifier side, src/formats/). */
export type PresentationVerifier = (
  presented: unknown,
  expected: PresentationExpectation,
) => Promise<VerifiedPresentation>;

export interface VerifierDeps {
  db: Kysely<Database>;
  cipher: FieldCipher;
  /** One verifier per format a query may name. */
  presentations: Record<FormatId, PresentationVerifier>;
  status: StatusChecker;
  outbound: OutboundClient;
  /** Coffer's OP signing keys: callback events are verifiable with the published JWKS. */
  keys: KeyRing;
  /** ISSUER_TRUST_ANCHORS; a request's trusted_issuers add to them. */
  issuerTrustAnchors: X509Certificate[];
  config: { publicUrl: string; resultRetention: number; allowPrivateTargets: boolean };
  now: () => Date;
  log: { warn(object: object, message: string): void };
}
