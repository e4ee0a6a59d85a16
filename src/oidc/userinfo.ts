import { getAddress } from 'viem';
import type { EncryptedStore } from '../storage/index.ts';
import type { UserIdentity } from '../users/user-repository.ts';
import { profileContext } from '../users/user-service.ts';

type Profile = Record<string, unknown>;

const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * OIDC Core §5.1 claims from the stored profile, at top level, plus eth_address and
 * did_wallet_address. Claims the profile does not have are left out, as §5.3.2 asks.
 */
export interface UserInfoClaims {
  sub: string;
  eth_address: string | null;
  did_wallet_address: string;
  [claim: string]: unknown;
}

export async function userInfoClaims(store: EncryptedStore, user: UserIdentity): Promise<UserInfoClaims> {
  const profile = (await store.getEncrypted(user.profile_cid, profileContext(user.did))) as Profile;
  const phone =
    profile['mobile_country_code'] && profile['mobile_number'] !== undefined
      ? `${profile['mobile_country_code']}${profile['mobile_number']}`
      : undefined;
  const address = {
    country: text(profile['residence_country']),
    region: text(profile['residence_province']),
    locality: text(profile['residence_city']),
  };
  const claims: Record<string, unknown> = {
    sub: String(user.user_id),
    email: text(profile['email_address']),
    email_verified: text(profile['email_address']) ? user.email_verified === 1 : undefined,
    given_name: text(profile['first_name']),
    family_name: text(profile['last_name']),
    middle_name: text(profile['middle_name']),
    name:
      [profile['first_name'], profile['middle_name'], profile['last_name']].filter(text).join(' ') ||
      undefined,
    preferred_username: text(profile['user_name']),
    picture: text(profile['avatar']),
    gender: text(profile['gender']),
    birthdate: text(profile['date_of_birth']),
    locale: text(profile['language_primary']),
    phone_number: phone,
    phone_number_verified: phone ? false : undefined,
    address: Object.values(address).some(Boolean) ? address : undefined,
    eth_address: user.wallet_address ? getAddress(user.wallet_address) : null,
    did_wallet_address: user.did,
  };
  return Object.fromEntries(
    Object.entries(claims).filter(([, value]) => value !== undefined),
  ) as UserInfoClaims;
}
