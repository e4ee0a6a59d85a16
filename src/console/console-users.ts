import { compileBodyCheck } from '../http/validation.ts';
import { userInfoClaims } from '../oidc/userinfo.ts';
import { findUserByEmailIndex } from '../users/user-repository.ts';
import { CreateUserBody } from '../users/user-schemas.ts';
import type { UserDeps } from '../users/user-service.ts';

/** One user of a tenant as the console shows it: ids and counts, and the profile as userinfo gives it. */
export interface UserView {
  user_id: number;
  did: string;
  created_at: string;
  credentials: number;
  profile: Record<string, unknown>;
}

/**
 * The user of the tenant with exactly this e-mail address: the blind-index lookup that sign-up
 * and user creation use. The console never lists addresses (Coffer holds none in clear).
 */
export async function findUserIdByEmail(
  deps: Pick<UserDeps, 'db' | 'emailIndexes'>,
  tenantId: number,
  email: string,
): Promise<number | undefined> {
  if (!email.trim()) return undefined;
  return (await findUserByEmailIndex(deps.db, tenantId, deps.emailIndexes(email)))?.user_id;
}

/** The user of that id in the tenant, or undefined: another tenant's user is not found. */
export async function viewUser(
  deps: Pick<UserDeps, 'db' | 'store'>,
  tenantId: number,
  userId: number,
): Promise<UserView | undefined> {
  const user = await deps.db
    .selectFrom('users')
    .select(['user_id', 'tenant_id', 'did', 'wallet_address', 'profile_cid', 'email_verified', 'created_at'])
    .where('user_id', '=', userId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (!user) return undefined;
  const counted = await deps.db
    .selectFrom('credentials')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirst();
  const { sub: _sub, ...profile } = await userInfoClaims(deps.store, user);
  return {
    user_id: user.user_id,
    did: user.did,
    created_at: user.created_at,
    credentials: Number(counted?.n ?? 0),
    profile,
  };
}

/** The profile fields the console's form offers: the required ones and the plain optional texts. */
export const USER_FIELDS: Array<[string, string, string, boolean]> = [
  ['email_address', 'E-mail address', '', true],
  ['first_name', 'First name', '', true],
  ['last_name', 'Last name', '', true],
  ['middle_name', 'Middle name (optional)', '', false],
  ['user_name', 'User name (optional)', '', false],
  ['date_of_birth', 'Date of birth (optional)', 'YYYY-MM-DD, such as 1990-04-30.', false],
];

const checkCreateUser = compileBodyCheck(CreateUserBody);

/**
 * The body of POST /v1/user/create from the console's form, checked as that route's schema checks
 * it (empty optional fields are left out); the service applies the rest of the rules.
 */
export function createUserBodyOf(values: Record<string, string>): {
  body: CreateUserBody;
  problems: Array<{ path: string; message: string }>;
} {
  const profile: Record<string, string> = {};
  for (const [name, , , required] of USER_FIELDS) {
    const value = values[name] ?? '';
    if (required || value.trim() !== '') profile[name] = value;
  }
  const body = { profile } as unknown as CreateUserBody;
  return { body, problems: checkCreateUser(body) };
}
