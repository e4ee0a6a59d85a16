import {
  createHmac,
  createSecretKey,
  type JsonWebKey,
  type KeyObject,
  type X509Certificate,
} from 'node:crypto';
import * as dagCbor from '@ipld/dag-cbor';
import type { Kysely } from 'kysely';
import type { ApiCaller } from '../clients/client-repository.ts';
import { isUniqueViolation, now } from '../db/dialect.ts';
import type { Database } from '../db/schema.ts';
import { CofferError, conflict, notFound } from '../errors.ts';
import {
  type CredentialFormat,
  type FormatId,
  type HolderReference,
  type ParseContext,
  rejected,
} from '../formats/credential-format.ts';
import type { Bbs2023Operations } from '../formats/ldp-vc/bbs-2023/operations.ts';
import type { SecuredDocument } from '../formats/ldp-vc/bbs-2023/shared.ts';
import { checkPointer, disclosedPointers } from '../formats/ldp-vc/ldp-vc-rules.ts';
import type { FormatRegistry } from '../formats/registry.ts';
import { SHAPE_DESCRIPTIONS, shapeOf } from '../formats/value-shape.ts';
import { didKeyFromEd25519PublicKey } from '../keys/holder-key.ts';
import type { EncryptedStore } from '../storage/index.ts';
import { findUserByDid, findUsersByWalletInTenantsOf, type UserIdentity } from '../users/user-repository.ts';
import {
  type CredentialInserter,
  type CredentialRow,
  findCredential,
  findCredentials,
  listCredentials,
} from './credential-repository.ts';
import type {
  CredentialListEntry,
  PresentationBody,
  StoreCredentialBody,
  StoredVc,
} from './credential-schemas.ts';
import { type HistoryEntry, typesOf } from './history-events.ts';

export interface CredentialDeps {
  db: Kysely<Database>;
  store: EncryptedStore;
  /** Key of the content hash (derived from the current master key). */
  contentKey: Uint8Array;
  /** The same key derived from the previous master keys, while a rotation rewrites the hashes. */
  previousContentKeys?: readonly Uint8Array[];
  /** bbs-2023 verification and derivation, in this thread or in worker threads. */
  operations: Bbs2023Operations;
  /** The credential and its arrival in the wallet history, in one commit (credential-repository.ts). */
  insertCredential: CredentialInserter;
  formats: FormatRegistry;
  /** ISSUER_TRUST_ANCHORS: issuer certificates that chain to one are marked trusted. */
  issuerTrustAnchors: X509Certificate[];
  now?: () => Date;
}

export const parseContext = (deps: CredentialDeps): ParseContext => ({
  now: deps.now?.() ?? new Date(),
  issuerTrustAnchors: deps.issuerTrustAnchors,
});

type Credential = Record<string, unknown>;

/** The block context of a credential: its owner is the holder's DID. */
export const credentialContext = (did: string) => ({ owner: did, kind: 'credential' });

/** The block context of what the store's check kept for later presentations (CredentialCheck). */
export const preparedContext = (did: string) => ({ owner: did, kind: 'credential-prepared' });

/** What the store's check kept for this credential, or undefined (none kept, or unreadable). */
export async function readPrepared(
  store: EncryptedStore,
  did: string,
  preparedCid: string | null,
): Promise<unknown> {
  if (preparedCid === null) return undefined;
  // Only ever a saving: a block that cannot be read leaves the presentation computed in full.
  return store.getEncrypted(preparedCid, preparedContext(did)).catch(() => undefined);
}

/**
 * A keyed hash of the credential's content: dag-cbor orders map keys, so the same credential
 * with its members in another order hashes alike. Keyed, so that the column says nothing about
 * low-entropy claims to whoever reads the database.
 */
export function contentHash(deps: Pick<CredentialDeps, 'contentKey'>, vc: unknown): string {
  return createHmac('sha256', contentKeyObject(deps.contentKey))
    .update(dagCbor.encode(vc))
    .digest('base64url');
}

/** Whether `stored` is the hash of the content under the current or a previous content key. */
export function sameContent(
  deps: Pick<CredentialDeps, 'contentKey' | 'previousContentKeys'>,
  vc: unknown,
  stored: string,
): boolean {
  if (stored === contentHash(deps, vc)) return true;
  return (deps.previousContentKeys ?? []).some((contentKey) => stored === contentHash({ contentKey }, vc));
}

/** The content key as a KeyObject, made once: createHmac imports raw key bytes at every call (~7 µs). */
const contentKeyObjects = new WeakMap<Uint8Array, KeyObject>();
function contentKeyObject(key: Uint8Array): KeyObject {
  let keyObject = contentKeyObjects.get(key);
  if (keyObject === undefined) {
    keyObject = createSecretKey(key);
    contentKeyObjects.set(key, keyObject);
  }
  return keyObject;
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

/**
 * The account whose hosted key a credential binds (SD-JWT `cnf.jwk`, mdoc `deviceKey`). Like its
 * did:key, the key names one account in the whole deployment, whichever tenant stores for it.
 */
async function keyHolderOf(deps: CredentialDeps, jwk: JsonWebKey): Promise<UserIdentity> {
  // Anything but a public 32-byte Ed25519 key cannot be a hosted one (the value may be any bytes).
  const x =
    jwk.kty === 'OKP' && jwk.crv === 'Ed25519' && typeof jwk.x === 'string' && jwk.d === undefined
      ? Buffer.from(jwk.x, 'base64url')
      : undefined;
  const hosted = x?.length === 32 ? await findUserByDid(deps.db, didKeyFromEd25519PublicKey(x)) : undefined;
  if (!hosted) throw rejected("its holder key (cnf / deviceKey) is not a user's hosted holder key");
  return hosted;
}

const holderOf = (deps: CredentialDeps, caller: ApiCaller, holder: HolderReference) =>
  holder.kind === 'did' ? subjectOf(deps, caller, holder.did) : keyHolderOf(deps, holder.jwk);

/**
 * The format of a store body: as named (the value must have its shape, value-shape.ts; any
 * other is 400, whatever it decodes to), else recognised by the value's shape.
 */
function formatOfBody(deps: CredentialDeps, body: StoreCredentialBody): CredentialFormat {
  if (body.format !== undefined) {
    const format = deps.formats.get(body.format);
    const shape = shapeOf(body.vc);
    if (shape !== format.shape) {
      const formatsOfShape = deps.formats.all
        .filter((other) => other.shape === shape)
        .map((other) => other.id);
      const given =
        shape === null
          ? 'has the shape of no credential format'
          : `is ${SHAPE_DESCRIPTIONS[shape]}${formatsOfShape.length > 0 ? `, the shape of ${formatsOfShape.join(' or ')}` : ''}`;
      throw new CofferError(
        'invalid_request',
        `vc does not fit format ${format.id}, which takes ${SHAPE_DESCRIPTIONS[format.shape]}: vc ${given}.`,
        { details: [{ path: '/body/format', message: `does not fit the value of vc` }] },
      );
    }
    return format;
  }
  const format = deps.formats.recognise(body.vc);
  if (!format) {
    throw new CofferError(
      'invalid_request',
      'vc is a string of no credential format Coffer knows (dc+sd-jwt, mso_mdoc, jwt_vc_json); name its format.',
      { details: [{ path: '/body/vc', message: 'has no recognised credential format' }] },
    );
  }
  return format;
}

/**
 * Runs a format's parsing or verification of an untrusted value: a failure that is not already a
 * refusal (a library choking on a malformed structure) is one too, never a 500.
 */
export async function readable<T>(format: CredentialFormat, step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof CofferError) throw error;
    throw rejected(`it cannot be read as a ${format.id} credential`);
  }
}

export interface StoredCredential {
  /** False when exactly this credential was stored before (its CID is returned again). */
  created: boolean;
  data: { cid: string; format: FormatId; vc: StoredVc | string };
}

/** Verifies a credential for one of the service's users and keeps it, encrypted, for them. */
export async function storeCredential(
  deps: CredentialDeps,
  caller: ApiCaller,
  body: StoreCredentialBody,
): Promise<StoredCredential> {
  const format = formatOfBody(deps, body);
  const parsed = await readable(format, () => format.parse(body.vc, parseContext(deps)));
  const user = await holderOf(deps, caller, parsed.holder);
  const credentialId = parsed.summary.id;
  const hash = contentHash(deps, parsed.stored);
  const answer = (cid: string) => ({
    cid,
    format: format.id,
    vc: (format.id === 'ldp_vc' ? format.listEntry(parsed.stored, parsed.summary) : parsed.stored) as
      | StoredVc
      | string,
  });
  const same = (row: CredentialRow) => {
    if (row.content_hash !== hash && !sameContent(deps, parsed.stored, row.content_hash)) {
      throw conflict(`Another credential with id ${credentialId} is already stored for this subject.`);
    }
    return { created: false, data: answer(row.cid) };
  };

  const existing = await findCredential(deps.db, user.user_id, credentialId);
  if (existing) return same(existing);
  const checked = await readable(format, () => parsed.verify());

  // The prepared statements only save a later presentation work (readPrepared does without
  // them), so their block is not waited onto the disk: two fsyncs and five file calls fewer.
  const [cid, preparedCid] = await Promise.all([
    deps.store.putEncrypted(parsed.stored, credentialContext(user.did)),
    checked.prepared === undefined
      ? null
      : deps.store.putEncrypted(checked.prepared, preparedContext(user.did), { durable: false }),
  ]);
  const arrival: HistoryEntry = {
    account: user,
    event: {
      kind: 'arrival',
      at: (deps.now?.() ?? new Date()).toISOString(),
      credential: { id: credentialId, format: format.id, types: typesOf(parsed.summary.type) },
      // The client's name is read when the history is shown, so a renamed client shows its new name.
      from: { name: '', via: 'api', identifier: String(caller.clientId) },
    },
  };
  try {
    await deps.insertCredential(
      {
        user_id: user.user_id,
        credential_id: credentialId,
        cid,
        content_hash: hash,
        issuer_client_id: caller.clientId,
        created_at: now(),
        format: format.id,
        prepared_cid: preparedCid,
      },
      arrival,
    );
  } catch (error) {
    // A concurrent store of the same id won the unique index; answer as if it came first.
    const winner = isUniqueViolation(error)
      ? await findCredential(deps.db, user.user_id, credentialId)
      : undefined;
    if (winner) return same(winner);
    throw error;
  }
  return { created: true, data: answer(cid) };
}

async function readCredential(
  deps: CredentialDeps,
  user: UserIdentity,
  row: CredentialRow,
): Promise<unknown> {
  return deps.store.getEncrypted(row.cid, credentialContext(user.did));
}

/**
 * Every credential of the user, newest first: an ldp_vc as issued (credentialStatus as given or
 * null), any other format as its summary with the stored value (DESIGN.md, List).
 */
export async function listUserCredentials(
  deps: CredentialDeps,
  user: UserIdentity,
): Promise<CredentialListEntry[]> {
  const rows = await listCredentials(deps.db, user.user_id);
  const context = parseContext(deps);
  return Promise.all(
    rows.map(async (row) => {
      const stored = await readCredential(deps, user, row);
      const format = deps.formats.get(row.format);
      return format.listEntry(stored, format.summarize(stored, context)) as CredentialListEntry;
    }),
  );
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
  const other = requested.find(([id]) => rows.get(id)!.format !== 'ldp_vc');
  if (other) {
    throw new CofferError(
      'invalid_request',
      `Credential ${other[0]} is a ${rows.get(other[0])!.format} credential; this endpoint derives bbs-2023 proofs only. Present it to a verifier through OpenID4VP (GET /v1/oid4vp/authorize).`,
    );
  }

  const [documents, prepared] = await Promise.all([
    Promise.all(requested.map(([id]) => readCredential(deps, user, rows.get(id)!))) as Promise<Credential[]>,
    Promise.all(requested.map(([id]) => readPrepared(deps.store, user.did, rows.get(id)!.prepared_cid))),
  ]);
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
        prepared[i],
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
