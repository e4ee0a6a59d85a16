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

export interface Database {
  clients: ClientsTable;
  api_tokens: ApiTokensTable;
}
