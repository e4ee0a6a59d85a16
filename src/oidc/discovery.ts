import { SUPPORTED_SCOPES } from './authorize-request.ts';
import { DPOP_ALGORITHMS } from './dpop.ts';

export const OIDC_PATHS = {
  authorization: '/v2/openidc/authorize',
  token: '/v2/openidc/token',
  userinfo: '/v2/openidc/user',
  revocation: '/v2/openidc/revoke',
  par: '/v2/openidc/par',
  endSession: '/v2/openidc/logout',
  jwks: '/.well-known/jwks.json',
} as const;

/** OpenID Connect Discovery 1.0 metadata of this provider. */
export function discoveryDocument(
  issuer: string,
  extensions: {
    grantTypes: string[];
    members: Record<string, unknown>;
    tokenEndpointAuthMethods?: string[];
  }[] = [],
) {
  return {
    ...Object.assign({}, ...extensions.map((e) => e.members)),
    issuer,
    authorization_endpoint: issuer + OIDC_PATHS.authorization,
    token_endpoint: issuer + OIDC_PATHS.token,
    userinfo_endpoint: issuer + OIDC_PATHS.userinfo,
    jwks_uri: issuer + OIDC_PATHS.jwks,
    revocation_endpoint: issuer + OIDC_PATHS.revocation,
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    pushed_authorization_request_endpoint: issuer + OIDC_PATHS.par,
    // Per client (coffer client set --require-par), not for every client.
    require_pushed_authorization_requests: false,
    dpop_signing_alg_values_supported: [...DPOP_ALGORITHMS],
    end_session_endpoint: issuer + OIDC_PATHS.endSession,
    scopes_supported: [...SUPPORTED_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [
      'authorization_code',
      'refresh_token',
      ...extensions.flatMap((e) => e.grantTypes),
    ],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['ES256'],
    token_endpoint_auth_methods_supported: [
      ...new Set([
        'client_secret_basic',
        'client_secret_post',
        'none',
        ...extensions.flatMap((e) => e.tokenEndpointAuthMethods ?? []),
      ]),
    ],
    code_challenge_methods_supported: ['S256'],
    prompt_values_supported: ['none', 'login'],
    authorization_response_iss_parameter_supported: true,
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    claims_supported: [
      'sub',
      'iss',
      'aud',
      'exp',
      'iat',
      'auth_time',
      'nonce',
      'at_hash',
      'email',
      'email_verified',
      'name',
      'given_name',
      'family_name',
      'middle_name',
      'preferred_username',
      'picture',
      'gender',
      'birthdate',
      'locale',
      'phone_number',
      'phone_number_verified',
      'address',
      'eth_address',
      'login_type',
      'did_wallet_address',
    ],
  };
}
