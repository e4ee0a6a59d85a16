import { fail, isObject, type Json, type WalletEnv } from './env.ts';

/**
 * The suite's conditions on the DCQL query (OpenID4VP 1.0 §6, Appendix B), reimplemented from
 * what its DCQL JSON schema and semantic checks describe: the structure of a query for dc+sd-jwt
 * and mso_mdoc credentials, the members each part may have, and the references between parts.
 */

const ID = /^[A-Za-z0-9_-]+$/;
const SD_JWT = 'dc+sd-jwt';
const MDOC = 'mso_mdoc';

/** Members the suite's schema knows, per part of a query (anything else is an unexpected parameter). */
const MEMBERS = {
  query: ['credentials', 'credential_sets'],
  credential: [
    'id',
    'format',
    'multiple',
    'require_cryptographic_holder_binding',
    'meta',
    'claims',
    'claim_sets',
    'trusted_authorities',
  ],
  sdJwtMeta: ['vct_values'],
  mdocMeta: ['doctype_value'],
  sdJwtClaim: ['id', 'path', 'values'],
  mdocClaim: ['id', 'path', 'values', 'intent_to_retain'],
  trustedAuthority: ['type', 'values'],
  credentialSet: ['options', 'required'],
};

/** ExtractDCQLQueryFromAuthorizationRequest (§6): dcql_query is present and an object. */
export function extractDcqlQueryFromAuthorizationRequest(env: WalletEnv) {
  const query = env.effective.dcql_query;
  if (!isObject(query)) fail('the request has no dcql_query object');
  env.dcql = query;
}

const nonEmptyArray = (value: unknown, what: string): Json[] =>
  Array.isArray(value) && value.length > 0 ? value : fail(`${what} must be a non-empty array`);
const idString = (value: unknown, what: string) =>
  typeof value === 'string' && ID.test(value) ? value : fail(`${what} must be an id ([A-Za-z0-9_-]+)`);
const optionalBoolean = (value: unknown, what: string) =>
  value === undefined || typeof value === 'boolean' || fail(`${what} must be a boolean`);

function checkValues(values: unknown, what: string) {
  if (values === undefined) return;
  for (const value of nonEmptyArray(values, what)) {
    const ok =
      (typeof value === 'string' && value !== '') || Number.isInteger(value) || typeof value === 'boolean';
    if (!ok) fail(`${what} holds ${JSON.stringify(value)}, not a non-empty string, integer or boolean`);
  }
}

function checkClaim(claim: Json, format: string, what: string, needsId: boolean) {
  if (!isObject(claim)) fail(`${what} is not an object`);
  if (claim.id !== undefined || needsId) idString(claim.id, `${what}.id`);
  const path = nonEmptyArray(claim.path, `${what}.path`);
  if (format === MDOC) {
    if (path.length !== 2 || path.some((part) => typeof part !== 'string' || part === '')) {
      fail(`${what}.path must be [namespace, element identifier]`);
    }
    optionalBoolean(claim.intent_to_retain, `${what}.intent_to_retain`);
  } else {
    for (const part of path) {
      const ok =
        (typeof part === 'string' && part !== '') || (Number.isInteger(part) && part >= 0) || part === null;
      if (!ok) fail(`${what}.path holds ${JSON.stringify(part)}`);
    }
  }
  checkValues(claim.values, `${what}.values`);
}

function checkCredentialQuery(credential: Json, index: number) {
  const what = `credentials[${index}]`;
  if (!isObject(credential)) fail(`${what} is not an object`);
  const { format } = credential;
  if (format !== SD_JWT && format !== MDOC)
    fail(`${what}.format ${JSON.stringify(format)} is not dc+sd-jwt or mso_mdoc`);
  idString(credential.id, `${what}.id`);
  optionalBoolean(credential.multiple, `${what}.multiple`);
  optionalBoolean(
    credential.require_cryptographic_holder_binding,
    `${what}.require_cryptographic_holder_binding`,
  );
  if (!isObject(credential.meta)) fail(`${what}.meta is required`);
  if (format === SD_JWT) {
    for (const vct of nonEmptyArray(credential.meta.vct_values, `${what}.meta.vct_values`)) {
      if (typeof vct !== 'string' || vct === '') fail(`${what}.meta.vct_values holds ${JSON.stringify(vct)}`);
    }
  } else if (typeof credential.meta.doctype_value !== 'string' || credential.meta.doctype_value === '') {
    fail(`${what}.meta.doctype_value is required`);
  }
  const hasClaimSets = credential.claim_sets !== undefined;
  if (hasClaimSets && credential.claims === undefined) fail(`${what} has claim_sets but no claims`);
  if (credential.claims !== undefined) {
    for (const [i, claim] of nonEmptyArray(credential.claims, `${what}.claims`).entries()) {
      checkClaim(claim, format, `${what}.claims[${i}]`, hasClaimSets);
    }
  }
  if (hasClaimSets) {
    for (const option of nonEmptyArray(credential.claim_sets, `${what}.claim_sets`)) {
      for (const id of nonEmptyArray(option, `${what}.claim_sets[]`)) idString(id, `${what}.claim_sets[][]`);
    }
  }
  if (credential.trusted_authorities !== undefined) {
    for (const authority of nonEmptyArray(credential.trusted_authorities, `${what}.trusted_authorities`)) {
      if (!isObject(authority) || !['aki', 'etsi_tl', 'openid_federation'].includes(authority.type)) {
        fail(`${what}.trusted_authorities has an entry of unknown type`);
      }
      nonEmptyArray(authority.values, `${what}.trusted_authorities[].values`);
    }
  }
}

/** The references and uniqueness rules of §6: ids, claim ids and claim paths unique; sets name what exists. */
function checkReferences(query: Json) {
  const credentialIds = new Set<string>();
  for (const credential of query.credentials as Json[]) {
    if (credentialIds.has(credential.id)) fail(`credential id ${credential.id} is used twice`);
    credentialIds.add(credential.id);
    const claimIds = new Set<string>();
    const paths = new Set<string>();
    for (const claim of (credential.claims ?? []) as Json[]) {
      if (claim.id !== undefined) {
        if (claimIds.has(claim.id)) fail(`claim id ${claim.id} is used twice in ${credential.id}`);
        claimIds.add(claim.id);
      }
      const path = JSON.stringify(claim.path);
      if (paths.has(path)) fail(`${credential.id} points to the claim ${path} twice (§6.1)`);
      paths.add(path);
    }
    for (const option of (credential.claim_sets ?? []) as Json[][]) {
      for (const id of option)
        if (!claimIds.has(id)) fail(`claim_sets of ${credential.id} names an unknown claim ${id}`);
    }
  }
  for (const set of (query.credential_sets ?? []) as Json[]) {
    for (const option of (set.options ?? []) as Json[][]) {
      for (const id of option)
        if (!credentialIds.has(id)) fail(`credential_sets names an unknown credential ${id}`);
    }
  }
}

/** ValidateDCQLQuery (§6): the structure of the query, then its references. Unknown members are the next condition's. */
export function validateDcqlQuery(env: WalletEnv) {
  const query = env.dcql;
  nonEmptyArray(query.credentials, 'credentials').forEach(checkCredentialQuery);
  if (query.credential_sets !== undefined) {
    for (const set of nonEmptyArray(query.credential_sets, 'credential_sets')) {
      if (!isObject(set)) fail('a credential set is not an object');
      for (const option of nonEmptyArray(set.options, 'credential_sets[].options')) {
        for (const id of nonEmptyArray(option, 'credential_sets[].options[]'))
          idString(id, 'a credential set option');
      }
      optionalBoolean(set.required, 'credential_sets[].required');
    }
  }
  checkReferences(query);
}

function unknownMembers(value: Json, known: string[], where: string): string[] {
  return isObject(value)
    ? Object.keys(value)
        .filter((name) => !known.includes(name))
        .map((name) => `${where}.${name}`)
    : [];
}

/** CheckForUnexpectedParametersInDcqlQuery (§6): no member the DCQL schema does not define. */
export function checkForUnexpectedParametersInDcqlQuery(env: WalletEnv) {
  const query = env.dcql;
  const unknown = unknownMembers(query, MEMBERS.query, 'dcql_query');
  for (const [index, credential] of ((query.credentials ?? []) as Json[]).entries()) {
    const where = `credentials[${index}]`;
    const mdoc = credential.format === MDOC;
    unknown.push(...unknownMembers(credential, MEMBERS.credential, where));
    unknown.push(
      ...unknownMembers(credential.meta, mdoc ? MEMBERS.mdocMeta : MEMBERS.sdJwtMeta, `${where}.meta`),
    );
    for (const [i, claim] of ((credential.claims ?? []) as Json[]).entries()) {
      unknown.push(
        ...unknownMembers(claim, mdoc ? MEMBERS.mdocClaim : MEMBERS.sdJwtClaim, `${where}.claims[${i}]`),
      );
    }
    for (const authority of (credential.trusted_authorities ?? []) as Json[]) {
      unknown.push(...unknownMembers(authority, MEMBERS.trustedAuthority, `${where}.trusted_authorities[]`));
    }
  }
  for (const set of (query.credential_sets ?? []) as Json[]) {
    unknown.push(...unknownMembers(set, MEMBERS.credentialSet, 'credential_sets[]'));
  }
  if (unknown.length) fail(`the DCQL query has members the schema does not define: ${unknown.join(', ')}`);
}

/** SD-JWT VC claims that are never selectively disclosable (SD-JWT VC §3.2.2.2). */
const ALWAYS_DISCLOSED = ['iss', 'nbf', 'exp', 'cnf', 'vct', 'vct#integrity', 'status', 'aka_vcts'];

/** CheckForNonSelectivelyDisclosableClaimsInDcqlQuery: a dc+sd-jwt query does not ask for a claim that is always there. */
export function checkForNonSelectivelyDisclosableClaimsInDcqlQuery(env: WalletEnv) {
  for (const credential of (env.dcql.credentials ?? []) as Json[]) {
    if (credential.format !== SD_JWT) continue;
    for (const claim of (credential.claims ?? []) as Json[]) {
      const [first] = claim.path ?? [];
      if (typeof first === 'string' && ALWAYS_DISCLOSED.includes(first)) {
        fail(`${credential.id} asks for ${first}, which is never selectively disclosed`);
      }
    }
  }
}

/** CheckForUnreferencedClaimsInDcqlQuery (§6.4.1): with claim_sets, every claims entry is in some option. */
export function checkForUnreferencedClaimsInDcqlQuery(env: WalletEnv) {
  for (const credential of (env.dcql.credentials ?? []) as Json[]) {
    if (!Array.isArray(credential.claim_sets)) continue;
    const referenced = new Set((credential.claim_sets as Json[][]).flat());
    for (const claim of (credential.claims ?? []) as Json[]) {
      if (typeof claim.id === 'string' && !referenced.has(claim.id)) {
        fail(`claim ${claim.id} of ${credential.id} is in no claim set`);
      }
    }
  }
}

/** CheckDCQLQueryCredentialFormatMatchesTestConfiguration: every credential asked for is of the configured format. */
export function checkDcqlQueryCredentialFormatMatchesTestConfiguration(env: WalletEnv) {
  const expected = env.variant.credentialFormat === 'sd_jwt_vc' ? SD_JWT : MDOC;
  const credentials = env.dcql.credentials;
  if (!Array.isArray(credentials) || credentials.length === 0) fail('the DCQL query has no credentials');
  for (const credential of credentials) {
    if (credential.format === undefined) fail(`${credential.id} has no format`);
    if (credential.format !== expected)
      fail(`${credential.id} asks for ${credential.format}, not the configured ${expected}`);
  }
}
