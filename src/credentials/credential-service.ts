import { createHmac } from 'node:crypto';
import * as dagCbor from '@ipld/dag-cbor';
import type { Kysely } from 'kysely';
import type { ApiCaller } from '../clients/client-repository.ts';
import { isUniqueViolation, now } from '../db/dialect.ts';
import type { Database } from '../db/schema.ts';
import { conflict, notFound } from '../errors.ts';
import type { EncryptedStore } from '../storage/index.ts';
import { findUserByDid, findUsersByWalletInTenantsOf, type UserIdentity } from '../users/user-repository.ts';
import type { Bbs2023Operations } from './bbs-2023/operations.ts';
import type { SecuredDocument } from './bbs-2023/shared.ts';
import {
  type CredentialInserter,
  type CredentialRow,
  findCredential,
  findCredentials,
  listCredentials,
} from './credential-repository.ts';
import { checkCredential, checkPointer, disclosedPointers, rejected } from './credential-rules.ts';
import type { PresentationBody, StoredVc } from './credential-schemas.ts';

export interface CredentialDeps {
  db: Kysely<Database>;
  store: EncryptedStore;
  /** Key of the content hash (derived from the master key). */
  contentKey: Uint8Array;
  /** bbs-2023 verification and derivation, in this thread or in worker threads. */
  operations: Bbs2023Operations;
  /** insertCredential, with group commit on SQLite (credential-repository.ts). */
  insertCredential: CredentialInserter;
  now?: () => Date;
}

type Credential = Record<string, unknown>;

/** The block context of a credential: its owner is the holder's DID. */
export const credentialContext = (did: string) => ({ owner: did, kind: 'credential' });

/**
 * A keyed hash of the credential's content: dag-cbor orders map keys, so the same credential
 * with its members in another order hashes alike. Keyed, so that the column says nothing about
 * low-entropy claims to whoever reads the database.
 */
function contentHash(deps: CredentialDeps, vc: Credential): string {
  return createHmac('sha256', deps.contentKey).update(dagCbor.encode(vc)).digest('base64url');
}

const DID_PKH_EIP155 = /^did:pkh:eip155:([1-9]\d{0,18}):(0x[0-9a-fA-F]{40})$/;

/**
 * The account a credential is about: a user's did:key anywhere in the deployment, or the
 * did:pkh of a wallet held by exactly one account in the caller's tenants.
 */
async function subjectOf(deps: CredentialDeps, caller: ApiCaller, subject: string): Promise<UserIdentity> {
  const pkh = DID_PKH_EIP155.exec(subject);
  if (!pkh) {
    const user = await findUserByDid(deps.db, subject);
    if (!user) throw rejected(`its subject ${subject} is not a user of this service`);
    return user;
  }
  const users = await findUsersByWalletInTenantsOf(deps.db, caller.clientId, pkh[2]!.toLowerCase(), pkh[1]!);
  if (users.length === 0)
    throw rejected(`its subject ${subject} is not the wallet of a user in your tenants`);
  if (users.length > 1) {
    throw rejected(
      `its subject ${subject} is the wallet of several accounts; issue it to the account's did:key`,
    );
  }
  return users[0]!;
}

async function verifyIssuerProof(deps: CredentialDeps, document: SecuredDocument, publicKey: Uint8Array) {
  const result = await deps.operations.verifyBaseProof(document, publicKey);
  if (!result.ok) throw rejected(result.reason);
}

const withStatus = (vc: Credential) =>
  ({ ...vc, credentialStatus: vc['credentialStatus'] ?? null }) as StoredVc;

export interface StoredCredential {
  /** False when exactly this credential was stored before (its CID is returned again). */
  created: boolean;
  data: { cid: string; vc: StoredVc };
}

/** Verifies a credential for one of the service's users and keeps it, encrypted, for them. */
export async function storeCredential(
  deps: CredentialDeps,
  caller: ApiCaller,
  vc: Credential,
): Promise<StoredCredential> {
  const checked = checkCredential(vc, deps.now?.() ?? new Date());
  const user = await subjectOf(deps, caller, checked.subject);
  const hash = contentHash(deps, vc);
  const same = (row: CredentialRow) => {
    if (row.content_hash !== hash) {
      throw conflict(
        `Another credential with id ${checked.credentialId} is already stored for this subject.`,
      );
    }
    return { created: false, data: { cid: row.cid, vc: withStatus(vc) } };
  };

  const existing = await findCredential(deps.db, user.user_id, checked.credentialId);
  if (existing) return same(existing);
  await verifyIssuerProof(deps, checked.document, checked.issuerKey.publicKey);

  const cid = await deps.store.putEncrypted(vc, credentialContext(user.did));
  try {
    await deps.insertCredential({
      user_id: user.user_id,
      credential_id: checked.credentialId,
      cid,
      content_hash: hash,
      issuer_client_id: caller.clientId,
      created_at: now(),
    });
  } catch (error) {
    // A concurrent store of the same id won the unique index; answer as if it came first.
    const winner = isUniqueViolation(error)
      ? await findCredential(deps.db, user.user_id, checked.credentialId)
      : undefined;
    if (winner) return same(winner);
    throw error;
  }
  return { created: true, data: { cid, vc: withStatus(vc) } };
}

async function readCredential(
  deps: CredentialDeps,
  user: UserIdentity,
  row: CredentialRow,
): Promise<Credential> {
  return (await deps.store.getEncrypted(row.cid, credentialContext(user.did))) as Credential;
}

/** Every credential of the user, newest first, as issued (credentialStatus as given or null). */
export async function listUserCredentials(deps: CredentialDeps, user: UserIdentity): Promise<StoredVc[]> {
  const rows = await listCredentials(deps.db, user.user_id);
  const credentials = await Promise.all(rows.map((row) => readCredential(deps, user, row)));
  return credentials.map(withStatus);
}

const pointerPath = (credentialId: string, index: number) =>
  `/body/vcIdFields/${credentialId.replaceAll('~', '~0').replaceAll('/', '~1')}/${index}`;

/**
 * A presentation: for each chosen credential a bbs-2023 derived credential revealing its
 * mandatory statements, its issuer and validity, and the chosen fields, bound to the verifier's
 * presentation header; annotated with what it reveals, as the contract asks.
 */
export async function presentCredentials(deps: CredentialDeps, user: UserIdentity, body: PresentationBody) {
  const requested = Object.entries(body.vcIdFields);
  const rows = new Map(
    (
      await findCredentials(
        deps.db,
        user.user_id,
        requested.map(([id]) => id),
      )
    ).map((row) => [row.credential_id, row]),
  );
  const missing = requested.find(([id]) => !rows.has(id));
  if (missing) throw notFound(`Credential ${missing[0]}`);

  const documents = await Promise.all(requested.map(([id]) => readCredential(deps, user, rows.get(id)!)));
  const pointers = requested.map(([id, chosen], i) => {
    chosen.forEach((pointer, j) => {
      checkPointer(documents[i]!, pointer, pointerPath(id, j));
    });
    return disclosedPointers(documents[i]!, chosen);
  });
  const header = new TextEncoder().encode(body.options?.presentationHeader ?? '');

  const credentials = await Promise.all(
    documents.map(async (document, i) => {
      const disclosure = await deps.operations.deriveDisclosure(
        document as SecuredDocument,
        pointers[i]!,
        header,
      );
      return {
        ...disclosure.credential,
        proof: {
          ...disclosure.credential.proof,
          revealedPointers: [...new Set([...disclosure.mandatoryPointers, ...pointers[i]!])],
          revealedIndices: disclosure.revealedIndexes,
        },
      };
    }),
  );
  return { holder: user.did, credentials };
}
