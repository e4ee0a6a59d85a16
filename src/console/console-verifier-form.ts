import { Compile } from 'typebox/compile';
import { CofferError, type ErrorDetail } from '../errors.ts';
import { CreateVerifierRequestBody } from '../verifier/verifier-schemas.ts';

/** The new-request form's fields, as the browser sends them. */
export const VERIFIER_FORM_FIELDS = [
  'format',
  'credential_type',
  'claims',
  'trusted_issuers',
  'check_status',
  'expires_in',
  'client_id_prefix',
  'callback_url',
] as const;
export type VerifierFormField = (typeof VERIFIER_FORM_FIELDS)[number];
export type VerifierFormValues = Partial<Record<VerifierFormField, string>>;

export const CREDENTIAL_FORMATS: Array<[string, string]> = [
  ['dc+sd-jwt', 'SD-JWT VC (dc+sd-jwt)'],
  ['mso_mdoc', 'ISO mdoc (mso_mdoc)'],
  ['jwt_vc_json', 'W3C credential as a JWT (jwt_vc_json)'],
  ['ldp_vc', 'W3C credential with a Data Integrity proof (ldp_vc)'],
];

/** The one credential query the form builds is named so in the result. */
export const QUERY_ID = 'credential';

const checkBody = Compile(CreateVerifierRequestBody);
const PEM = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

const field = (name: VerifierFormField, message: string): ErrorDetail => ({ path: `/body/${name}`, message });

/** A claim path as typed: segments between slashes; `*` is every element of an array, digits an index. */
function claimPath(line: string): Array<string | number | null> {
  return line.split('/').map((segment) => {
    const s = segment.trim();
    if (s === '*') return null;
    if (/^\d{1,6}$/.test(s)) return Number(s);
    return s;
  });
}

/**
 * The form's values as the body POST /v1/verifier/requests takes: one DCQL credential query of
 * the chosen format and type with the claims listed, and the request's options. A person's
 * mistake is a 400 naming the form's fields, as a schema violation names the API's.
 */
export function verifierRequestBody(values: VerifierFormValues): CreateVerifierRequestBody {
  const problems: ErrorDetail[] = [];
  const format = values.format ?? '';
  if (!CREDENTIAL_FORMATS.some(([value]) => value === format))
    problems.push(field('format', 'choose a format'));
  const types = (values.credential_type ?? '').trim().split(/\s+/).filter(Boolean);
  if (!types.length) problems.push(field('credential_type', 'is required'));
  else if (format !== 'jwt_vc_json' && format !== 'ldp_vc' && types.length > 1)
    problems.push(field('credential_type', 'names one type for this format'));
  const lines = (values.claims ?? '')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
  const paths = lines.map(claimPath);
  if (lines.length > 50) problems.push(field('claims', 'lists at most 50 claims'));
  if (paths.some((path) => path.some((segment) => segment === '')))
    problems.push(field('claims', 'has an empty path segment (two slashes, or one at an end)'));
  if (format === 'mso_mdoc' && paths.some((path) => path.length !== 2))
    problems.push(field('claims', 'names each mdoc claim as namespace/element'));
  const expiresText = (values.expires_in ?? '').trim();
  const expires = expiresText === '' ? undefined : Number(expiresText);
  if (expires !== undefined && !(Number.isInteger(expires) && expires >= 1 && expires <= 3600))
    problems.push(field('expires_in', 'must be a whole number of seconds from 1 to 3600'));
  const prefix = values.client_id_prefix ?? '';
  const issuersText = values.trusted_issuers ?? '';
  const pems = issuersText.match(PEM) ?? [];
  const dids = issuersText.replace(PEM, '').split(/\s+/).filter(Boolean);
  const callback = (values.callback_url ?? '').trim();
  if (problems.length) throw formError(problems);

  const meta =
    format === 'dc+sd-jwt'
      ? { vct_values: types }
      : format === 'mso_mdoc'
        ? { doctype_value: types[0] }
        : { type_values: [types] };
  const body = {
    dcql_query: {
      credentials: [
        { id: QUERY_ID, format, meta, ...(paths.length ? { claims: paths.map((path) => ({ path })) } : {}) },
      ],
    },
    ...(pems.length || dids.length ? { trusted_issuers: [...pems, ...dids] } : {}),
    check_status: values.check_status === 'on',
    ...(expires !== undefined ? { expires_in: expires } : {}),
    ...(prefix ? { client_id_prefix: prefix } : {}),
    ...(callback ? { callback_url: callback } : {}),
  };
  if (!checkBody.Check(body)) {
    throw formError(
      [...checkBody.Errors(body)].slice(0, 5).map((error) => ({
        path: `/body/${fieldOfPath(error.instancePath)}`,
        message: error.message,
      })),
    );
  }
  return body as CreateVerifierRequestBody;
}

const formError = (details: ErrorDetail[]) =>
  new CofferError('invalid_request', 'The request cannot be made as it stands; see each field.', { details });

/** The form field an API body path (or an error the service names) belongs to. */
export function fieldOfPath(path: string): VerifierFormField {
  const name = path.replace(/^\/(body\/)?/, '').split('/')[0] ?? '';
  if (name === 'dcql_query' || name === 'transaction_data') return 'claims';
  return (VERIFIER_FORM_FIELDS as readonly string[]).includes(name) ? (name as VerifierFormField) : 'claims';
}
