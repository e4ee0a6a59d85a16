import { CofferError, type ErrorDetail } from '../errors.ts';
import {
  isCountryCode,
  isDnsHostName,
  isDnsLabel,
  isSubdivisionOf,
  isTimeZone,
  subdivisionsOf,
} from '../options/code-lists.ts';
import type { SubClientBody } from './subclient-schemas.ts';

export interface SubClientFields {
  name: string;
  address_1: string;
  address_2: string;
  country: string;
  province: string;
  city: string;
  timezone: string;
  domain: string;
  subdomain: string;
}

// Control characters have no place in names and addresses and break logs and e-mail headers.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find them
const CONTROL = /[\u0000-\u001f\u007f]/;

function textField(details: ErrorDetail[], name: string, value: string, min: number, max: number): string {
  const trimmed = value.trim();
  if (CONTROL.test(trimmed))
    details.push({ path: `/body/${name}`, message: 'must not contain control characters' });
  else if ([...trimmed].length < min || [...trimmed].length > max) {
    details.push({
      path: `/body/${name}`,
      message: `must be ${min}–${max} characters (after trimming spaces)`,
    });
  }
  return trimmed;
}

/**
 * Applies the sub-client field rules beyond what the schema says: code lists, DNS syntax,
 * trimming and case normalisation. Every violation is reported at once.
 */
export function normalizeSubClientBody(body: SubClientBody): SubClientFields {
  const details: ErrorDetail[] = [];
  const name = textField(details, 'name', body.name, 1, 100);
  const address_1 = textField(details, 'address_1', body.address_1, 1, 100);
  const address_2 = textField(details, 'address_2', body.address_2 ?? '', 0, 100);
  const city = textField(details, 'city', body.city, 1, 70);

  const country = body.country.toUpperCase();
  if (!isCountryCode(country)) {
    details.push({
      path: '/body/country',
      message: 'must be an ISO 3166-1 alpha-2 country code (see GET /v1/options)',
    });
  }

  let province = textField(details, 'province', body.province, 1, 70);
  if (isCountryCode(country) && subdivisionsOf(country).length > 0) {
    province = province.toUpperCase();
    if (!isSubdivisionOf(country, province)) {
      const example = subdivisionsOf(country)[0]!.code;
      details.push({
        path: '/body/province',
        message: `must be an ISO 3166-2 subdivision code of ${country}, such as ${example}`,
      });
    }
  }

  const timezone = body.timezone;
  if (!isTimeZone(timezone))
    details.push({ path: '/body/timezone', message: 'must be an IANA time zone such as Europe/London' });

  const domain = body.domain.toLowerCase();
  if (!isDnsHostName(domain))
    details.push({ path: '/body/domain', message: 'must be a DNS host name such as app.example.com' });

  const subdomain = body.subdomain.toLowerCase();
  if (!isDnsLabel(subdomain)) {
    details.push({
      path: '/body/subdomain',
      message: 'must be one DNS label: letters, digits and inner hyphens, at most 63',
    });
  }

  if (details.length > 0) {
    const first = details[0]!;
    throw new CofferError('invalid_request', `${first.path} ${first.message}.`, { details });
  }
  return { name, address_1, address_2, country, province, city, timezone, domain, subdomain };
}
