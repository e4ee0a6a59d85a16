import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { deleteExpiredInBatches, SWEEP_BATCH, untilShort } from '../db/expired-batches.ts';
import { type Param, prepareQuery } from '../db/prepared-query.ts';
import type {
  Database,
  IssuedCredentialsTable,
  IssuerOfferEventsTable,
  IssuerOffersTable,
  IssuersTable,
} from '../db/schema.ts';
import type { CredentialConfiguration } from './configurations.ts';

/** Enabling again replaces the key and chain (and the HAIP flag); the BLS key was kept by the caller. */
export async function saveIssuer(db: Kysely<Database>, row: Insertable<IssuersTable>): Promise<void> {
  await db
    .insertInto('issuers')
    .values(row)
    .onConflict((oc) =>
      oc.column('client_id').doUpdateSet({
        key_sealed: row.key_sealed,
        chain_pem: row.chain_pem,
        haip: row.haip ?? 0,
        signing_key_id: row.signing_key_id,
      }),
    )
    .execute();
}

/** Keeps an issuer's current ES256 key, under its id, for the status lists it signs. */
export async function retireIssuerKey(
  db: Kysely<Database>,
  issuer: Pick<Selectable<IssuersTable>, 'client_id' | 'key_sealed' | 'chain_pem' | 'signing_key_id'>,
  now: string,
): Promise<void> {
  await db
    .insertInto('issuer_retired_keys')
    .values({
      id: issuer.signing_key_id,
      client_id: issuer.client_id,
      key_sealed: issuer.key_sealed,
      chain_pem: issuer.chain_pem,
      retired_at: now,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

export const findRetiredKey = (db: Kysely<Database>, clientId: number, id: string) =>
  db
    .selectFrom('issuer_retired_keys')
    .selectAll()
    .where('client_id', '=', clientId)
    .where('id', '=', id)
    .executeTakeFirst();

export const findIssuerRow = (db: Kysely<Database>, clientId: number) =>
  db.selectFrom('issuers').selectAll().where('client_id', '=', clientId).executeTakeFirst();

/**
 * Creates or replaces a configuration; false when it replaced one. A scope another configuration
 * holds is a unique violation (the caller's conflict), even when two tenants race for it.
 */
export async function saveConfiguration(
  db: Kysely<Database>,
  clientId: number,
  id: string,
  configuration: CredentialConfiguration,
  now: string,
): Promise<boolean> {
  const existing = await db
    .selectFrom('issuer_configurations')
    .select('configuration_id')
    .where('client_id', '=', clientId)
    .where('configuration_id', '=', id)
    .executeTakeFirst();
  const text = JSON.stringify(configuration);
  const scope = configuration.scope ?? null;
  if (existing) {
    await db
      .updateTable('issuer_configurations')
      .set({ configuration: text, scope, updated_at: now })
      .where('client_id', '=', clientId)
      .where('configuration_id', '=', id)
      .execute();
  } else {
    await db
      .insertInto('issuer_configurations')
      .values({ client_id: clientId, configuration_id: id, configuration: text, scope, updated_at: now })
      .execute();
  }
  return !existing;
}

// Every issuance runs the statements below, so each is compiled once (db/prepared-query.ts).
const selectConfigurations = prepareQuery((db, param: Param<{ clientId: number }>) =>
  db
    .selectFrom('issuer_configurations')
    .select(['configuration_id', 'configuration'])
    .where('client_id', '=', param('clientId'))
    .orderBy('configuration_id'),
);

const selectConfiguration = prepareQuery((db, param: Param<{ clientId: number; id: string }>) =>
  db
    .selectFrom('issuer_configurations')
    .select(['configuration_id', 'configuration'])
    .where('client_id', '=', param('clientId'))
    .where('configuration_id', '=', param('id')),
);

export async function listConfigurations(
  db: Kysely<Database>,
  clientId: number,
): Promise<Map<string, CredentialConfiguration>> {
  const rows = await selectConfigurations(db, { clientId });
  return new Map(
    rows.map((r) => [r.configuration_id, JSON.parse(r.configuration) as CredentialConfiguration]),
  );
}

/** The configurations among `ids` that exist (an offer names one or a few). */
export async function findConfigurations(
  db: Kysely<Database>,
  clientId: number,
  ids: string[],
): Promise<Map<string, CredentialConfiguration>> {
  const found = new Map<string, CredentialConfiguration>();
  for (const id of new Set(ids)) {
    const [row] = await selectConfiguration(db, { clientId, id });
    if (row) found.set(id, JSON.parse(row.configuration) as CredentialConfiguration);
  }
  return found;
}

export async function deleteConfiguration(
  db: Kysely<Database>,
  clientId: number,
  id: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom('issuer_configurations')
    .where('client_id', '=', clientId)
    .where('configuration_id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

const selectByScope = prepareQuery((db, param: Param<{ scope: string }>) =>
  db
    .selectFrom('issuer_configurations')
    .select(['client_id', 'configuration_id', 'configuration'])
    .where('scope', '=', param('scope')),
);

/** Scopes name one configuration across the deployment, so an authorization request names its issuer. */
export async function configurationsWithScope(db: Kysely<Database>, scope: string) {
  return (await selectByScope(db, { scope })).map((r) => ({
    clientId: r.client_id,
    id: r.configuration_id,
    configuration: JSON.parse(r.configuration) as CredentialConfiguration,
  }));
}

const insertOfferRow = prepareQuery((db, param: Param<Insertable<IssuerOffersTable>>) =>
  db.insertInto('issuer_offers').values({
    id: param('id'),
    client_id: param('client_id'),
    configuration_ids: param('configuration_ids'),
    grant_type: param('grant_type'),
    pre_authorized_code_hash: param('pre_authorized_code_hash'),
    issuer_state: param('issuer_state'),
    tx_code_hash: param('tx_code_hash'),
    tx_code_spec: param('tx_code_spec'),
    claims_sealed: param('claims_sealed'),
    user_id: param('user_id'),
    status: param('status'),
    callback_url: param('callback_url'),
    transaction_id_hash: param('transaction_id_hash'),
    deferred_sealed: param('deferred_sealed'),
    created_at: param('created_at'),
    expires_at: param('expires_at'),
    redeemed_at: param('redeemed_at'),
  }),
);

export async function insertOffer(db: Kysely<Database>, row: Insertable<IssuerOffersTable>) {
  await insertOfferRow(db, {
    pre_authorized_code_hash: null,
    issuer_state: null,
    tx_code_hash: null,
    tx_code_spec: null,
    claims_sealed: null,
    user_id: null,
    callback_url: null,
    transaction_id_hash: null,
    deferred_sealed: null,
    redeemed_at: null,
    ...row,
  });
}

const selectOffer = prepareQuery((db, param: Param<{ id: string }>) =>
  db.selectFrom('issuer_offers').selectAll().where('id', '=', param('id')),
);

export const findOffer = async (db: Kysely<Database>, id: string) => (await selectOffer(db, { id }))[0];

const selectOfferByCodeHash = prepareQuery((db, param: Param<{ codeHash: string }>) =>
  db.selectFrom('issuer_offers').selectAll().where('pre_authorized_code_hash', '=', param('codeHash')),
);

export const findOfferByCodeHash = async (db: Kysely<Database>, codeHash: string) =>
  (await selectOfferByCodeHash(db, { codeHash }))[0];

const markRedeemed = prepareQuery((db, param: Param<{ id: string; at: string }>) =>
  db
    .updateTable('issuer_offers')
    .set({ status: 'redeemed', redeemed_at: param('at') })
    .where('id', '=', param('id'))
    .where('status', '=', 'offered')
    .returning('id'),
);

const markRedeemedWithTxCode = prepareQuery((db, param: Param<{ id: string; at: string }>) =>
  db
    .updateTable('issuer_offers')
    .set((eb) => ({
      status: 'redeemed',
      redeemed_at: param('at'),
      // The right code's reserved try was no failure.
      tx_code_failures: eb('tx_code_failures', '-', 1),
    }))
    .where('id', '=', param('id'))
    .where('status', '=', 'offered')
    .where('tx_code_failures', '>', 0)
    .returning('id'),
);

/**
 * An offered offer becomes redeemed, once; false when another request redeemed it first. With
 * `reservedTry`, the caller holds a transaction-code try (reserveTxCodeTry), which is given back.
 */
export const markOfferRedeemed = async (db: Kysely<Database>, id: string, at: string, reservedTry = false) =>
  (await (reservedTry ? markRedeemedWithTxCode : markRedeemed)(db, { id, at })).length === 1;

const touchOffer = prepareQuery((db, param: Param<{ id: string }>) =>
  db
    .updateTable('issuer_offers')
    .set((eb) => ({ status: eb.ref('status') }))
    .where('id', '=', param('id'))
    .returning('status'),
);

/**
 * Holds the offer's row until the transaction ends (a write that changes nothing): on PostgreSQL
 * concurrent issuances for one offer then take turns, and each sees what the one before recorded;
 * SQLite runs one write transaction at a time anyway. Answers the offer's status as it is now.
 */
export const lockOffer = async (db: Kysely<Database>, id: string) =>
  (await touchOffer(db, { id }))[0]?.status;

/** The states in which an offer has issued nothing yet and may still issue. */
const UNFINISHED = ['offered', 'redeemed', 'deferred'] as const;

/** The account's offers that have not issued yet (an erasure cancels them). */
export const findUnfinishedOffersOf = (db: Kysely<Database>, userId: number) =>
  db
    .selectFrom('issuer_offers')
    .select(['id', 'client_id', 'callback_url'])
    .where('user_id', '=', userId)
    .where('status', 'in', [...UNFINISHED])
    .execute();

/**
 * Cancels the account's unfinished offers: their claims and deferred requests go and their codes
 * stop working (every grant and the offer by reference want another status). Answers their ids.
 */
export async function cancelUnfinishedOffersOf(db: Kysely<Database>, userId: number) {
  return db
    .updateTable('issuer_offers')
    .set({ status: 'cancelled', claims_sealed: null, deferred_sealed: null, transaction_id_hash: null })
    .where('user_id', '=', userId)
    .where('status', 'in', [...UNFINISHED])
    .returning(['id', 'client_id'])
    .execute();
}

const markIssued = prepareQuery((db, param: Param<{ id: string }>) =>
  db
    .updateTable('issuer_offers')
    .set({ status: 'issued', claims_sealed: null })
    .where('id', '=', param('id')),
);

/** Every configuration of the offer is issued: its claims go. */
export const markOfferIssued = async (db: Kysely<Database>, id: string) => {
  await markIssued(db, { id });
};

const insertIssued = prepareQuery((db, param: Param<Insertable<IssuedCredentialsTable>>) =>
  db.insertInto('issued_credentials').values({
    id: param('id'),
    client_id: param('client_id'),
    offer_id: param('offer_id'),
    configuration_id: param('configuration_id'),
    format: param('format'),
    status: param('status'),
    status_list_id: param('status_list_id'),
    status_index: param('status_index'),
    credential_hash: param('credential_hash'),
    notification_id: param('notification_id'),
    issued_at: param('issued_at'),
    expires_at: param('expires_at'),
  }),
);

export const insertIssuedCredential = async (
  db: Kysely<Database>,
  row: Insertable<IssuedCredentialsTable>,
) => {
  await insertIssued(db, row);
};

const selectIssuedConfigurations = prepareQuery((db, param: Param<{ offerId: string }>) =>
  db
    .selectFrom('issued_credentials')
    .select('configuration_id')
    .distinct()
    .where('offer_id', '=', param('offerId')),
);

/** The configurations of an offer that have at least one issued copy. */
export const issuedConfigurationsOf = async (db: Kysely<Database>, offerId: string) =>
  new Set((await selectIssuedConfigurations(db, { offerId })).map((r) => r.configuration_id));

/** Changes an offer only if it still has the values `expected` names; false when another request won. */
export async function updateOffer(
  db: Kysely<Database>,
  id: string,
  expected: Partial<Selectable<IssuerOffersTable>>,
  changes: Updateable<IssuerOffersTable>,
): Promise<boolean> {
  let query = db.updateTable('issuer_offers').set(changes).where('id', '=', id);
  for (const [column, value] of Object.entries(expected)) {
    const name = column as keyof IssuerOffersTable;
    query = value === null ? query.where(name, 'is', null) : query.where(name, '=', value as never);
  }
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

const reserveTry = prepareQuery((db, param: Param<{ id: string; limit: number }>) =>
  db
    .updateTable('issuer_offers')
    .set((eb) => ({ tx_code_failures: eb('tx_code_failures', '+', 1) }))
    .where('id', '=', param('id'))
    .where('status', '=', 'offered')
    .where('tx_code_failures', '<', param('limit'))
    .returning('tx_code_failures'),
);

/**
 * Reserves one transaction-code try before the code is compared: the count is checked and
 * raised in one statement, so however many requests race, at most `limit` codes are ever
 * compared for an offer. Answers the tries used, this one included, or null when none is left
 * (or the offer is no longer offered).
 */
export async function reserveTxCodeTry(db: Kysely<Database>, id: string, limit: number) {
  const rows = await reserveTry(db, { id, limit });
  return rows[0] ? Number(rows[0].tx_code_failures) : null;
}

const insertOfferEvent = prepareQuery((db, param: Param<Insertable<IssuerOfferEventsTable>>) =>
  db.insertInto('issuer_offer_events').values({
    offer_id: param('offer_id'),
    event: param('event'),
    status: param('status'),
    at: param('at'),
  }),
);

export const recordOfferEvent = async (db: Kysely<Database>, row: Insertable<IssuerOfferEventsTable>) => {
  await insertOfferEvent(db, row);
};

export const offerEventsOf = (db: Kysely<Database>, offerId: string) =>
  db
    .selectFrom('issuer_offer_events')
    .select(['event', 'status', 'at'])
    .where('offer_id', '=', offerId)
    .orderBy('event_pk')
    .execute();

/** Issued credentials per page of the tenant's list. */
export const ISSUED_PAGE = 1000;

/**
 * A page of a tenant's issued credentials in issuance order, after the row `after` when given
 * (keyset paging on the (client_id, issued_at, id) index: each page costs the same however deep).
 * Answers up to `limit` + 1 rows, the extra one saying that another page follows.
 */
export const issuedCredentialsOf = (
  db: Kysely<Database>,
  clientId: number,
  offerId?: string,
  after?: { issuedAt: string; id: string },
  limit = ISSUED_PAGE,
) => {
  let query = db.selectFrom('issued_credentials').selectAll().where('client_id', '=', clientId);
  if (offerId !== undefined) query = query.where('offer_id', '=', offerId);
  if (after !== undefined)
    query = query.where((eb) => eb(eb.refTuple('issued_at', 'id'), '>', eb.tuple(after.issuedAt, after.id)));
  return query
    .orderBy('issued_at')
    .orderBy('id')
    .limit(limit + 1)
    .execute();
};

const insertNonceRow = prepareQuery(
  (db, param: Param<{ verifier: string; nonce: string; expiresAt: number }>) =>
    db.insertInto('verifier_nonces').values({
      verifier: param('verifier'),
      nonce: param('nonce'),
      expires_at: param('expiresAt'),
    }),
);

/** A c_nonce accepted by the credential endpoint; a unique violation when it was accepted before. */
export const insertUsedCNonce = async (
  db: Kysely<Database>,
  row: { verifier: string; nonce: string; expiresAt: number },
) => {
  await insertNonceRow(db, row);
};

/**
 * An offer that expired unredeemed keeps no claims (they were kept only to be issued); authorization
 * codes past their life are deleted, and retired keys nothing can still be checked against.
 */
export async function sweepExpired(db: Kysely<Database>, now: Date, batch = SWEEP_BATCH): Promise<void> {
  const nowIso = now.toISOString();
  // Batches through the (status, expires_at) index of migration 0024: linear in the expired
  // offers, never in the table, and each UPDATE is short.
  await untilShort(batch, async () => {
    const result = await db
      .updateTable('issuer_offers')
      .set({ claims_sealed: null })
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('issuer_offers')
          .select('id')
          .where('status', '=', 'offered')
          .where('expires_at', '<=', nowIso)
          .where('claims_sealed', 'is not', null)
          .limit(batch),
      )
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  });
  const nowSeconds = Math.floor(now.getTime() / 1000);
  await deleteExpiredInBatches(db, 'issuer_codes', ['code_hash'], nowSeconds + 1, batch);
  // Used c_nonces are verifier_nonces rows: the minute sweep (oidc/expired-rows.ts) deletes them.
  await dropSpentRetiredKeys(db, now);
}

/**
 * An earlier issuer key and its status lists go once no credential on those lists can still be
 * checked: every one has expired (a credential of unknown expiry keeps them). A list or key
 * touched within the hour is left alone, so a request that opened the key just before it was
 * replaced still finds its list.
 */
export async function dropSpentRetiredKeys(db: Kysely<Database>, now: Date): Promise<void> {
  const nowIso = now.toISOString();
  const anHourAgo = new Date(now.getTime() - 3_600_000).toISOString();
  await db
    .deleteFrom('status_lists')
    .where('updated_at', '<', anHourAgo)
    .where('signing_key_id', 'in', (eb) => eb.selectFrom('issuer_retired_keys').select('id'))
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('issued_credentials as c')
            .select('c.id')
            .whereRef('c.status_list_id', '=', 'status_lists.id')
            .where((eb) => eb.or([eb('c.expires_at', 'is', null), eb('c.expires_at', '>', nowIso)])),
        ),
      ),
    )
    .execute();
  await db
    .deleteFrom('issuer_retired_keys')
    .where('retired_at', '<', anHourAgo)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('status_lists as l')
            .select('l.id')
            .whereRef('l.signing_key_id', '=', 'issuer_retired_keys.id'),
        ),
      ),
    )
    .execute();
}

/** An issued credential's notification: its offer and the last event the wallet sent for it. */
export const findNotification = (db: Kysely<Database>, notificationId: string) =>
  db
    .selectFrom('issued_credentials')
    .select(['offer_id', 'notification_event'])
    .where('notification_id', '=', notificationId)
    .executeTakeFirst();

/**
 * Records a notification's event only after the one it may follow (`after`, or none yet), in one
 * statement; false when the notification is elsewhere (a repeat, a race, an event out of order).
 */
export async function recordNotificationEvent(
  db: Kysely<Database>,
  notificationId: string,
  event: string,
  after: string | null,
): Promise<boolean> {
  const result = await db
    .updateTable('issued_credentials')
    .set({ notification_event: event })
    .where('notification_id', '=', notificationId)
    .where('notification_event', after === null ? 'is' : '=', after)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The offer statuses a notification moves on from: only forward, once everything was issued. */
const NOTIFIED_FROM = {
  accepted: ['issued'],
  failed: ['issued'],
  deleted: ['issued', 'accepted', 'failed'],
} as const;

export async function advanceOfferStatus(
  db: Kysely<Database>,
  offerId: string,
  status: keyof typeof NOTIFIED_FROM,
): Promise<void> {
  await db
    .updateTable('issuer_offers')
    .set({ status })
    .where('id', '=', offerId)
    .where('status', 'in', [...NOTIFIED_FROM[status]])
    .execute();
}
