import { createHash, randomBytes } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { Dialect } from '../db/dialect.ts';
import { createGroupCommit } from '../db/group-commit.ts';
import { type Param, prepareQuery } from '../db/prepared-query.ts';
import type { Database, RefreshTokensTable } from '../db/schema.ts';
import { generateSecret, hashSecret } from '../keys/secrets.ts';

/**
 * Refresh tokens (DESIGN.md, Tokens): opaque, kept as hashes, one row per token. The tokens that
 * rotation makes from one log-in form a family; the family's end is fixed at the log-in.
 */
export type RefreshTokenRow = Selectable<RefreshTokensTable>;

export interface RefreshGrant {
  clientId: number;
  userId: number;
  scope: string;
  authTime: number;
  loginType: string;
  did: string;
  walletAddress: string | null;
  /** The DPoP key the token is bound to (public clients), else null. */
  jkt: string | null;
  /** The jti of the access token issued beside it (revoked with the family); else derived from the token. */
  accessJti?: string;
  /** The family to start; else a random one. */
  familyId?: string;
  /** The disclosed claims of a credential log-in, sealed as on the code. */
  claimsSealed?: string | null;
}

/** The jti of an access token issued beside a refresh token, derived so the family can name it. */
export const jtiForRefreshToken = (tokenHash: string) =>
  createHash('sha256').update(`jti:rt:${tokenHash}`).digest('base64url');

/** Starts a family: the first refresh token of a log-in. */
export async function issueRefreshToken(
  db: Kysely<Database>,
  grant: RefreshGrant,
  nowSeconds: number,
  ttlSeconds: number,
): Promise<string> {
  const token = generateSecret('refresh_token');
  const tokenHash = hashSecret(token);
  await db
    .insertInto('refresh_tokens')
    .values({
      token_hash: tokenHash,
      family_id: grant.familyId ?? randomBytes(16).toString('base64url'),
      client_id: grant.clientId,
      user_id: grant.userId,
      scope: grant.scope,
      auth_time: grant.authTime,
      login_type: grant.loginType,
      did: grant.did,
      wallet_address: grant.walletAddress,
      jkt: grant.jkt,
      access_jti: grant.accessJti ?? jtiForRefreshToken(tokenHash),
      created_at: nowSeconds,
      expires_at: nowSeconds + ttlSeconds,
      used_at: null,
      revoked_at: null,
      claims_sealed: grant.claimsSealed ?? null,
    })
    .execute();
  return token;
}

// Every refresh runs these three, so they are compiled once (db/prepared-query.ts).
const selectRefreshToken = prepareQuery((db, param: Param<{ tokenHash: string }>) =>
  db.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', param('tokenHash')),
);

const markRefreshTokenUsed = prepareQuery((db, param: Param<{ tokenHash: string; nowSeconds: number }>) =>
  db
    .updateTable('refresh_tokens')
    .set({ used_at: param('nowSeconds') })
    .where('token_hash', '=', param('tokenHash'))
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .returningAll(),
);

const insertRefreshToken = prepareQuery((db, param: Param<RefreshTokenRow>) =>
  db.insertInto('refresh_tokens').values({
    token_hash: param('token_hash'),
    family_id: param('family_id'),
    client_id: param('client_id'),
    user_id: param('user_id'),
    scope: param('scope'),
    auth_time: param('auth_time'),
    login_type: param('login_type'),
    did: param('did'),
    wallet_address: param('wallet_address'),
    jkt: param('jkt'),
    access_jti: param('access_jti'),
    created_at: param('created_at'),
    expires_at: param('expires_at'),
    used_at: param('used_at'),
    revoked_at: param('revoked_at'),
    claims_sealed: param('claims_sealed'),
  }),
);

export async function findRefreshToken(db: Kysely<Database>, tokenHash: string) {
  return (await selectRefreshToken(db, { tokenHash }))[0];
}

/** The successor of a rotated token; its access token's jti is derived from its hash. */
export interface Successor {
  token: string;
  tokenHash: string;
}

export type RefreshTokenRotator = (
  used: RefreshTokenRow,
  nowSeconds: number,
) => Promise<Successor | undefined>;

/**
 * Marks a token used and inserts its successor (the same grant, family and end) in one
 * transaction. The mark is a conditional update, so of many concurrent uses (on one instance or
 * several) exactly one gets a successor; the others get undefined and treat it as reuse.
 */
export function createRefreshTokenRotator(db: Kysely<Database>, dialect: Dialect): RefreshTokenRotator {
  const rotate = async (
    tx: Kysely<Database>,
    item: { used: RefreshTokenRow; nowSeconds: number },
  ): Promise<Successor | undefined> => {
    const [marked] = await markRefreshTokenUsed(tx, {
      tokenHash: item.used.token_hash,
      nowSeconds: item.nowSeconds,
    });
    if (!marked) return undefined;
    const token = generateSecret('refresh_token');
    const tokenHash = hashSecret(token);
    await insertRefreshToken(tx, {
      ...marked,
      token_hash: tokenHash,
      access_jti: jtiForRefreshToken(tokenHash),
      created_at: item.nowSeconds,
      used_at: null,
    });
    return { token, tokenHash };
  };
  // Not waiting for the disk: a power cut can undo the last rotations (docs/storage.md, "Durability").
  const write = createGroupCommit(db, dialect, rotate, { durability: 'process-crash' });
  return (used, nowSeconds) => write({ used, nowSeconds });
}

/**
 * Revokes every token of a family and the access tokens issued beside them (RFC 9700 §4.14.2):
 * after a reuse nobody can tell the thief's copy from the client's.
 */
export async function revokeRefreshFamily(
  db: Kysely<Database>,
  familyId: string,
  nowSeconds: number,
  accessTokenTtl: number,
): Promise<void> {
  await db.transaction().execute(async (tx) => {
    const members = await tx
      .updateTable('refresh_tokens')
      .set({ revoked_at: nowSeconds })
      .where('family_id', '=', familyId)
      .where('revoked_at', 'is', null)
      .returning(['access_jti', 'created_at'])
      .execute();
    const live = members.filter((m) => m.created_at + accessTokenTtl > nowSeconds);
    if (live.length === 0) return;
    await tx
      .insertInto('revoked_tokens')
      .values(live.map((m) => ({ jti: m.access_jti, expires_at: m.created_at + accessTokenTtl })))
      .onConflict((oc) => oc.column('jti').doNothing())
      .execute();
  });
}
