import { isUniqueViolation, now } from '../db/dialect.ts';
import { generateHolderKey } from '../keys/holder-key.ts';
import {
  findUserByEmailIndex,
  findUserByWallet,
  markEmailVerified,
  type UserIdentity,
} from './user-repository.ts';
import { holderKeyContext, profileContext, type UserDeps } from './user-service.ts';

/**
 * The user a log-in names in a tenant, signed up on first log-in (DESIGN.md: an unknown e-mail
 * or wallet signs the person up in the client's tenant). A sign-up racing another one for the
 * same person loses on the unique index and takes the winner's row.
 */
async function signUp(
  deps: UserDeps,
  tenantId: number,
  profile: Record<string, unknown>,
  identifiers: { emailIndex: string | null; wallet: { address: string; chainId: string } | null },
  refind: () => Promise<UserIdentity | undefined>,
): Promise<UserIdentity> {
  const holder = generateHolderKey();
  const profileCid = await deps.store.putEncrypted(profile, profileContext(holder.did));
  try {
    const userId = await deps.insertUser({
      tenant_id: tenantId,
      email_index: identifiers.emailIndex,
      email_verified: identifiers.emailIndex ? 1 : 0,
      wallet_address: identifiers.wallet?.address ?? null,
      wallet_chain_id: identifiers.wallet?.chainId ?? null,
      profile_cid: profileCid,
      did: holder.did,
      holder_key_sealed: deps.cipher.encrypt(JSON.stringify(holder.privateJwk), holderKeyContext(holder.did)),
      created_at: now(),
    });
    return {
      user_id: userId,
      tenant_id: tenantId,
      did: holder.did,
      wallet_address: identifiers.wallet?.address ?? null,
      profile_cid: profileCid,
      email_verified: identifiers.emailIndex ? 1 : 0,
    };
  } catch (error) {
    const winner = isUniqueViolation(error) ? await refind() : undefined;
    if (winner) return winner;
    throw error;
  }
}

/** After a verified one-time code: the user with that e-mail, now marked verified. */
export async function logInWithEmail(deps: UserDeps, tenantId: number, email: string): Promise<UserIdentity> {
  const emailIndexes = deps.emailIndexes(email);
  const emailIndex = emailIndexes[0]!;
  const find = () => findUserByEmailIndex(deps.db, tenantId, emailIndexes);
  const existing = await find();
  if (existing) {
    if (existing.email_verified !== 1) await markEmailVerified(deps.db, existing.user_id);
    return { ...existing, email_verified: 1 };
  }
  return signUp(deps, tenantId, { email_address: email.trim() }, { emailIndex, wallet: null }, find);
}

/** After a verified Sign-In with Ethereum message: the user with that wallet. */
export async function logInWithWallet(
  deps: UserDeps,
  tenantId: number,
  address: string,
  chainId: number,
): Promise<UserIdentity> {
  const walletAddress = address.toLowerCase();
  const find = () => findUserByWallet(deps.db, tenantId, walletAddress);
  const existing = await find();
  if (existing) return existing;
  return signUp(
    deps,
    tenantId,
    {},
    { emailIndex: null, wallet: { address: walletAddress, chainId: String(chainId) } },
    find,
  );
}
