import { Type } from 'typebox';
import {
  codesOf,
  EDUCATION_LEVELS,
  EMPLOYMENT_STATUSES,
  GENDERS,
  HOUSEHOLD_INCOMES,
  MARITAL_STATUSES,
} from '../options/profile-options.ts';

/**
 * Shapes only: lengths here bound the raw text; user-rules.ts trims, checks code lists, dates,
 * phone numbers and checksums, and reports every violation at once.
 */
const text = (minLength: number, maxLength: number, description: string) =>
  Type.String({ minLength, maxLength, description });

const coded = (values: string[], what: string) =>
  Type.Enum(values, { description: `${what}; one of the codes listed by GET /v1/options.` });

/** 64 KiB of image in base64, plus room for the `data:image/…;base64,` prefix. */
export const AVATAR_MAX_LENGTH = 87_500;

export const UserProfile = Type.Object(
  {
    email_address: Type.String({
      format: 'email',
      maxLength: 254,
      description: 'E-mail address, at most 254 characters; unique in the tenant, whatever its case.',
    }),
    first_name: text(1, 100, 'Given name, 1–100 characters.'),
    last_name: text(1, 100, 'Family name, 1–100 characters.'),
    middle_name: Type.Optional(text(1, 100, 'Middle name, 1–100 characters.')),
    user_name: Type.Optional(text(1, 100, 'Preferred user name, 1–100 characters.')),
    residence_country: Type.Optional(
      Type.String({ minLength: 2, maxLength: 2, description: 'ISO 3166-1 alpha-2 country code, e.g. GB.' }),
    ),
    residence_province: Type.Optional(
      text(
        1,
        70,
        'ISO 3166-2 subdivision code of residence_country (e.g. GB-ENG) where it has them; else 1–70 characters.',
      ),
    ),
    residence_city: Type.Optional(text(1, 70, 'City, 1–70 characters.')),
    mobile_number: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 999_999_999_999_999,
        description: 'National number without the calling code, e.g. 7911123456; needs mobile_country_code.',
      }),
    ),
    mobile_country_code: Type.Optional(
      Type.String({
        minLength: 2,
        maxLength: 4,
        description: 'E.164 calling code, e.g. +44; needs mobile_number.',
      }),
    ),
    avatar: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: AVATAR_MAX_LENGTH,
        description:
          'An https URL (at most 2048 characters), or a data: URL of a PNG, JPEG, GIF or WebP image in base64, at most 64 KiB of image.',
      }),
    ),
    gender: Type.Optional(coded(codesOf(GENDERS), 'Gender')),
    date_of_birth: Type.Optional(
      Type.String({ format: 'date', description: 'YYYY-MM-DD, not in the future, not before 1900.' }),
    ),
    language_primary: Type.Optional(
      Type.String({ minLength: 2, maxLength: 2, description: 'ISO 639-1 language code, e.g. en.' }),
    ),
    language_others: Type.Optional(
      Type.Array(Type.String({ minLength: 2, maxLength: 2 }), {
        maxItems: 20,
        description: 'Other ISO 639-1 language codes, at most 20, no repeats.',
      }),
    ),
    employment_status: Type.Optional(coded(codesOf(EMPLOYMENT_STATUSES), 'Employment status')),
    employment_industry: Type.Optional(
      Type.Unsafe<number | string>({
        type: ['integer', 'string'],
        description:
          'NAICS sector: its two-digit number (54), or the same as text ("54", "31-33"); stored as the number, ranges as their first number (31).',
      }),
    ),
    marital_status: Type.Optional(coded(codesOf(MARITAL_STATUSES), 'Marital status')),
    education: Type.Optional(coded(codesOf(EDUCATION_LEVELS), 'Highest education completed')),
    household_income: Type.Optional(coded(codesOf(HOUSEHOLD_INCOMES), 'Yearly household income band')),
  },
  { additionalProperties: false },
);
export type UserProfile = Type.Static<typeof UserProfile>;

export const Wallet = Type.Object(
  {
    address: Type.String({
      maxLength: 42,
      description: 'Ethereum address: 0x and 40 hex digits; a mixed-case address must be EIP-55 checksummed.',
    }),
    chain_id: Type.String({ maxLength: 16, description: 'EIP-155 chain id in decimal, e.g. "1".' }),
  },
  { additionalProperties: false },
);
export type Wallet = Type.Static<typeof Wallet>;

export const CreateUserBody = Type.Object(
  { profile: UserProfile, wallet: Type.Optional(Wallet) },
  { additionalProperties: false },
);
export type CreateUserBody = Type.Static<typeof CreateUserBody>;

export const CreatedUserEnvelope = Type.Object({
  data: Type.Object({ user_id: Type.Integer({ description: 'The new user, unique in the deployment.' }) }),
});
