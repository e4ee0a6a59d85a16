import type { JsonWebKey, X509Certificate } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { PresentationExpectation } from '../formats/credential-format.ts';
import type { FormatRegistry } from '../formats/registry.ts';
import type { OutboundClient } from '../http/outbound.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';
import type { KeyRing } from '../keys/signing-keys.ts';
import type { StatusChecker } from '../status/status-checker.ts';
import type { ServiceMetrics } from '../telemetry/metrics.ts';
import type { VerifierWriters } from './verifier-repository.ts';

export interface VerifierDeps {
  db: Kysely<Database>;
  /** Group-committed writes (verifier-repository.ts). */
  writes: VerifierWriters;
  cipher: FieldCipher;
  /** The formats: each checks its own presentations (CredentialFormat.verifyPresentation). */
  formats: FormatRegistry;
  status: StatusChecker;
  outbound: OutboundClient;
  /** Coffer's OP signing keys: callback events are verifiable with the published JWKS. */
  keys: KeyRing;
  /** ISSUER_TRUST_ANCHORS; a request's trusted_issuers add to them. */
  issuerTrustAnchors: X509Certificate[];
  /** FEDERATION_TRUST_ANCHORS (trust/federation/issuer-trust.ts): issuers trusted through a federation. */
  federationTrust?: (issuerId: string, key: JsonWebKey) => Promise<string | null>;
  /** TRUSTED_LISTS (trust/trusted-lists/): issuers trusted through a trusted list's service. */
  trustedListTrust?: PresentationExpectation['trustedListTrust'];
  config: { publicUrl: string; resultRetention: number; allowPrivateTargets: boolean };
  now: () => Date;
  log: { warn(object: object, message: string): void };
  /** Per-tenant verification counters for /metrics. */
  metrics?: Pick<ServiceMetrics, 'verification'>;
}
