/**
 * What the wallet history records (wallet/wallet-history.ts keeps it sealed and the wallet page
 * shows it). The store, OpenID4VCI and OpenID4VP make these events and are handed a recorder at
 * start (src/app.ts), so none of them reaches into the wallet.
 */

export interface CredentialRef {
  id: string;
  format: string;
  types: string[];
}

export interface PresentationEvent {
  kind: 'presentation';
  at: string;
  credential: CredentialRef;
  verifier: { name: string; client_id: string; certificate_subject: string | null };
  /** The claims paths disclosed, as the request named them. */
  claims: unknown[][];
  outcome: 'delivered' | 'failed';
  reason?: string;
}

export interface ArrivalEvent {
  kind: 'arrival';
  at: string;
  credential: CredentialRef;
  /** An API client of a tenant, or a credential issuer by OpenID4VCI. */
  from: { name: string; via: 'api' | 'oid4vci'; identifier: string };
}

export type HistoryEvent = PresentationEvent | ArrivalEvent;

/** One event of one account. */
export interface HistoryEntry {
  account: { user_id: number; did: string };
  event: HistoryEvent;
}

/** Writes events of one or several accounts at once. */
export type RecordHistory = (entries: HistoryEntry[]) => Promise<void>;

/** A credential's types as the history names them (without the generic VerifiableCredential). */
export const typesOf = (type: string | string[]) =>
  (Array.isArray(type) ? type : [type]).filter((t) => t !== 'VerifiableCredential');
