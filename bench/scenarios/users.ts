import { randomBytes } from 'node:crypto';
import type { Scenario } from '../scenario.ts';

const profile = {
  first_name: 'Ada',
  last_name: 'Lovelace',
  middle_name: 'Augusta',
  user_name: 'ada',
  residence_country: 'GB',
  residence_province: 'GB-ENG',
  residence_city: 'London',
  mobile_country_code: '+44',
  mobile_number: 7400123456,
  gender: 'female',
  date_of_birth: '1990-12-10',
  language_primary: 'en',
  language_others: ['fr', 'de'],
  employment_status: 'employed_full_time',
  employment_industry: 54,
  marital_status: 'single',
  education: 'master',
  household_income: 'from_50000_to_74999',
};

/** POST /v1/user/create with a full profile and a fresh e-mail each time (encryption, CID, holder key). */
export const userCreate: Scenario = {
  name: 'user create (full profile)',
  target: '≥ 1,000 creates/s (SQLite)',
  async prepare(server) {
    const master = (await server.coffer('client', 'create', '--name', 'Bench users', '--master')) as {
      api_token: string;
    };
    const run = randomBytes(4).toString('hex');
    let n = 0;
    return {
      path: '/v1/user/create',
      method: 'POST',
      headers: { 'x-api-token': master.api_token, 'content-type': 'application/json' },
      setupRequest: (request) => {
        request.body = JSON.stringify({
          profile: { ...profile, email_address: `u${run}.${n++}@bench.example` },
        });
        return request;
      },
    };
  },
};
