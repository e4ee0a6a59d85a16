import type { X509Certificate } from 'node:crypto';
import { type DeletionDeps, deleteCredential } from '../credentials/credential-deletion.ts';
import { credentialContext } from '../credentials/credential-service.ts';
import { openIssuerDisplay } from '../credentials/held-credential-contexts.ts';
import {
  countWalletCredentials,
  findClientNames,
  findWalletCredential,
  findWalletCredentials,
  type WalletCredentialRow,
} from '../credentials/held-credential-repository.ts';
import { type HistoryEvent, typesOf } from '../credentials/history-events.ts';
import { notFound } from '../errors.ts';
import type { CredentialSummary, ParseContext } from '../formats/credential-format.ts';
import {
  claimDisplayName,
  credentialTypeName,
  issuerName,
  namesInCredential,
} from '../formats/display-names.ts';
import type { FormatRegistry } from '../formats/registry.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';
import type { IssuerDisplay } from '../oid4vci/issuance-offer.ts';
import type { StatusChecker, StatusOutcome } from '../status/status-checker.ts';
import type { UserIdentity } from '../users/user-repository.ts';
import { type ClaimLine, claimLines } from './claim-lines.ts';
import { readHistory } from './wallet-history.ts';

/** What the person's page reads with; oid4vp/presentation-service.ts has the presentations' own. */
export interface WalletPageDeps extends DeletionDeps {
  /** Opens the sealed issuer displays and the history. */
  cipher: FieldCipher;
  formats: FormatRegistry;
  issuerTrustAnchors: X509Certificate[];
  status: StatusChecker;
  now: () => Date;
}

/** One credential as the person's page shows it. */
export interface WalletCredential {
  /** The row's key: what the page's delete control names. */
  key: number;
  id: string;
  format: string;
  types: string[];
  /** The type as a person reads it (formats/display-names.ts): the page's title. */
  typeName: string;
  issuer: {
    name: string;
    identifier: string;
    /** The issuer as a person reads it: its display name, certificate organisation, else `shortIdentifier`. */
    label: string;
    /** The identifier shortened for beside the label; null where the label already is it. */
    shortIdentifier: string | null;
    logo: IssuerDisplay['logo'];
    certificate: { subject: string; trusted: boolean } | null;
  };
  /** Who put it into the wallet: the issuer (OpenID4VCI) or the app (client) that stored it. */
  receivedFrom: string;
  receivedAt: string;
  account: { did: string; tenant: string };
  validFrom: string | null;
  validUntil: string | null;
  validity: 'valid' | 'expired' | 'not_yet_valid';
  /** Null when the credential has no status entry. */
  status: StatusOutcome | null;
  claims: ClaimLine[];
}

/** A history event with the credential's type as a person reads it (as on its card while it is held). */
export type WalletHistoryEvent = HistoryEvent & { credential: { typeName: string } };

/**
 * The page shows the newest credentials only: each is a block to read and decrypt, and a person
 * with thousands (tickets, receipts) would wait seconds for a page nobody scrolls; the export has all.
 */
export const CREDENTIALS_SHOWN = 200;

export interface WalletView {
  /** The newest CREDENTIALS_SHOWN. */
  credentials: WalletCredential[];
  /** How many the person's accounts hold in all. */
  credentialsHeld: number;
  /** Newest first, with the apps' names resolved. */
  history: WalletHistoryEvent[];
}

function validityOf(summary: CredentialSummary, now: Date): WalletCredential['validity'] {
  if (summary.validFrom !== null && new Date(summary.validFrom) > now) return 'not_yet_valid';
  if (summary.validUntil !== null && new Date(summary.validUntil) <= now) return 'expired';
  return 'valid';
}

async function describe(
  deps: WalletPageDeps,
  row: WalletCredentialRow,
  names: Map<number, string>,
  context: ParseContext,
): Promise<WalletCredential> {
  const stored = await deps.store.getEncrypted(row.cid, credentialContext(row.did));
  const format = deps.formats.get(row.format);
  const summary = format.summarize(stored, context);
  const reference = format.statusReference(stored, context);
  const display = openIssuerDisplay(deps.cipher, row);
  const certificate = summary.issuerCertificate;
  const identifier = row.credential_issuer ?? summary.issuer;
  const named = namesInCredential(row.format, summary.claims);
  const readable = issuerName({
    id: identifier,
    displayName: display?.name ?? named.issuer,
    certificateSubject: certificate?.subject,
  });
  return {
    key: row.credential_pk,
    id: row.credential_id,
    format: row.format,
    types: typesOf(summary.type),
    typeName: credentialTypeName({
      type: summary.type,
      displayName: display?.credential_name ?? named.credential,
    }),
    issuer: {
      name: display?.name ?? certificate?.subject ?? summary.issuer,
      identifier,
      label: readable.label,
      shortIdentifier: readable.short,
      logo: display?.logo ?? null,
      certificate: certificate && { subject: certificate.subject, trusted: certificate.trusted },
    },
    receivedFrom:
      row.credential_issuer !== null
        ? (display?.name ?? row.credential_issuer)
        : (names.get(row.issuer_client_id ?? -1) ?? 'an app'),
    receivedAt: row.created_at,
    account: { did: row.did, tenant: names.get(row.tenant_id) ?? `tenant ${row.tenant_id}` },
    validFrom: summary.validFrom,
    validUntil: summary.validUntil,
    validity: validityOf(summary, context.now),
    status: reference ? await deps.status.check(reference) : null,
    claims: claimLines(summary.claims, (path) => claimDisplayName(display?.claim_names ?? [], path)),
  };
}

/**
 * What the wallet page shows: the newest credentials of every account of the person
 * (CREDENTIALS_SHOWN), how many they hold in all, their history, newest first, and the accounts
 * with their tenants and counts. One count and one read of client names serve all of it.
 */
export async function walletContent(
  deps: WalletPageDeps,
  accounts: UserIdentity[],
): Promise<{ view: WalletView; accounts: WalletAccount[] }> {
  const userIds = accounts.map((a) => a.user_id);
  const [rows, held, history] = await Promise.all([
    findWalletCredentials(deps.db, userIds, CREDENTIALS_SHOWN),
    countWalletCredentials(deps.db, userIds),
    readHistory(deps, accounts),
  ]);
  const clientIds = new Set<number>(accounts.map((a) => a.tenant_id));
  for (const row of rows) {
    clientIds.add(row.tenant_id);
    if (row.issuer_client_id !== null) clientIds.add(row.issuer_client_id);
  }
  for (const event of history) {
    if (event.kind === 'arrival' && event.from.via === 'api') clientIds.add(Number(event.from.identifier));
  }
  const names = await findClientNames(deps.db, [...clientIds]);
  const context = { now: deps.now(), issuerTrustAnchors: deps.issuerTrustAnchors };
  const credentials = await Promise.all(rows.map((row) => describe(deps, row, names, context)));
  const typeNames = new Map(credentials.map((c) => [c.id, c.typeName]));
  const named = (event: HistoryEvent): WalletHistoryEvent => ({
    ...event,
    credential: {
      ...event.credential,
      typeName: typeNames.get(event.credential.id) ?? credentialTypeName({ type: event.credential.types }),
    },
  });
  const view: WalletView = {
    credentials,
    credentialsHeld: [...held.values()].reduce((sum, count) => sum + count, 0),
    history: history.map((event) =>
      named(
        event.kind === 'arrival' && event.from.via === 'api'
          ? { ...event, from: { ...event.from, name: names.get(Number(event.from.identifier)) ?? 'an app' } }
          : event,
      ),
    ),
  };
  return {
    view,
    accounts: accounts.map((account) => ({
      key: account.user_id,
      tenant: names.get(account.tenant_id) ?? `tenant ${account.tenant_id}`,
      credentials: held.get(account.user_id) ?? 0,
    })),
  };
}

/** The wallet page's delete: only a credential of one of the person's accounts (404 otherwise). */
export async function deleteWalletCredential(
  deps: WalletPageDeps,
  accounts: UserIdentity[],
  credentialPk: number,
): Promise<void> {
  const row = await findWalletCredential(
    deps.db,
    accounts.map((a) => a.user_id),
    { credentialPk },
  );
  if (!row) throw notFound('The credential');
  await deleteCredential(deps, row);
}

/** One of the person's accounts as the page lists it, with its own "Delete this account". */
export interface WalletAccount {
  key: number;
  tenant: string;
  credentials: number;
}
