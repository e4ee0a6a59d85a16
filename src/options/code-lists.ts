import { iso31661, iso31662 } from 'iso-3166';

/** ISO 3166-1 alpha-2 codes of assigned countries, with their English short names. */
export const COUNTRIES: ReadonlyArray<{ code: string; name: string }> = iso31661.map((c) => ({
  code: c.alpha2,
  name: c.name,
}));
const COUNTRY_CODES = new Set(COUNTRIES.map((c) => c.code));

/** ISO 3166-2 subdivisions grouped by the country they belong to. */
export const SUBDIVISIONS_BY_COUNTRY: ReadonlyMap<
  string,
  ReadonlyArray<{ code: string; name: string }>
> = (() => {
  const byCountry = new Map<string, { code: string; name: string }[]>();
  for (const s of iso31662) {
    const country = s.code.slice(0, 2);
    const list = byCountry.get(country) ?? [];
    list.push({ code: s.code, name: s.name });
    byCountry.set(country, list);
  }
  return byCountry;
})();

export function isCountryCode(value: string): boolean {
  return COUNTRY_CODES.has(value);
}

export function subdivisionsOf(country: string): ReadonlyArray<{ code: string; name: string }> {
  return SUBDIVISIONS_BY_COUNTRY.get(country) ?? [];
}

export function isSubdivisionOf(country: string, code: string): boolean {
  return subdivisionsOf(country).some((s) => s.code === code);
}

const TIME_ZONES = new Set(['UTC', 'Etc/UTC', ...Intl.supportedValuesOf('timeZone')]);

/**
 * An IANA time zone name. Links such as Asia/Calcutta are accepted too (ICU resolves them);
 * numeric offsets like "+01:00" are not zone names and are refused.
 */
export function isTimeZone(value: string): boolean {
  if (TIME_ZONES.has(value)) return true;
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(value)) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

export function timeZones(): string[] {
  return [...TIME_ZONES].sort();
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** One DNS label (RFC 1123): letters, digits and inner hyphens, 1–63 characters. */
export function isDnsLabel(value: string): boolean {
  return LABEL.test(value);
}

/** A fully qualified DNS host name: at least two labels, at most 253 characters, not an IP address. */
export function isDnsHostName(value: string): boolean {
  if (value.length > 253) return false;
  const labels = value.split('.');
  if (labels.length < 2 || !labels.every(isDnsLabel)) return false;
  return !/^\d+$/.test(labels[labels.length - 1]!);
}
