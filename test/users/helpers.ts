import { createEncryptedStore } from '../../src/storage/index.ts';
import type { TestServer } from '../helpers/server.ts';

/** A profile with every field set, and what the service stores for it after normalisation. */
export const fullProfile = {
  email_address: 'Ada.Lovelace@Example.org',
  first_name: '  Ada ',
  last_name: 'Lovelace',
  middle_name: 'Augusta',
  user_name: 'ada',
  residence_country: 'gb',
  residence_province: 'gb-eng',
  residence_city: 'London',
  mobile_number: 7911123456,
  mobile_country_code: '+44',
  avatar: 'https://images.example.org/ada.png',
  gender: 'female',
  date_of_birth: '1990-12-10',
  language_primary: 'EN',
  language_others: ['fr', 'De'],
  employment_status: 'employed_full_time',
  employment_industry: '54',
  marital_status: 'married',
  education: 'master',
  household_income: 'from_50000_to_74999',
};

export const normalizedFullProfile = {
  ...fullProfile,
  first_name: 'Ada',
  residence_country: 'GB',
  residence_province: 'GB-ENG',
  language_primary: 'en',
  language_others: ['fr', 'de'],
  employment_industry: 54,
};

let counter = 0;
/** A minimal valid profile with an e-mail address no other test uses. */
export function minimalProfile(overrides: Record<string, unknown> = {}) {
  return {
    email_address: `user${++counter}.${Date.now()}@example.org`,
    first_name: 'Grace',
    last_name: 'Hopper',
    ...overrides,
  };
}

/** Reads the stored users row and the profile behind it, decrypted with the server's master key. */
export async function readStoredUser(server: TestServer, userId: number) {
  const row = await server.database.db
    .selectFrom('users')
    .selectAll()
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  const store = createEncryptedStore({
    backend: 'fs',
    dataDir: server.testDatabase.dataDir,
    masterKey: server.masterKey,
  });
  const profile = await store.getEncrypted(row.profile_cid, { owner: row.did, kind: 'profile' });
  return { row, profile };
}
