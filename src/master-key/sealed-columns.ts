import {
  copyKeyContext,
  issuerDisplayContext,
  notificationContext,
} from '../credentials/held-credential-contexts.ts';
import {
  encryptionKeyContext as entityEncryptionKeyContext,
  entityKeyContext,
  federationKeyContext,
} from '../federation/federation-keys.ts';
import { deferredContext } from '../issuer/credential-endpoint.ts';
import { bbsContext, es256Context } from '../issuer/issuer-keys.ts';
import { offerClaimsContext } from '../issuer/offers.ts';
import { sealContext } from '../keys/signing-keys.ts';
import { stateContext } from '../oid4vci/deferred-issuances.ts';
import { claimsContext as loginClaimsContext } from '../oidc/login-claims.ts';
import { holderKeyContext } from '../users/user-service.ts';
import { verifierKeyContext } from '../verifier/verifier-admin.ts';
import { encryptionKeyContext } from '../verifier/verifier-requests.ts';
import { claimsContext as resultClaimsContext, resultContext } from '../verifier/verifier-service.ts';
import { historyContext } from '../wallet/wallet-history.ts';

type Row = Record<string, unknown>;

/**
 * A database column of values sealed with the field cipher (keys/field-cipher.ts), and how to
 * find each value's associated data: what `coffer master-key rotate` walks. Every `*_sealed`
 * column of db/schema.ts is here, except access_token_claims.claims_sealed (see below).
 */
export interface SealedColumn {
  table: string;
  column: string;
  /** A unique column of the table that orders the walk and names the row to update. */
  key: string;
  /** Columns the associated data needs (`t.` is the table; joins may add others). */
  extra: string[];
  joins?: string;
  aad(row: Row): string;
}

const s = (value: unknown) => String(value);

export const SEALED_COLUMNS: SealedColumn[] = [
  // The associated data of client settings is written in clients/client-admin.ts.
  {
    table: 'clients',
    column: 'esp_token_sealed',
    key: 'client_id',
    extra: [],
    aad: (r) => `clients/${s(r['k'])}/esp_token`,
  },
  {
    table: 'clients',
    column: 'recaptcha_key_sealed',
    key: 'client_id',
    extra: [],
    aad: (r) => `clients/${s(r['k'])}/recaptcha_key`,
  },
  {
    table: 'users',
    column: 'holder_key_sealed',
    key: 'user_id',
    extra: ['t.did'],
    aad: (r) => holderKeyContext(s(r['did'])),
  },
  {
    table: 'signing_keys',
    column: 'private_jwk_sealed',
    key: 'kid',
    extra: [],
    aad: (r) => sealContext(s(r['k'])),
  },
  {
    table: 'interactions',
    column: 'otp_email_sealed',
    key: 'id',
    extra: [],
    aad: (r) => `interactions/${s(r['k'])}/email`,
  },
  {
    table: 'authorization_codes',
    column: 'claims_sealed',
    key: 'code_hash',
    extra: ['t.client_id', 't.user_id'],
    aad: (r) => loginClaimsContext(Number(r['client_id']), Number(r['user_id'])),
  },
  {
    table: 'refresh_tokens',
    column: 'claims_sealed',
    key: 'token_hash',
    extra: ['t.client_id', 't.user_id'],
    aad: (r) => loginClaimsContext(Number(r['client_id']), Number(r['user_id'])),
  },
  {
    table: 'credentials',
    column: 'notification_sealed',
    key: 'credential_pk',
    extra: ['u.did', 't.credential_id'],
    joins: 'join users u on u.user_id = t.user_id',
    aad: (r) => notificationContext(s(r['did']), s(r['credential_id'])),
  },
  {
    table: 'credentials',
    column: 'issuer_display_sealed',
    key: 'credential_pk',
    extra: ['u.did', 't.credential_id'],
    joins: 'join users u on u.user_id = t.user_id',
    aad: (r) => issuerDisplayContext(s(r['did']), s(r['credential_id'])),
  },
  {
    table: 'credential_copies',
    column: 'holder_key_sealed',
    key: 'cid',
    extra: ['u.did'],
    joins: 'join credentials c on c.credential_pk = t.credential_pk join users u on u.user_id = c.user_id',
    aad: (r) => copyKeyContext(s(r['did']), s(r['k'])),
  },
  {
    table: 'deferred_issuances',
    column: 'state_sealed',
    key: 'deferred_pk',
    extra: ['t.user_id', 't.configuration_id', 't.created_at'],
    aad: (r) =>
      stateContext({
        user_id: Number(r['user_id']),
        configuration_id: s(r['configuration_id']),
        created_at: s(r['created_at']),
      }),
  },
  {
    table: 'wallet_history',
    column: 'detail_sealed',
    key: 'history_pk',
    extra: ['u.did'],
    joins: 'join users u on u.user_id = t.user_id',
    aad: (r) => historyContext(s(r['did'])),
  },
  {
    table: 'verifiers',
    column: 'key_sealed',
    key: 'client_id',
    extra: [],
    aad: (r) => verifierKeyContext(Number(r['k'])),
  },
  {
    table: 'verifier_requests',
    column: 'encryption_key_sealed',
    key: 'id',
    extra: [],
    aad: (r) => encryptionKeyContext(s(r['k'])),
  },
  {
    table: 'verifier_requests',
    column: 'result_sealed',
    key: 'id',
    extra: [],
    aad: (r) => resultContext(s(r['k'])),
  },
  {
    table: 'verifier_requests',
    column: 'claims_sealed',
    key: 'id',
    extra: [],
    aad: (r) => resultClaimsContext(s(r['k'])),
  },
  {
    table: 'issuers',
    column: 'key_sealed',
    key: 'client_id',
    extra: [],
    aad: (r) => es256Context(Number(r['k'])),
  },
  {
    table: 'federation_keys',
    column: 'key_sealed',
    key: 'kid',
    extra: [],
    aad: (r) => federationKeyContext(s(r['k'])),
  },
  {
    table: 'federation_entity_keys',
    column: 'key_sealed',
    key: 'client_id',
    extra: [],
    aad: (r) => entityKeyContext(Number(r['k'])),
  },
  {
    table: 'federation_encryption_keys',
    column: 'key_sealed',
    key: 'client_id',
    extra: [],
    aad: (r) => entityEncryptionKeyContext(Number(r['k'])),
  },
  {
    // An earlier key of the issuer, kept for its status lists: sealed as it was in issuers.
    table: 'issuer_retired_keys',
    column: 'key_sealed',
    key: 'id',
    extra: ['t.client_id'],
    aad: (r) => es256Context(Number(r['client_id'])),
  },
  {
    table: 'issuers',
    column: 'bbs_key_sealed',
    key: 'client_id',
    extra: [],
    aad: (r) => bbsContext(Number(r['k'])),
  },
  {
    table: 'issuer_offers',
    column: 'claims_sealed',
    key: 'id',
    extra: [],
    aad: (r) => offerClaimsContext(s(r['k'])),
  },
  {
    table: 'issuer_offers',
    column: 'deferred_sealed',
    key: 'id',
    extra: [],
    aad: (r) => deferredContext(s(r['k'])),
  },
];

/**
 * access_token_claims.claims_sealed is bound to the client of its access token, which the row
 * does not name, so it cannot be opened outside the request that carries the token. Rows live
 * as long as their access token (ACCESS_TOKEN_TTL at most); the rotation waits them out instead.
 */
export const EXPIRING_SEALED = { table: 'access_token_claims', column: 'claims_sealed' } as const;
