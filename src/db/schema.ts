import type { ColumnType, Generated } from 'kysely';

/** Booleans are stored as 0/1 in both databases so that one set of queries serves both. */
export type Flag = 0 | 1;

export interface ClientsTable {
  client_id: Generated<number>;
  name: string;
  is_master: Flag;
  is_verifier: Flag;
  parent_id: number | null;
  client_secret_hash: string | null;
  /** JSON array of exact-match redirect URIs. */
  redirect_uris: string;
  domain: string | null;
  subdomain: string | null;
  timezone: string | null;
  address_1: string | null;
  address_2: string | null;
  country: string | null;
  province: string | null;
  city: string | null;
  from_email_address: string | null;
  /** AES-GCM sealed (see keys/field-cipher.ts). */
  esp_token_sealed: string | null;
  recaptcha_key_sealed: string | null;
  recaptcha_threshold: ColumnType<number, number | undefined, number>;
  recaptcha_enabled: ColumnType<Flag, Flag | undefined, Flag>;
  privacy_link: string | null;
  created_at: string;
  /** A verifier's registered OpenID4VP metadata (JSON): jwks, encryption values, formats. */
  verifier_metadata: ColumnType<string | null, string | null | undefined, string | null>;
  /** How many clients have this one as parent; kept by triggers (migrations/0006), never written by code. */
  sub_client_count: ColumnType<number, never, never>;
  /** JSON array of exact-match URIs RP-initiated logout may return to. */
  post_logout_redirect_uris: ColumnType<string, string | undefined, string>;
  /** JSON array of the OAuth grants the client may use: authorization_code, refresh_token. */
  grant_types: ColumnType<string, string | undefined, string>;
  /** Its tokens must be DPoP-bound (RFC 9449). */
  dpop_bound: ColumnType<Flag, Flag | undefined, Flag>;
  /** It may start a log-in only through a pushed authorization request (RFC 9126). */
  require_par: ColumnType<Flag, Flag | undefined, Flag>;
  /** Logging in with a wallet (JSON: `{dcql_query, account_claim}`), or null when not offered. */
  wallet_login: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ApiTokensTable {
  token_hash: string;
  client_id: number;
  created_at: string;
  revoked_at: string | null;
}

/** A user account. No personal data in plaintext: see migrations/0002-users.ts. */
export interface UsersTable {
  user_id: Generated<number>;
  /** The client (master or sub-client) whose tenant the user belongs to. */
  tenant_id: number;
  /** HMAC of the lower-cased, trimmed e-mail (keys/blind-index.ts). */
  email_index: string | null;
  /** 1 once the person proved the address with a one-time code. */
  email_verified: ColumnType<Flag, Flag | undefined, Flag>;
  /** Lower-case 0x address. */
  wallet_address: string | null;
  wallet_chain_id: string | null;
  /** CID of the encrypted profile block. */
  profile_cid: string;
  /** The user's did:key, also the owner named in the profile block's associated data. */
  did: string;
  /** Ed25519 private JWK, sealed with the field cipher; associated data users/<did>/holder_key. */
  holder_key_sealed: string;
  created_at: string;
}

export interface SigningKeysTable {
  kid: string;
  alg: string;
  public_jwk: string;
  /** Private JWK sealed with the field cipher; associated data signing_keys/<kid>. */
  private_jwk_sealed: string;
  created_at: string;
  /** Set when a newer key takes over: the key stays published until then, for tokens it signed. */
  retire_after: string | null;
}

/** A log-in for a client, a presentation, an issuance, the wallet page's log-in, a sign-out confirmation. */
export type InteractionKind =
  | 'login'
  | 'consent'
  | 'issuance'
  | 'wallet'
  | 'logout'
  | 'issuer-login'
  | 'console';

export interface InteractionsTable {
  id: string;
  kind: InteractionKind;
  /** The client that asked; null for a verifier that is not a client (x509_hash, redirect_uri). */
  client_id: number | null;
  /** JSON of the validated authorization request. */
  params: string;
  csrf_token: string;
  siwe_nonce: string;
  otp_hash: string | null;
  /** Sealed e-mail the code was sent to. */
  otp_email_sealed: string | null;
  otp_expires_at: string | null;
  otp_attempts: number;
  user_id: number | null;
  login_type: string | null;
  auth_time: number | null;
  created_at: string;
  expires_at: string;
  finished_at: string | null;
  /** In a consent: the wallet address the person proved (lower-case), if any. */
  identity_wallet: ColumnType<string | null, string | null | undefined, string | null>;
  /** In a consent: the blind index of the e-mail the person proved, if any. */
  identity_email_index: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface VerifierNoncesTable {
  /** The verifier's full client_id. */
  verifier: string;
  nonce: string;
  /** Epoch seconds after which the row may be removed. */
  expires_at: number;
}

export interface SessionsTable {
  /** SHA-256 of the cookie value. */
  id_hash: string;
  user_id: number;
  tenant_id: number;
  login_type: string;
  auth_time: number;
  expires_at: string;
}

export interface AuthorizationCodesTable {
  /** SHA-256 of the code. */
  code_hash: string;
  client_id: number;
  user_id: number;
  redirect_uri: string;
  scope: string;
  nonce: string | null;
  code_challenge: string | null;
  login_type: string;
  auth_time: number;
  did: string;
  wallet_address: string | null;
  expires_at: number;
  consumed_at: number | null;
  /** The DPoP key the code is bound to (dpop_jkt or a DPoP proof at PAR, RFC 9449 §10). */
  dpop_jkt: ColumnType<string | null, string | null | undefined, string | null>;
  /** After a credential log-in: the disclosed OpenID Connect claims (JSON), sealed (oidc/login-claims.ts). */
  claims_sealed: ColumnType<string | null, string | null | undefined, string | null>;
}

/** The disclosed claims of a credential log-in, per access token, for userinfo until it expires. */
export interface AccessTokenClaimsTable {
  jti: string;
  user_id: number;
  claims_sealed: string;
  expires_at: number;
}

export interface RefreshTokensTable {
  /** SHA-256 of the token. */
  token_hash: string;
  family_id: string;
  client_id: number;
  user_id: number;
  scope: string;
  auth_time: number;
  login_type: string;
  did: string;
  wallet_address: string | null;
  /** The DPoP key a public client's refresh token is bound to. */
  jkt: string | null;
  access_jti: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  revoked_at: number | null;
  /** As on the code it came from: the disclosed claims of a credential log-in, sealed. */
  claims_sealed: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface DpopProofsTable {
  /** SHA-256 of the key thumbprint and the proof's jti. */
  proof_key: string;
  expires_at: number;
}

export interface PushedRequestsTable {
  /** SHA-256 of the request_uri. */
  uri_hash: string;
  client_id: number;
  /** The pushed parameters, JSON. */
  params: string;
  dpop_jkt: string | null;
  expires_at: number;
  consumed_at: number | null;
}

export interface RevokedTokensTable {
  jti: string;
  expires_at: number;
}

export interface RateLimitsTable {
  bucket: string;
  window_start: number;
  hits: number;
}

export interface CredentialsTable {
  credential_pk: Generated<number>;
  user_id: number;
  /** The credential's own `id`, unique per user. */
  credential_id: string;
  /** CID of the encrypted credential block. */
  cid: string;
  /** Keyed hash of the credential's content (credentials/credential-service.ts). */
  content_hash: string;
  /** The API client that stored it; null when it came from a credential issuer by OpenID4VCI. */
  issuer_client_id: number | null;
  /** The OpenID4VCI credential issuer it came from, else null. */
  credential_issuer: ColumnType<string | null, string | null | undefined, string | null>;
  /** Sealed notification endpoint, id and token (OpenID4VCI §11), for credential_deleted. */
  notification_sealed: ColumnType<string | null, string | null | undefined, string | null>;
  /** Sealed {name, logo} of the OpenID4VCI issuer's display, for the wallet page. */
  issuer_display_sealed: ColumnType<string | null, string | null | undefined, string | null>;
  /** Its format (formats/credential-format.ts FormatId); 'ldp_vc' for rows older than formats. */
  format: Generated<string>;
  /** CID of the encrypted block of its prepared bbs-2023 statements, else null (migration 0011). */
  prepared_cid: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: string;
}

/** One copy of a received credential (batch issuance): its block and its own holder key. */
export interface CredentialCopiesTable {
  credential_pk: number;
  copy_index: number;
  cid: string;
  /** The copy's private holder JWK, sealed. */
  holder_key_sealed: string;
  /** When the copy was last presented; unused copies are presented first. */
  presented_at: string | null;
}

/** A credential the issuer will deliver later (OpenID4VCI §9), polled in the background. */
export interface DeferredIssuancesTable {
  deferred_pk: Generated<number>;
  user_id: number;
  credential_issuer: string;
  configuration_id: string;
  state_sealed: string;
  status: 'pending' | 'failed' | 'done';
  failure: string | null;
  next_poll_at: string;
  give_up_at: string;
  created_at: string;
}

/** One event of an account's wallet history (wallet/history.ts); what and with whom is sealed. */
export interface WalletHistoryTable {
  history_pk: Generated<number>;
  user_id: number;
  kind: 'presentation' | 'arrival';
  at: string;
  detail_sealed: string;
}

/** A JSON-LD context registered with `coffer context add`; never changed once registered. */
export interface JsonLdContextsTable {
  url: string;
  /** The context document as JSON text. */
  document: string;
  sha256: string;
  created_at: string;
}

export interface VerifiersTable {
  client_id: number;
  /** The request-signing key's private JWK, sealed (keys/field-cipher.ts). */
  key_sealed: string;
  /** PEM certificates, the leaf (the signing key's) first. */
  chain_pem: string;
  created_at: string;
}

export type VerifierRequestStatus =
  | 'created'
  | 'retrieved'
  | 'verified'
  | 'rejected'
  | 'declined'
  | 'expired';

export interface VerifierRequestsTable {
  id: string;
  client_id: number;
  status: VerifierRequestStatus;
  /** The validated request (JSON): DCQL query, client id and prefix, response mode, options. */
  request: string;
  nonce: string;
  state: string;
  /** The private JWK the wallet encrypts its response to, sealed. */
  encryption_key_sealed: string;
  wallet_nonce: string | null;
  /** SHA-256 of the same-device response code; the result is read with it. */
  response_code_hash: string | null;
  /** The verification result without claims (JSON: checks, issuers, status), sealed. */
  result_sealed: string | null;
  /** The verified claims per query (JSON), sealed; dropped RESULT_RETENTION seconds after the first read. */
  claims_sealed: string | null;
  created_at: string;
  expires_at: string;
  answered_at: string | null;
  first_read_at: string | null;
  /** The log-in interaction this request was made for (logging in with a wallet), else null. */
  interaction_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** An account whose hosted wallet answered one of Coffer's own verifier requests. */
export interface VerifierRequestAccountsTable {
  request_id: string;
  user_id: number;
}

export interface VerifierCallbacksTable {
  callback_pk: Generated<number>;
  request_id: string;
  url: string;
  /** The signed event (application/jwt). */
  event: string;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: string;
}

export interface IssuersTable {
  client_id: number;
  /** The ES256 private JWK that signs SD-JWT VCs, mdocs, VC-JWTs and status lists, sealed. */
  key_sealed: string;
  /** PEM certificates, the leaf (the signing key's) first: `x5c` and `x5chain`. */
  chain_pem: string;
  /** The BLS12-381 secret key (base64url) that signs bbs-2023 credentials, sealed. */
  bbs_key_sealed: string;
  /** That key's `did:key`: the issuer of ldp_vc credentials. */
  bbs_did: string;
  /** 1 when the issuer follows HAIP 1.0 §4 (`coffer issuer enable --haip`). */
  haip: ColumnType<number, number | undefined, number>;
  /** Names the ES256 key of this enable; a status list records the key that signs it. */
  signing_key_id: string;
  created_at: string;
}

/** Coffer's federation keys (federation/): the newest unretired one signs; retired ones stay published a while. */
export interface FederationKeysTable {
  kid: string;
  key_sealed: string;
  created_at: string;
  retired_at: string | null;
}

/** `coffer federation enable`: one row (id 1). */
export interface FederationSettingsTable {
  id: number;
  /** JSON array of the superiors' Entity Identifiers. */
  authority_hints: string;
  organization_name: string;
  updated_at: string;
}

/** The federation key of a tenant entity: it signs the tenant's Entity Configuration. */
export interface FederationEntityKeysTable {
  client_id: number;
  kid: string;
  key_sealed: string;
  created_at: string;
}

/** A tenant verifier's static response encryption key (ECDH-ES P-256), sealed. */
export interface FederationEncryptionKeysTable {
  client_id: number;
  kid: string;
  key_sealed: string;
  created_at: string;
}

/** An issuer's earlier ES256 key, kept only to sign its own status lists (status-lists.ts). */
export interface IssuerRetiredKeysTable {
  id: string;
  client_id: number;
  key_sealed: string;
  chain_pem: string;
  retired_at: string;
}

export interface IssuerConfigurationsTable {
  client_id: number;
  configuration_id: string;
  /** The configuration as the API took it (JSON). */
  configuration: string;
  /** Its scope, unique across the deployment (null: none). */
  scope: string | null;
  updated_at: string;
}

export type IssuerOfferStatus =
  | 'offered'
  | 'redeemed'
  | 'deferred'
  | 'issued'
  | 'accepted'
  | 'failed'
  | 'deleted'
  | 'expired'
  /** The account it was made for was erased before it was issued. */
  | 'cancelled';

export interface IssuerOffersTable {
  id: string;
  client_id: number;
  /** JSON array of configuration ids. */
  configuration_ids: string;
  grant_type: 'pre-authorized_code' | 'authorization_code';
  pre_authorized_code_hash: string | null;
  issuer_state: string | null;
  tx_code_hash: string | null;
  /** The offer's tx_code object (JSON: length, input_mode, description) that wallets see. */
  tx_code_spec: string | null;
  tx_code_failures: ColumnType<number, number | undefined, number>;
  /** The claims per configuration (JSON), sealed; null once issued or when deferred. */
  claims_sealed: string | null;
  /**
   * 1: the sealed claims predate migration 0017 and give a W3C credential's subject members
   * directly; 0: they are addressed as the credential addresses them (`{credentialSubject: …}`).
   */
  legacy_w3c_claims: ColumnType<number, number | undefined, number>;
  user_id: number | null;
  status: IssuerOfferStatus;
  callback_url: string | null;
  /** SHA-256 of the deferred transaction id, while the claims are awaited. */
  transaction_id_hash: string | null;
  /** A deferred request (JSON: configuration, holder keys, response encryption), sealed. */
  deferred_sealed: string | null;
  created_at: string;
  expires_at: string;
  redeemed_at: string | null;
}

export interface IssuerOfferEventsTable {
  event_pk: Generated<number>;
  offer_id: string;
  event: string;
  status: string;
  at: string;
}

export interface IssuerCodesTable {
  code_hash: string;
  client_id: number;
  /** The wallet's client id: wallets are not registered clients. */
  wallet_client_id: string;
  redirect_uri: string;
  code_challenge: string;
  dpop_jkt: string | null;
  user_id: number | null;
  offer_id: string | null;
  /** What the code grants (JSON): configuration ids, authorization_details. */
  grant: string;
  expires_at: number;
  consumed_at: number | null;
}

export interface StatusListsTable {
  id: string;
  client_id: number;
  /** token (IETF Token Status List, 2 bits) or bitstring-jwt / bitstring-ldp (W3C, 1 bit). */
  kind: string;
  size: number;
  used: ColumnType<number, number | undefined, number>;
  /** The list's bytes, base64. */
  bytes: string;
  version: ColumnType<number, number | undefined, number>;
  /** The issuer key (issuers.signing_key_id, later issuer_retired_keys.id) that signs this list. */
  signing_key_id: string;
  updated_at: string;
}

export type IssuedCredentialStatus = 'valid' | 'revoked' | 'suspended';

export interface IssuedCredentialsTable {
  id: string;
  client_id: number;
  offer_id: string | null;
  configuration_id: string;
  format: string;
  status: IssuedCredentialStatus;
  status_list_id: string | null;
  status_index: number | null;
  /** SHA-256 of the credential as delivered: proves which credential a row was. */
  credential_hash: string;
  notification_id: string | null;
  /** The last Notification Request event for its notification_id (credential_accepted, …), or null. */
  notification_event: ColumnType<string | null, string | null | undefined, string | null>;
  issued_at: string;
  /** The credential's validUntil / exp (null: issued before it was recorded, kept as unknown). */
  expires_at: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface IssuerCallbacksTable {
  callback_pk: Generated<number>;
  offer_id: string;
  url: string;
  event: string;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: string;
}

/** A block garbage collection found unreferenced on Kubo, and when (migrations/0015). */
export interface UnreferencedBlocksTable {
  cid: string;
  first_seen_at: string;
}

/** One audited act (src/audit/); chain_seq, prev_hash and hash are set by the sealer. */
export interface AuditEventsTable {
  id: Generated<number>;
  occurred_at: string;
  client_id: number | null;
  actor: string;
  event_type: string;
  targets: string;
  outcome: string;
  reason: string | null;
  request_id: string | null;
  chain_seq: ColumnType<string | number | null, never, number>;
  prev_hash: ColumnType<string | null, never, string>;
  hash: ColumnType<string | null, never, string>;
}

/** Where retention truncated the audit chain: the last deleted position and hash, signed. */
export interface AuditCheckpointsTable {
  id: number;
  chain_seq: string | number;
  hash: string;
  signature: string;
  created_at: string;
}

/** A person a client grants a console role; named by a blind e-mail index or a wallet address. */
export interface ConsoleAdminsTable {
  id: Generated<number>;
  client_id: number;
  email_index: string | null;
  wallet_address: string | null;
  role: 'owner' | 'operator' | 'auditor';
  created_at: string;
}

/** A console session: the identity its log-in proved; the cookie's value only as its hash. */
export interface ConsoleSessionsTable {
  id_hash: string;
  email_index: string | null;
  wallet_address: string | null;
  created_at: string;
  expires_at: string;
}

export interface Database {
  console_admins: ConsoleAdminsTable;
  console_sessions: ConsoleSessionsTable;
  audit_events: AuditEventsTable;
  audit_checkpoints: AuditCheckpointsTable;
  issuers: IssuersTable;
  issuer_retired_keys: IssuerRetiredKeysTable;
  federation_keys: FederationKeysTable;
  federation_settings: FederationSettingsTable;
  federation_entity_keys: FederationEntityKeysTable;
  federation_encryption_keys: FederationEncryptionKeysTable;
  issuer_configurations: IssuerConfigurationsTable;
  issuer_offers: IssuerOffersTable;
  issuer_offer_events: IssuerOfferEventsTable;
  issuer_codes: IssuerCodesTable;
  status_lists: StatusListsTable;
  issued_credentials: IssuedCredentialsTable;
  issuer_callbacks: IssuerCallbacksTable;
  verifiers: VerifiersTable;
  verifier_requests: VerifierRequestsTable;
  verifier_callbacks: VerifierCallbacksTable;
  verifier_request_accounts: VerifierRequestAccountsTable;
  credentials: CredentialsTable;
  verifier_nonces: VerifierNoncesTable;
  jsonld_contexts: JsonLdContextsTable;
  signing_keys: SigningKeysTable;
  interactions: InteractionsTable;
  sessions: SessionsTable;
  authorization_codes: AuthorizationCodesTable;
  revoked_tokens: RevokedTokensTable;
  refresh_tokens: RefreshTokensTable;
  access_token_claims: AccessTokenClaimsTable;
  dpop_proofs: DpopProofsTable;
  pushed_requests: PushedRequestsTable;
  rate_limits: RateLimitsTable;
  clients: ClientsTable;
  api_tokens: ApiTokensTable;
  users: UsersTable;
  credential_copies: CredentialCopiesTable;
  deferred_issuances: DeferredIssuancesTable;
  wallet_history: WalletHistoryTable;
  unreferenced_blocks: UnreferencedBlocksTable;
}
