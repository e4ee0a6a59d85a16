import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  EDUCATION_LEVELS,
  EMPLOYMENT_STATUSES,
  GENDERS,
  HOUSEHOLD_INCOMES,
  MARITAL_STATUSES,
} from '../../src/options/profile-options.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { minimalProfile, readStoredUser } from './helpers.ts';

const PNG_1X1 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
const today = new Date().toISOString().slice(0, 10);

/** [what, profile fields to set (undefined removes one), the field path the 400 must name]. */
const PROFILE_CASES: Array<[string, Record<string, unknown>, string]> = [
  ['missing e-mail', { email_address: undefined }, '/body/profile/email_address'],
  ['e-mail without @', { email_address: 'ada.example.org' }, '/body/profile/email_address'],
  ['e-mail with spaces', { email_address: 'ada lovelace@example.org' }, '/body/profile/email_address'],
  [
    'e-mail over 254',
    { email_address: `${'a'.repeat(60)}@${'b'.repeat(190)}.org` },
    '/body/profile/email_address',
  ],
  [
    'e-mail local part over 64',
    { email_address: `${'a'.repeat(65)}@example.org` },
    '/body/profile/email_address',
  ],
  ['e-mail not a string', { email_address: 42 }, '/body/profile/email_address'],
  ['missing first name', { first_name: undefined }, '/body/profile/first_name'],
  ['empty first name', { first_name: '' }, '/body/profile/first_name'],
  ['blank first name', { first_name: '   ' }, '/body/profile/first_name'],
  ['first name over 100', { first_name: 'f'.repeat(101) }, '/body/profile/first_name'],
  ['first name with a control character', { first_name: 'Ad\u0000a' }, '/body/profile/first_name'],
  ['missing last name', { last_name: undefined }, '/body/profile/last_name'],
  ['last name with a newline', { last_name: 'Love\nlace' }, '/body/profile/last_name'],
  ['empty middle name', { middle_name: '' }, '/body/profile/middle_name'],
  ['user name over 100', { user_name: 'u'.repeat(101) }, '/body/profile/user_name'],
  ['unknown country', { residence_country: 'XX' }, '/body/profile/residence_country'],
  ['alpha-3 country', { residence_country: 'GBR' }, '/body/profile/residence_country'],
  [
    'province of another country',
    { residence_country: 'GB', residence_province: 'US-CA' },
    '/body/profile/residence_province',
  ],
  [
    'province name instead of code',
    { residence_country: 'GB', residence_province: 'England' },
    '/body/profile/residence_province',
  ],
  ['province without country', { residence_province: 'GB-ENG' }, '/body/profile/residence_province'],
  ['city over 70', { residence_city: 'c'.repeat(71) }, '/body/profile/residence_city'],
  ['number without calling code', { mobile_number: 7911123456 }, '/body/profile/mobile_country_code'],
  ['calling code without number', { mobile_country_code: '+44' }, '/body/profile/mobile_number'],
  [
    'calling code without +',
    { mobile_number: 7911123456, mobile_country_code: '44' },
    '/body/profile/mobile_country_code',
  ],
  [
    'country instead of calling code',
    { mobile_number: 7911123456, mobile_country_code: 'GB' },
    '/body/profile/mobile_country_code',
  ],
  ['too short a number', { mobile_number: 123, mobile_country_code: '+44' }, '/body/profile/mobile_number'],
  [
    'a number of another plan',
    { mobile_number: 2025550123, mobile_country_code: '+44' },
    '/body/profile/mobile_number',
  ],
  [
    'number as text',
    { mobile_number: '7911123456', mobile_country_code: '+44' },
    '/body/profile/mobile_number',
  ],
  [
    'fractional number',
    { mobile_number: 7911123456.5, mobile_country_code: '+44' },
    '/body/profile/mobile_number',
  ],
  ['avatar over http', { avatar: 'http://images.example.org/a.png' }, '/body/profile/avatar'],
  ['avatar javascript: URL', { avatar: 'javascript:alert(1)' }, '/body/profile/avatar'],
  ['avatar with credentials', { avatar: 'https://user:pw@images.example.org/a.png' }, '/body/profile/avatar'],
  [
    'avatar URL over 2048',
    { avatar: `https://images.example.org/${'a'.repeat(2048)}` },
    '/body/profile/avatar',
  ],
  [
    'avatar SVG',
    { avatar: `data:image/svg+xml;base64,${Buffer.from('<svg/>').toString('base64')}` },
    '/body/profile/avatar',
  ],
  [
    'avatar not the image it declares',
    { avatar: `data:image/png;base64,${Buffer.from('GIF89a').toString('base64')}` },
    '/body/profile/avatar',
  ],
  [
    'avatar over 64 KiB',
    {
      avatar: `data:image/png;base64,${Buffer.concat([Buffer.from(PNG_1X1, 'base64'), Buffer.alloc(65 * 1024)]).toString('base64')}`,
    },
    '/body/profile/avatar',
  ],
  ['gender not in the list', { gender: 'Female' }, '/body/profile/gender'],
  ['marital status not in the list', { marital_status: 'complicated' }, '/body/profile/marital_status'],
  ['education not in the list', { education: 'phd' }, '/body/profile/education'],
  ['employment status not in the list', { employment_status: 'busy' }, '/body/profile/employment_status'],
  ['household income not in the list', { household_income: 'lots' }, '/body/profile/household_income'],
  ['impossible date', { date_of_birth: '1990-02-30' }, '/body/profile/date_of_birth'],
  ['date in another format', { date_of_birth: '10/12/1990' }, '/body/profile/date_of_birth'],
  ['date before 1900', { date_of_birth: '1899-12-31' }, '/body/profile/date_of_birth'],
  ['date in the future', { date_of_birth: tomorrow }, '/body/profile/date_of_birth'],
  ['unknown language', { language_primary: 'xx' }, '/body/profile/language_primary'],
  ['ISO 639-2 language', { language_primary: 'eng' }, '/body/profile/language_primary'],
  ['unknown other language', { language_others: ['fr', 'zz'] }, '/body/profile/language_others/1'],
  ['repeated other language', { language_others: ['fr', 'FR'] }, '/body/profile/language_others/1'],
  ['over 20 other languages', { language_others: Array(21).fill('fr') }, '/body/profile/language_others'],
  ['other languages not an array', { language_others: 'fr' }, '/body/profile/language_others'],
  ['industry not a NAICS sector', { employment_industry: 99 }, '/body/profile/employment_industry'],
  ['industry text not a sector', { employment_industry: '3133' }, '/body/profile/employment_industry'],
  ['industry a 3-digit code', { employment_industry: 541 }, '/body/profile/employment_industry'],
  ['industry fractional', { employment_industry: 54.5 }, '/body/profile/employment_industry'],
  ['industry boolean', { employment_industry: true }, '/body/profile/employment_industry'],
  ['unknown profile field', { nickname: 'ada' }, '/body/profile/nickname'],
  ['null for an optional field', { middle_name: null }, '/body/profile/middle_name'],
];

const WALLET_CASES: Array<[string, unknown, string]> = [
  ['short address', { address: '0x1234', chain_id: '1' }, '/body/wallet/address'],
  [
    'address without 0x',
    { address: '5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', chain_id: '1' },
    '/body/wallet/address',
  ],
  [
    'address with non-hex',
    { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg', chain_id: '1' },
    '/body/wallet/address',
  ],
  [
    'mixed case failing EIP-55',
    { address: '0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', chain_id: '1' },
    '/body/wallet/address',
  ],
  [
    'chain id zero',
    { address: '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', chain_id: '0' },
    '/body/wallet/chain_id',
  ],
  [
    'chain id with leading zero',
    { address: '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', chain_id: '01' },
    '/body/wallet/chain_id',
  ],
  [
    'chain id not digits',
    { address: '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', chain_id: 'eip155:1' },
    '/body/wallet/chain_id',
  ],
  [
    'chain id a number',
    { address: '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', chain_id: 1 },
    '/body/wallet/chain_id',
  ],
  [
    'wallet missing chain id',
    { address: '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed' },
    '/body/wallet/chain_id',
  ],
  [
    'unknown wallet field',
    { address: '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', chain_id: '1', ens: 'a.eth' },
    '/body/wallet/ens',
  ],
];

function withFields(fields: Record<string, unknown>) {
  const profile: Record<string, unknown> = minimalProfile();
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) delete profile[key];
    else profile[key] = value;
  }
  return profile;
}

for (const kind of DATABASE_KINDS) {
  describe(`profile and wallet rules on ${kind}`, () => {
    let server: TestServer;
    let token: string;
    const create = (body: unknown) =>
      server.request('POST', '/v1/user/create', { headers: { 'x-api-token': token }, body });

    before(async () => {
      server = await startTestServer(kind);
      token = (await server.createMaster()).token;
    });
    after(() => server.close());

    const expectInvalid = async (body: unknown, path: string) => {
      const r = await create(body);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.error, 'invalid_request');
      assert.ok(
        r.body.details.some((d: { path: string }) => d.path === path),
        `expected ${path} in ${JSON.stringify(r.body.details)}`,
      );
    };

    for (const [what, fields, path] of PROFILE_CASES) {
      test(`${what} → 400 naming ${path}`, () => expectInvalid({ profile: withFields(fields) }, path));
    }
    for (const [what, wallet, path] of WALLET_CASES) {
      test(`${what} → 400 naming ${path}`, () => expectInvalid({ profile: minimalProfile(), wallet }, path));
    }
    test('no profile, or an unknown top-level field → 400', async () => {
      await expectInvalid({}, '/body/profile');
      await expectInvalid({ profile: minimalProfile(), extra: 1 }, '/body/extra');
    });

    test('every rule violation is reported at once', async () => {
      const r = await create({
        profile: withFields({
          first_name: ' ',
          residence_country: 'XX',
          date_of_birth: '1800-01-01',
          employment_industry: 99,
        }),
        wallet: { address: '0x12', chain_id: '0' },
      });
      assert.equal(r.status, 400);
      assert.deepEqual(r.body.details.map((d: { path: string }) => d.path).sort(), [
        '/body/profile/date_of_birth',
        '/body/profile/employment_industry',
        '/body/profile/first_name',
        '/body/profile/residence_country',
        '/body/wallet/address',
        '/body/wallet/chain_id',
      ]);
    });

    test('accepted variants are stored in canonical form', async () => {
      const r = await create({
        profile: withFields({
          residence_country: 'AQ',
          residence_province: ' Ross Dependency ',
          mobile_number: 2025550123,
          mobile_country_code: '+1',
          avatar: `data:image/png;base64,${PNG_1X1}`,
          date_of_birth: today,
          employment_industry: '31-33',
          language_others: [],
        }),
        wallet: {
          address: '0X5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED'.replace('0X', '0x'),
          chain_id: '8453',
        },
      });
      assert.equal(r.status, 201, r.text);
      const { row, profile } = await readStoredUser(server, r.body.data.user_id);
      const p = profile as Record<string, unknown>;
      assert.equal(p['residence_province'], 'Ross Dependency');
      assert.equal(p['mobile_number'], 2025550123);
      assert.equal(p['employment_industry'], 31);
      assert.deepEqual(p['language_others'], []);
      assert.equal(row.wallet_address, '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed');
      assert.equal(row.wallet_chain_id, '8453');
      for (const industry of [32, 33, '45', 49]) {
        const again = await create({ profile: withFields({ employment_industry: industry }) });
        assert.equal(again.status, 201, again.text);
      }
    });

    test('every value that GET /v1/options lists for a coded field is accepted', async () => {
      const fields = {
        gender: GENDERS,
        marital_status: MARITAL_STATUSES,
        education: EDUCATION_LEVELS,
        employment_status: EMPLOYMENT_STATUSES,
        household_income: HOUSEHOLD_INCOMES,
      };
      const options = (await server.request('GET', '/v1/options')).body.data;
      for (const [field, list] of Object.entries(fields)) {
        assert.deepEqual(options[field], list);
        for (const { code } of list) {
          const r = await create({ profile: withFields({ [field]: code }) });
          assert.equal(r.status, 201, `${field}=${code}: ${r.text}`);
        }
      }
      for (const { code } of options.employment_industry) {
        assert.equal((await create({ profile: withFields({ employment_industry: code }) })).status, 201);
      }
    });
  });
}
