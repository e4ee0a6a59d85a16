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
  email_index: string;
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

export interface Database {
  clients: ClientsTable;
  api_tokens: ApiTokensTable;
  users: UsersTable;
}
