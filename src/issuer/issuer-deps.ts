import type { KeyObject, X509Certificate } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Audit } from '../audit/audit-events.ts';
import type { Database } from '../db/schema.ts';
import type { Bbs2023Deps } from '../formats/ldp-vc/bbs-2023/base-proof.ts';
import type { OutboundClient } from '../http/outbound.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';
import type { KeyRing } from '../keys/signing-keys.ts';
import type { DpopDeps } from '../oidc/dpop.ts';
import type { ServiceMetrics } from '../telemetry/metrics.ts';
import type { IssuerKeys } from './issuer-keys.ts';
import type { IssuerWrites } from './issuer-writes.ts';

export interface IssuerDeps {
  db: Kysely<Database>;
  /** Each endpoint's writes in one group-committed transaction (issuer-writes.ts). */
  writes: IssuerWrites;
  cipher: FieldCipher;
  /** Coffer's OP keys: issuance access tokens and callback events. */
  keys: KeyRing;
  dpop: DpopDeps;
  /** bbs-2023 signing for ldp_vc (Coffer's own BBS core) and its JSON-LD document loader. */
  bbs2023: Bbs2023Deps;
  /** A person's profile, for configurations `from_profile`. */
  profileOf: (userId: number) => Promise<Record<string, unknown>>;
  outbound: OutboundClient;
  /** WALLET_PROVIDER_TRUST_ANCHORS: the providers whose Wallet and key attestations count. */
  walletProviderTrustAnchors: X509Certificate[];
  /** TRUSTED_LISTS: the CAs of granted wallet-provider services, beside the PEM anchors. */
  listedWalletProviders?: () => Promise<X509Certificate[]>;
  /** HMAC keys derived from the master key: pre-authorized codes, c_nonces. */
  secrets: { preAuthorizedCode: KeyObject; cNonce: KeyObject; previousPreAuthorizedCodes?: KeyObject[] };
  /** Opened issuer keys, cached per client (issuer-service.ts). */
  issuerKeys: (clientId: number) => Promise<IssuerKeys | undefined>;
  config: { publicUrl: string; allowPrivateTargets: boolean };
  now: () => Date;
  log: { warn(object: object, message: string): void };
  /** The audit trail: configurations, offers, issuances, status changes (docs/operations.md). */
  audit?: Audit;
  /** Per-tenant issuance counters for /metrics. */
  metrics?: Pick<ServiceMetrics, 'issuance'>;
}
