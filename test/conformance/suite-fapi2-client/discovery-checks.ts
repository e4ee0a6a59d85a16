import assert from 'node:assert/strict';
import type { Conditions } from '../harness.ts';

// biome-ignore lint/suspicious/noExplicitAny: metadata is arbitrary JSON
type Json = any;

/**
 * The checks of FAPI2SPFinalDiscoveryEndpointVerification on the authorization server's RFC 8414
 * metadata, as VCIHaipProfileBehavior runs them (with VCIProfileBehavior's discovery checks).
 */

/** The FAPI 2.0 Security Profile's algorithms (§5.4): PS256, ES256, EdDSA with Ed25519. */
export const FAPI2_ALGORITHMS = ['PS256', 'ES256', 'EdDSA', 'Ed25519'];

const isHttpsUrl = (value: unknown) => {
  if (typeof value !== 'string') return false;
  try {
    return new URL(value).protocol === 'https:';
  } catch {
    return false;
  }
};

/** AbstractValidateJsonArray.validate: the member is an array with at least one of `values`. */
function containsOneOf(metadata: Json, member: string, values: string[]) {
  const actual = metadata[member];
  assert.ok(actual !== undefined, `${member}: not found`);
  assert.ok(Array.isArray(actual), `${member} should be an array`);
  assert.ok(
    values.some((v) => actual.includes(v)),
    `${member} has none of ${values.join(', ')}`,
  );
}

/**
 * The members RFC 8414, OpenID Connect Discovery and their registered extensions define, with
 * their JSON types (what the suite's AS metadata schema describes; reimplemented here).
 */
const MEMBER_TYPES: Record<string, 'uri' | 'string' | 'boolean' | 'strings' | 'object'> = {
  issuer: 'uri',
  authorization_endpoint: 'uri',
  token_endpoint: 'uri',
  userinfo_endpoint: 'uri',
  jwks_uri: 'uri',
  registration_endpoint: 'uri',
  revocation_endpoint: 'uri',
  introspection_endpoint: 'uri',
  end_session_endpoint: 'uri',
  pushed_authorization_request_endpoint: 'uri',
  challenge_endpoint: 'uri',
  scopes_supported: 'strings',
  response_types_supported: 'strings',
  response_modes_supported: 'strings',
  grant_types_supported: 'strings',
  acr_values_supported: 'strings',
  subject_types_supported: 'strings',
  id_token_signing_alg_values_supported: 'strings',
  token_endpoint_auth_methods_supported: 'strings',
  token_endpoint_auth_signing_alg_values_supported: 'strings',
  revocation_endpoint_auth_methods_supported: 'strings',
  code_challenge_methods_supported: 'strings',
  dpop_signing_alg_values_supported: 'strings',
  claims_supported: 'strings',
  prompt_values_supported: 'strings',
  authorization_details_types_supported: 'strings',
  client_attestation_signing_alg_values_supported: 'strings',
  client_attestation_pop_signing_alg_values_supported: 'strings',
  ui_locales_supported: 'strings',
  claims_locales_supported: 'strings',
  userinfo_signing_alg_values_supported: 'strings',
  request_object_signing_alg_values_supported: 'strings',
  require_pushed_authorization_requests: 'boolean',
  authorization_response_iss_parameter_supported: 'boolean',
  claims_parameter_supported: 'boolean',
  request_parameter_supported: 'boolean',
  request_uri_parameter_supported: 'boolean',
  require_request_uri_registration: 'boolean',
  tls_client_certificate_bound_access_tokens: 'boolean',
  'pre-authorized_grant_anonymous_access_supported': 'boolean',
  service_documentation: 'uri',
  op_policy_uri: 'uri',
  op_tos_uri: 'uri',
  mtls_endpoint_aliases: 'object',
};

/** ValidateServerMetadataAgainstSchema: each known member present has its type. */
export function validateMetadataTypes(metadata: Json) {
  for (const [member, type] of Object.entries(MEMBER_TYPES)) {
    const value = metadata[member];
    if (value === undefined) continue;
    if (type === 'uri') assert.ok(typeof value === 'string' && URL.canParse(value), `${member} is not a URI`);
    if (type === 'string') assert.equal(typeof value, 'string', member);
    if (type === 'boolean') assert.equal(typeof value, 'boolean', member);
    if (type === 'strings')
      assert.ok(
        Array.isArray(value) && value.every((v) => typeof v === 'string'),
        `${member} is not an array of strings`,
      );
    if (type === 'object') assert.ok(value && typeof value === 'object' && !Array.isArray(value), member);
  }
}

/** CheckForUnexpectedParametersInServerMetadata: members no registry defines. */
export function unexpectedMembers(metadata: Json): string[] {
  // OpenID Connect Discovery members the table above does not type but the schema knows.
  const known = new Set([
    ...Object.keys(MEMBER_TYPES),
    'display_values_supported',
    'claim_types_supported',
    'check_session_iframe',
    'frontchannel_logout_supported',
    'backchannel_logout_supported',
    'signed_metadata',
    'introspection_endpoint_auth_methods_supported',
  ]);
  return Object.keys(metadata).filter((m) => !known.has(m));
}

const BCP47 = /^[a-zA-Z]{2,3}(-[a-zA-Z]{4})?(-([a-zA-Z]{2}|\d{3}))?(-[a-zA-Z0-9]{5,8})*$/;

export async function checkDiscovery(
  c: Conditions,
  metadata: Json,
  metadataUrl: string,
  configuration: Json,
) {
  await c.check('CheckDiscEndpointResponseTypeCodeSupported', () =>
    containsOneOf(metadata, 'response_types_supported', ['code']),
  );
  await c.check('EnsureAuthorizationResponseIssParameterSupportedIsTrue', () =>
    assert.equal(metadata.authorization_response_iss_parameter_supported, true),
  );
  await c.check('CheckDiscEndpointPARSupported', () =>
    assert.ok(isHttpsUrl(metadata.pushed_authorization_request_endpoint)),
  );
  await c.check('CheckOauthDiscEndpointDiscoveryUrl', () => {
    const issuer = new URL(metadata.issuer);
    const path = issuer.pathname === '/' ? '' : issuer.pathname;
    assert.equal(metadataUrl, `${issuer.origin}/.well-known/oauth-authorization-server${path}`);
  });
  await c.check('CheckOauthDiscEndpointIssuer', () => {
    const url = new URL(metadataUrl);
    const issuerPath = url.pathname.replace(/^\/\.well-known\/oauth-authorization-server/, '');
    assert.equal(metadata.issuer, `${url.origin}${issuerPath}`);
  });
  await c.check('CheckDiscEndpointIssuerIsValidUrl', () => {
    const issuer = new URL(metadata.issuer);
    assert.equal(issuer.protocol, 'https:');
    assert.ok(issuer.hostname && !issuer.search && !issuer.hash && !issuer.username && !issuer.password);
  });
  await c.check('ValidateServerMetadataAgainstSchema', () => validateMetadataTypes(metadata));
  await c.check('CheckForUnexpectedParametersInServerMetadata', () =>
    assert.deepEqual(unexpectedMembers(metadata), []),
  );
  await c.check('FAPI2CheckDpopSigningAlgValuesSupported', () =>
    containsOneOf(metadata, 'dpop_signing_alg_values_supported', FAPI2_ALGORITHMS),
  );
  await c.check('CheckDiscEndpointTokenEndpointAuthMethodsSupportedContainsAttestation', () =>
    containsOneOf(metadata, 'token_endpoint_auth_methods_supported', ['attest_jwt_client_auth']),
  );
  await c.check('FAPI2CheckDiscEndpointTokenEndpointAuthSigningAlgValuesSupported', () => {
    // Checked only when private_key_jwt is offered.
    if (metadata.token_endpoint_auth_methods_supported?.includes('private_key_jwt'))
      containsOneOf(metadata, 'token_endpoint_auth_signing_alg_values_supported', FAPI2_ALGORITHMS);
  });
  await c.check('FAPI2CheckDiscEndpointUserinfoSigningAlgValuesSupported', () => {
    if (metadata.userinfo_signing_alg_values_supported !== undefined)
      containsOneOf(metadata, 'userinfo_signing_alg_values_supported', FAPI2_ALGORITHMS);
  });
  await c.check('CheckDiscEndpointTokenEndpoint', () => assert.ok(isHttpsUrl(metadata.token_endpoint)));
  await c.check('CheckDiscEndpointRegistrationEndpoint', () => {
    if (metadata.registration_endpoint !== undefined) assert.ok(isHttpsUrl(metadata.registration_endpoint));
  });
  await c.check('EnsureServerConfigurationSupportsCodeChallengeMethodS256', () =>
    containsOneOf(metadata, 'code_challenge_methods_supported', ['S256']),
  );
  await c.check('CheckDiscEndpointScopesSupportedSyntax', () => checkScopesSyntax(metadata));
  await c.check('CheckDiscEndpointLocalesSyntax', () => checkLocales(metadata));
  await c.check('CheckDiscEndpointLocalesCanonicalCasing', () => checkLocaleCasing(metadata));
  await c.check('EnsureServerConfigurationSupportsAttestJwtClientAuth', () =>
    containsOneOf(metadata, 'token_endpoint_auth_methods_supported', ['attest_jwt_client_auth']),
  );
  await c.check('CheckDiscEndpointClientAttestationSigningAlgValuesSupported', () => {
    assert.ok(metadata.token_endpoint_auth_methods_supported?.includes('attest_jwt_client_auth'));
    for (const member of [
      'client_attestation_signing_alg_values_supported',
      'client_attestation_pop_signing_alg_values_supported',
    ]) {
      assert.ok(
        Array.isArray(metadata[member]) && metadata[member].length > 0,
        `${member} is missing or empty`,
      );
    }
  });
  await c.check('CheckDiscRequirePushedAuthorizationRequestsIsABoolean', () => {
    const value = metadata.require_pushed_authorization_requests;
    if (value !== undefined) assert.equal(typeof value, 'boolean');
  });
  await c.check('CheckDiscEndpointAuthorizationEndpoint', () =>
    assert.ok(isHttpsUrl(metadata.authorization_endpoint)),
  );
  // VCIProfileBehavior.DiscoveryEndpointChecks
  await c.check('CheckDiscEndpointGrantTypesSupportedContainsAuthorizationCode', () => {
    if (metadata.grant_types_supported !== undefined)
      containsOneOf(metadata, 'grant_types_supported', ['authorization_code']);
  });
  await c.check('CheckDiscEndpointAllEndpointsAreHttps', () => {
    for (const [member, value] of Object.entries(metadata)) {
      if (member.endsWith('_endpoint') || member === 'jwks_uri')
        assert.ok(isHttpsUrl(value), `${member} is not https`);
    }
  });
  await c.check('VCIEnsureAuthorizationDetailsTypesSupportedContainOpenIdCredentialIfScopeIsMissing', () => {
    if (typeof configuration.scope !== 'string')
      containsOneOf(metadata, 'authorization_details_types_supported', ['openid_credential']);
  });
}

/** CheckDiscEndpointScopesSupportedSyntax: RFC 6749 §3.3 scope tokens. */
export function checkScopesSyntax(metadata: Json) {
  const scopes = metadata.scopes_supported;
  if (scopes === undefined) return;
  assert.ok(Array.isArray(scopes));
  for (const scope of scopes)
    assert.match(scope, /^[\x21\x23-\x5B\x5D-\x7E]+$/, `scope ${JSON.stringify(scope)}`);
}

function checkLocales(metadata: Json) {
  for (const member of ['ui_locales_supported', 'claims_locales_supported']) {
    for (const tag of metadata[member] ?? []) assert.match(tag, BCP47, `${member}: ${tag}`);
  }
}

function checkLocaleCasing(metadata: Json) {
  for (const member of ['ui_locales_supported', 'claims_locales_supported']) {
    for (const tag of (metadata[member] ?? []) as string[]) {
      const canonical = tag
        .split('-')
        .map((part, i) =>
          i === 0
            ? part.toLowerCase()
            : part.length === 4
              ? part[0]!.toUpperCase() + part.slice(1).toLowerCase()
              : part.length === 2
                ? part.toUpperCase()
                : part.toLowerCase(),
        )
        .join('-');
      assert.equal(tag, canonical);
    }
  }
}
