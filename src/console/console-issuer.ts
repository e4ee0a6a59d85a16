import type { Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { CofferError, type ErrorDetail, invalidField } from '../errors.ts';
import type { CredentialConfiguration } from '../issuer/configurations.ts';
import type { IssuerDeps } from '../issuer/issuer-deps.ts';
import { issuerIdOf } from '../issuer/issuer-keys.ts';
import { ConfigurationBody, ConfigurationId, type CreateOfferBody } from '../issuer/issuer-schemas.ts';
import { requireIssuer } from '../issuer/offers.ts';
import { issuedCredentialView } from '../issuer/status-changes.ts';

/** The console's issuer pages: the plain functions behind them (console-issuer-routes.ts). */

export const PAGE_SIZE = 25;
export const FORMATS = ['dc+sd-jwt', 'mso_mdoc', 'jwt_vc_json', 'ldp_vc'] as const;
export type Format = (typeof FORMATS)[number];
/** Each format names its type in its own member. */
export const TYPE_MEMBER: Record<Format, 'vct' | 'doctype' | 'type'> = {
  'dc+sd-jwt': 'vct',
  mso_mdoc: 'doctype',
  jwt_vc_json: 'type',
  ldp_vc: 'type',
};

const checkConfigurationBody = Compile(ConfigurationBody);
const checkConfigurationId = Compile(ConfigurationId);

/**
 * Whether the client is an issuer. Enabling is the operator's act (`coffer issuer enable`: it
 * sets the signing key and certificate chain); no API lets a client enable itself.
 */
export async function issuerStateOf(deps: IssuerDeps, clientId: number) {
  const keys = await deps.issuerKeys(clientId);
  if (!keys) return { enabled: false as const };
  const credentialIssuer = issuerIdOf(deps.config.publicUrl, clientId);
  return {
    enabled: true as const,
    haip: keys.haip,
    credentialIssuer,
    metadata: `${deps.config.publicUrl}/.well-known/openid-credential-issuer/issuers/${clientId}`,
  };
}

/** The configuration in the request's `id` field, checked as the API's path parameter. */
export function checkedConfigurationId(id: string): string {
  if (!checkConfigurationId.Check(id))
    throw invalidField('/body/id', 'must be 1 to 64 letters, digits or . _ : -');
  return id;
}

/** The full configuration as JSON, checked by the same schema as PUT /v1/issuer/configurations/{id}. */
export function configurationFromJson(text: string): CredentialConfiguration {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidField('/body/json', 'is not JSON');
  }
  if (!checkConfigurationBody.Check(value)) {
    const details: ErrorDetail[] = [...checkConfigurationBody.Errors(value)].slice(0, 10).map((e) => ({
      path: '/body/json',
      message: `${e.instancePath || 'the configuration'} ${e.message}`,
    }));
    throw new CofferError('invalid_request', 'The configuration does not fit the schema.', { details });
  }
  return value;
}

/**
 * A claim per line, `path | display name`, path steps separated by `/` (mdoc namespaces hold
 * dots); a step of digits is an array index and `*` every element, as claims path pointers say.
 */
export function claimsFromLines(text: string): CredentialConfiguration['claims'] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line, index) => {
      const [pathText = '', ...name] = line.split('|');
      const path = pathText
        .split('/')
        .map((step) => step.trim())
        .map((step) => (step === '*' ? null : /^\d{1,4}$/.test(step) ? Number(step) : step));
      if (path.some((step) => step === ''))
        throw invalidField('/body/claims', `line ${index + 1} has an empty path step`);
      const display = name.join('|').trim();
      return { path, ...(display ? { display: [{ name: display }] } : {}) };
    });
}

export const claimsToLines = (claims: CredentialConfiguration['claims']) =>
  claims
    .map(
      (c) =>
        `${c.path.map((s) => (s === null ? '*' : String(s))).join('/')}${c.display?.[0]?.name ? ` | ${c.display[0].name}` : ''}`,
    )
    .join('\n');

/** The form's common fields over the configuration being edited: its other members stay as they were. */
export function configurationFromFields(
  values: Record<string, string>,
  existing: CredentialConfiguration | undefined,
): CredentialConfiguration {
  const format = values['format'] as Format;
  if (!FORMATS.includes(format)) throw invalidField('/body/format', 'must be one of the four formats');
  const { vct: _v, doctype: _d, type: _t, ...rest } = existing ?? { claims: [] };
  const typeValue = (values['type_value'] ?? '').trim();
  const configuration = {
    ...rest,
    format,
    ...(typeValue ? { [TYPE_MEMBER[format]]: typeValue } : {}),
    claims: claimsFromLines(values['claims'] ?? ''),
    status: values['status'] === 'on',
  };
  if (!checkConfigurationBody.Check(configuration)) {
    const [first] = checkConfigurationBody.Errors(configuration);
    const member = first?.instancePath.split('/')[1] ?? '';
    const field =
      member === 'claims' ? 'claims' : ['vct', 'doctype', 'type'].includes(member) ? 'type_value' : 'json';
    throw invalidField(`/body/${field}`, `${first?.instancePath || 'the configuration'} ${first?.message}`);
  }
  return configuration;
}

/** The claims of an offer of one configuration from the form: one field per claim path. */
export function offerBodyFromFields(
  configurationId: string,
  configuration: CredentialConfiguration,
  values: Record<string, string>,
): Static<typeof CreateOfferBody> {
  const claims: Record<string, unknown> = {};
  configuration.claims.forEach((claim, index) => {
    const value = (values[`claim_${index}`] ?? '').trim();
    if (!value || !claim.path.every((s) => typeof s === 'string')) return;
    const steps = claim.path as string[];
    // The owner chooses the steps; assigning `__proto__` would step into Object.prototype and
    // change every object of the process. POST /v1/issuer/offers refuses such a key (the JSON
    // parser's prototype poisoning check), so the form does too.
    if (steps.includes('__proto__'))
      throw invalidField(`/body/claim_${index}`, 'a claim path step named __proto__ cannot be offered');
    let node = claims;
    for (const step of steps.slice(0, -1)) {
      // Own members only: "constructor" or "toString" must not find Object.prototype's.
      const next = Object.hasOwn(node, step) ? node[step] : undefined;
      if (typeof next !== 'object' || next === null) node[step] = {};
      node = node[step] as Record<string, unknown>;
    }
    node[steps.at(-1)!] = value;
  });
  const expires = Number(values['expires_in_minutes'] || '10');
  if (!Number.isInteger(expires) || expires < 1 || expires > 1440)
    throw invalidField('/body/expires_in_minutes', 'must be a whole number of minutes from 1 to 1440');
  return {
    configuration_ids: [configurationId],
    ...(configuration.from_profile ? {} : { claims: { [configurationId]: claims } }),
    ...(values['tx_code'] === 'on' ? { tx_code: { length: 6, input_mode: 'numeric' as const } } : {}),
    expires_in: expires * 60,
  };
}

const pageOf = (value: string | undefined) => {
  const page = Number(value ?? '1');
  return Number.isInteger(page) && page >= 1 && page <= 10_000 ? page : 1;
};

/** The issuer's offers, newest first, a page at a time; an offer past its time reads expired. */
export async function pageOffers(deps: IssuerDeps, clientId: number, pageText: string | undefined) {
  await requireIssuer(deps, clientId);
  const page = pageOf(pageText);
  const rows = await deps.db
    .selectFrom('issuer_offers')
    .select(['id', 'configuration_ids', 'status', 'created_at', 'expires_at', 'tx_code_hash'])
    .where('client_id', '=', clientId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(PAGE_SIZE + 1)
    .offset((page - 1) * PAGE_SIZE)
    .execute();
  const now = deps.now().toISOString();
  return {
    page,
    more: rows.length > PAGE_SIZE,
    offers: rows.slice(0, PAGE_SIZE).map((row) => ({
      id: row.id,
      configurationIds: JSON.parse(row.configuration_ids) as string[],
      status: row.status === 'offered' && row.expires_at <= now ? 'expired' : row.status,
      createdAt: row.created_at,
      expiresAt: row.expires_at,
    })),
  };
}

/** What the issuer issued (never the credentials or their claims), newest first, paged. */
export async function pageIssuedCredentials(
  deps: IssuerDeps,
  clientId: number,
  pageText: string | undefined,
) {
  await requireIssuer(deps, clientId);
  const page = pageOf(pageText);
  const rows = await deps.db
    .selectFrom('issued_credentials')
    .selectAll()
    .where('client_id', '=', clientId)
    .orderBy('issued_at', 'desc')
    .orderBy('id', 'desc')
    .limit(PAGE_SIZE + 1)
    .offset((page - 1) * PAGE_SIZE)
    .execute();
  return {
    page,
    more: rows.length > PAGE_SIZE,
    credentials: rows.slice(0, PAGE_SIZE).map((row) => issuedCredentialView(deps.config.publicUrl, row)),
  };
}
