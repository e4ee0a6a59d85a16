import ISO6391 from 'iso-639-1';

/**
 * The coded profile options whose value sets the project chooses (DESIGN.md, Users): small
 * snake_case enumerations, each value with an English label. Defined once here; the schemas,
 * the profile rules and GET /v1/options all read them from this file.
 */
export interface CodedOption {
  code: string;
  name: string;
}

const options = (entries: Record<string, string>): ReadonlyArray<CodedOption> =>
  Object.entries(entries).map(([code, name]) => ({ code, name }));

export const GENDERS = options({
  female: 'Female',
  male: 'Male',
  non_binary: 'Non-binary',
  other: 'Other',
  prefer_not_to_say: 'Prefer not to say',
});

export const MARITAL_STATUSES = options({
  single: 'Single, never married',
  married: 'Married',
  civil_partnership: 'In a civil partnership',
  cohabiting: 'Living with a partner',
  separated: 'Separated',
  divorced: 'Divorced or partnership dissolved',
  widowed: 'Widowed',
  prefer_not_to_say: 'Prefer not to say',
});

/** Highest level completed, after the ISCED 2011 levels so that every country's system maps onto it. */
export const EDUCATION_LEVELS = options({
  none: 'No formal education',
  primary: 'Primary education',
  lower_secondary: 'Lower secondary education',
  upper_secondary: 'Upper secondary education',
  post_secondary: 'Post-secondary non-tertiary or vocational education',
  short_cycle_tertiary: 'Short-cycle tertiary education (e.g. associate degree)',
  bachelor: "Bachelor's degree or equivalent",
  master: "Master's degree or equivalent",
  doctorate: 'Doctoral degree or equivalent',
  prefer_not_to_say: 'Prefer not to say',
});

export const EMPLOYMENT_STATUSES = options({
  employed_full_time: 'Employed full-time',
  employed_part_time: 'Employed part-time',
  self_employed: 'Self-employed',
  unemployed: 'Unemployed',
  student: 'Student',
  retired: 'Retired',
  homemaker: 'Homemaker',
  unable_to_work: 'Unable to work',
  prefer_not_to_say: 'Prefer not to say',
});

/** Yearly gross household income in US dollars or the equivalent in local currency. */
export const HOUSEHOLD_INCOMES = options({
  under_25000: 'Under 25,000 USD a year',
  from_25000_to_49999: '25,000–49,999 USD a year',
  from_50000_to_74999: '50,000–74,999 USD a year',
  from_75000_to_99999: '75,000–99,999 USD a year',
  from_100000_to_149999: '100,000–149,999 USD a year',
  from_150000_to_199999: '150,000–199,999 USD a year',
  at_least_200000: '200,000 USD a year or more',
  prefer_not_to_say: 'Prefer not to say',
});

export interface IndustryOption {
  /** The sector's (first) two-digit NAICS number, the value a profile carries. */
  code: number;
  /** The sector as NAICS writes it: "54", or a range like "31-33". */
  naics: string;
  name: string;
}

/** NAICS 2022 sectors. A range sector is accepted under any number in its range. */
export const EMPLOYMENT_INDUSTRIES: ReadonlyArray<IndustryOption> = [
  ['11', 'Agriculture, Forestry, Fishing and Hunting'],
  ['21', 'Mining, Quarrying, and Oil and Gas Extraction'],
  ['22', 'Utilities'],
  ['23', 'Construction'],
  ['31-33', 'Manufacturing'],
  ['42', 'Wholesale Trade'],
  ['44-45', 'Retail Trade'],
  ['48-49', 'Transportation and Warehousing'],
  ['51', 'Information'],
  ['52', 'Finance and Insurance'],
  ['53', 'Real Estate and Rental and Leasing'],
  ['54', 'Professional, Scientific, and Technical Services'],
  ['55', 'Management of Companies and Enterprises'],
  ['56', 'Administrative and Support and Waste Management and Remediation Services'],
  ['61', 'Educational Services'],
  ['62', 'Health Care and Social Assistance'],
  ['71', 'Arts, Entertainment, and Recreation'],
  ['72', 'Accommodation and Food Services'],
  ['81', 'Other Services (except Public Administration)'],
  ['92', 'Public Administration'],
].map(([naics, name]) => ({ code: Number(naics!.slice(0, 2)), naics: naics!, name: name! }));

/** Every accepted two-digit number, mapped to the canonical sector code (32 → 31). */
const INDUSTRY_OF_NUMBER: ReadonlyMap<number, number> = new Map(
  EMPLOYMENT_INDUSTRIES.flatMap((sector) => {
    const [first, last = first] = sector.naics.split('-').map(Number) as [number, number?];
    return Array.from({ length: last - first + 1 }, (_, i) => [first + i, sector.code] as const);
  }),
);

/**
 * The canonical sector code of a value given as a number (54) or as text ("54", "31-33", "32").
 * Undefined when it names no sector.
 */
export function industryCodeOf(value: number | string): number | undefined {
  if (typeof value === 'string') {
    const range = EMPLOYMENT_INDUSTRIES.find((sector) => sector.naics === value);
    if (range) return range.code;
    if (!/^\d{2}$/.test(value)) return undefined;
    return INDUSTRY_OF_NUMBER.get(Number(value));
  }
  return INDUSTRY_OF_NUMBER.get(value);
}

export interface LanguageOption extends CodedOption {
  native_name: string;
}

/** ISO 639-1 languages, ordered by code. */
export const LANGUAGES: ReadonlyArray<LanguageOption> = ISO6391.getAllCodes()
  .sort()
  .map((code) => ({ code, name: ISO6391.getName(code), native_name: ISO6391.getNativeName(code) }));

export function isLanguageCode(value: string): boolean {
  return ISO6391.validate(value);
}

export const codesOf = (list: ReadonlyArray<CodedOption>): string[] => list.map((option) => option.code);
