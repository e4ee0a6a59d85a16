import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { isAddress } from 'viem';
import { CofferError, type ErrorDetail } from '../errors.ts';
import { isCountryCode, isSubdivisionOf, subdivisionsOf } from '../options/code-lists.ts';
import { industryCodeOf, isLanguageCode } from '../options/profile-options.ts';
import type { CreateUserBody, UserProfile, Wallet } from './user-schemas.ts';

/** The profile as stored: trimmed, codes in canonical case, only the fields that were given. */
export type NormalizedProfile = Omit<UserProfile, 'employment_industry'> & { employment_industry?: number };

export interface NormalizedWallet {
  /** Lower-case, so that one address in two spellings is one address. */
  address: string;
  chain_id: string;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find them
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

type Report = (field: string, message: string) => void;

function textField(report: Report, field: string, value: string, min: number, max: number): string {
  const trimmed = value.trim();
  const length = [...trimmed].length;
  if (CONTROL.test(trimmed)) report(field, 'must not contain control characters');
  else if (length < min || length > max)
    report(field, `must be ${min}–${max} characters (after trimming spaces)`);
  return trimmed;
}

/** Dates of birth before 1900 are typing errors, not people. */
const EARLIEST_BIRTH = '1900-01-01';

function checkDateOfBirth(report: Report, value: string): void {
  const date = /^\d{4}-\d{2}-\d{2}$/.test(value) ? new Date(`${value}T00:00:00Z`) : undefined;
  // An impossible day (02-30) is either invalid or rolls over; either way it differs from the input.
  if (!date || Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value) {
    report('date_of_birth', 'must be a real date written YYYY-MM-DD');
  } else if (value < EARLIEST_BIRTH) {
    report('date_of_birth', 'must not be before 1900-01-01');
  } else if (value > new Date().toISOString().slice(0, 10)) {
    // Today counts as the past: whoever is born today somewhere may already be registered.
    report('date_of_birth', 'must not be in the future');
  }
}

const CALLING_CODE = /^\+[1-9]\d{0,2}$/;

/** Both or neither; the number must be a valid number (any type) in the calling code's plan. */
function checkPhone(report: Report, number: number | undefined, callingCode: string | undefined) {
  if (number === undefined && callingCode === undefined) return {};
  if (callingCode === undefined) {
    report('mobile_country_code', 'is required with mobile_number');
    return {};
  }
  if (!CALLING_CODE.test(callingCode)) {
    report('mobile_country_code', 'must be an E.164 calling code such as +44');
    return {};
  }
  if (number === undefined) {
    report('mobile_number', 'is required with mobile_country_code');
    return {};
  }
  const parsed = parsePhoneNumberFromString(`${callingCode}${number}`);
  if (!parsed || `+${parsed.countryCallingCode}` !== callingCode || !parsed.isValid()) {
    report('mobile_number', `is not a valid phone number for calling code ${callingCode}`);
    return {};
  }
  return { mobile_number: Number(parsed.nationalNumber), mobile_country_code: callingCode };
}

const AVATAR_IMAGE_SIGNATURES: Record<string, (bytes: Buffer) => boolean> = {
  'image/png': (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  'image/jpeg': (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  'image/gif': (b) => b.subarray(0, 4).toString('latin1') === 'GIF8',
  'image/webp': (b) =>
    b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
};
const AVATAR_MAX_BYTES = 64 * 1024;
const AVATAR_URL_MAX = 2048;

/**
 * An https URL (no user name or password in it), or an inline raster image. SVG is refused:
 * it can carry scripts, and avatars end up in pages of many apps.
 */
function checkAvatar(report: Report, value: string): void {
  const data = /^data:(image\/[a-z0-9.+-]+);base64,([A-Za-z0-9+/]*={0,2})$/.exec(value);
  if (data) {
    const signature = AVATAR_IMAGE_SIGNATURES[data[1]!];
    const bytes = Buffer.from(data[2]!, 'base64');
    if (!signature) report('avatar', 'must be a PNG, JPEG, GIF or WebP image');
    else if (bytes.length > AVATAR_MAX_BYTES) report('avatar', 'must be an image of at most 64 KiB');
    else if (!signature(bytes)) report('avatar', `does not hold the ${data[1]} image it declares`);
    return;
  }
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {}
  if (url?.protocol !== 'https:' || value.length > AVATAR_URL_MAX || url.username || url.password) {
    report('avatar', 'must be an https URL of at most 2048 characters, or a base64 data: URL of an image');
  }
}

function normalizeProfile(report: Report, p: UserProfile): NormalizedProfile {
  const out: NormalizedProfile = {
    email_address: p.email_address,
    first_name: textField(report, 'first_name', p.first_name, 1, 100),
    last_name: textField(report, 'last_name', p.last_name, 1, 100),
  };
  // The schema checks the syntax; RFC 5321 also bounds the part before the @.
  if (p.email_address.lastIndexOf('@') > 64)
    report('email_address', 'must have at most 64 characters before the @');
  if (p.middle_name !== undefined) out.middle_name = textField(report, 'middle_name', p.middle_name, 1, 100);
  if (p.user_name !== undefined) out.user_name = textField(report, 'user_name', p.user_name, 1, 100);

  const country = p.residence_country?.toUpperCase();
  if (country !== undefined) {
    if (isCountryCode(country)) out.residence_country = country;
    else report('residence_country', 'must be an ISO 3166-1 alpha-2 country code (see GET /v1/options)');
  }
  if (p.residence_province !== undefined) {
    let province = textField(report, 'residence_province', p.residence_province, 1, 70);
    if (country === undefined) report('residence_province', 'needs residence_country');
    else if (isCountryCode(country) && subdivisionsOf(country).length > 0) {
      province = province.toUpperCase();
      if (!isSubdivisionOf(country, province)) {
        const example = subdivisionsOf(country)[0]!.code;
        report(
          'residence_province',
          `must be an ISO 3166-2 subdivision code of ${country}, such as ${example}`,
        );
      }
    }
    out.residence_province = province;
  }
  if (p.residence_city !== undefined)
    out.residence_city = textField(report, 'residence_city', p.residence_city, 1, 70);
  Object.assign(out, checkPhone(report, p.mobile_number, p.mobile_country_code));
  if (p.avatar !== undefined) {
    checkAvatar(report, p.avatar);
    out.avatar = p.avatar;
  }
  if (p.gender !== undefined) out.gender = p.gender;
  if (p.date_of_birth !== undefined) {
    checkDateOfBirth(report, p.date_of_birth);
    out.date_of_birth = p.date_of_birth;
  }
  if (p.language_primary !== undefined) {
    out.language_primary = p.language_primary.toLowerCase();
    if (!isLanguageCode(out.language_primary))
      report('language_primary', 'must be an ISO 639-1 language code such as en');
  }
  if (p.language_others !== undefined) {
    const languages = p.language_others.map((code) => code.toLowerCase());
    languages.forEach((code, i) => {
      if (!isLanguageCode(code))
        report(`language_others/${i}`, 'must be an ISO 639-1 language code such as en');
      else if (languages.indexOf(code) !== i) report(`language_others/${i}`, `repeats ${code}`);
    });
    out.language_others = languages;
  }
  if (p.employment_status !== undefined) out.employment_status = p.employment_status;
  if (p.employment_industry !== undefined) {
    const industry = industryCodeOf(p.employment_industry);
    if (industry === undefined)
      report('employment_industry', 'must be a NAICS sector number such as 54 (see GET /v1/options)');
    else out.employment_industry = industry;
  }
  if (p.marital_status !== undefined) out.marital_status = p.marital_status;
  if (p.education !== undefined) out.education = p.education;
  if (p.household_income !== undefined) out.household_income = p.household_income;
  return out;
}

const isMixedCase = (hex: string) => hex !== hex.toLowerCase() && hex !== hex.toUpperCase();

function normalizeWallet(report: Report, wallet: Wallet): NormalizedWallet {
  const { address, chain_id } = wallet;
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) report('address', 'must be 0x followed by 40 hexadecimal digits');
  // All-lower and all-upper addresses carry no checksum (EIP-55); a mixed-case one must be valid.
  else if (isMixedCase(address.slice(2)) && !isAddress(address, { strict: true })) {
    report('address', 'has mixed case but fails its EIP-55 checksum');
  }
  if (!/^[1-9]\d*$/.test(chain_id) || Number(chain_id) > Number.MAX_SAFE_INTEGER) {
    report('chain_id', 'must be a positive decimal chain id such as "1", without leading zeros');
  }
  return { address: address.toLowerCase(), chain_id };
}

/**
 * Applies the profile and wallet rules beyond what the schema says: trimming, code lists,
 * dates, phone numbers, avatar limits, checksums. Every violation is reported at once.
 */
export function normalizeCreateUserBody(body: CreateUserBody): {
  profile: NormalizedProfile;
  wallet: NormalizedWallet | undefined;
} {
  const details: ErrorDetail[] = [];
  const reporter =
    (prefix: string): Report =>
    (field, message) =>
      details.push({ path: `/body/${prefix}/${field}`, message });
  const profile = normalizeProfile(reporter('profile'), body.profile);
  const wallet = body.wallet && normalizeWallet(reporter('wallet'), body.wallet);
  if (details.length > 0) {
    const first = details[0]!;
    throw new CofferError('invalid_request', `${first.path} ${first.message}.`, { details });
  }
  return { profile, wallet };
}
