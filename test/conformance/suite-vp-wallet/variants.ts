import type { SuiteWalletWorld } from './world.ts';

/**
 * The variants of the verifier plans (AbstractVP1FinalVerifierTest's @VariantParameters) that a
 * run selects, and what the tester does at the verifier under test for each: here, the tenant's
 * POST /v1/verifier/requests asking for the configured credential in the configured way.
 */
export interface VerifierVariant {
  vpProfile: 'plain_vp' | 'haip';
  credentialFormat: 'sd_jwt_vc' | 'iso_mdl';
  clientIdPrefix: 'x509_san_dns' | 'x509_hash';
  responseMode: 'direct_post' | 'direct_post.jwt';
  /** Coffer signs every request and passes it by reference: `url_query` (and so `redirect_uri`) is not offered. */
  requestMethod: 'request_uri_signed';
}

export const describeVariant = (v: VerifierVariant) =>
  `${v.vpProfile}, ${v.credentialFormat}, ${v.clientIdPrefix}, ${v.requestMethod}, ${v.responseMode}`;

export type CredentialFormat = VerifierVariant['credentialFormat'];

/**
 * The plain plan's combinations that Coffer offers: both formats (as the module allows), both
 * x509 prefixes, both response modes, signed request_uri. `vp_profile` is plain_vp here (the
 * plain plan's default is haip, which the HAIP plan runs).
 */
export function plainVariants(formats: CredentialFormat[]): VerifierVariant[] {
  return formats.flatMap((credentialFormat) =>
    (['x509_san_dns', 'x509_hash'] as const).flatMap((clientIdPrefix) =>
      (['direct_post', 'direct_post.jwt'] as const).map((responseMode) => ({
        vpProfile: 'plain_vp' as const,
        credentialFormat,
        clientIdPrefix,
        responseMode,
        requestMethod: 'request_uri_signed' as const,
      })),
    ),
  );
}

/** The HAIP plan fixes x509_hash and signed request_uri; direct_post is not applicable with haip. */
export const haipVariants = (formats: CredentialFormat[]): VerifierVariant[] =>
  formats.map((credentialFormat) => ({
    vpProfile: 'haip',
    credentialFormat,
    clientIdPrefix: 'x509_hash',
    responseMode: 'direct_post.jwt',
    requestMethod: 'request_uri_signed',
  }));

/** The credential the suite presents: an SD-JWT VC PID (ARF `urn:eudi:pid:1`) or an ISO mDL. */
export const PID_VCT = 'urn:eudi:pid:1';
export const MDL_DOCTYPE = 'org.iso.18013.5.1.mDL';
export const MDL_NAMESPACE = 'org.iso.18013.5.1';

/** The query id and DCQL query the tenant asks with: one credential of the configured format. */
export function tenantQuery(format: CredentialFormat) {
  if (format === 'sd_jwt_vc') {
    return {
      id: 'pid',
      dcql_query: {
        credentials: [
          {
            id: 'pid',
            format: 'dc+sd-jwt',
            meta: { vct_values: [PID_VCT] },
            claims: [{ path: ['given_name'] }, { path: ['family_name'] }, { path: ['birthdate'] }],
          },
        ],
      },
    };
  }
  return {
    id: 'mdl',
    dcql_query: {
      credentials: [
        {
          id: 'mdl',
          format: 'mso_mdoc',
          meta: { doctype_value: MDL_DOCTYPE },
          claims: [
            { path: [MDL_NAMESPACE, 'given_name'] },
            { path: [MDL_NAMESPACE, 'family_name'] },
            { path: [MDL_NAMESPACE, 'birth_date'] },
          ],
        },
      ],
    },
  };
}

/** Where a HAIP tenant sends the person's browser after the wallet answered (HAIP §5: the response carries a redirect_uri). */
export const TENANT_RETURN = 'https://shop.example/after-wallet';

/**
 * The tester starts the flow at the verifier: the tenant asks Coffer for the configured credential
 * with the variant's client identifier prefix and response mode, trusting the suite's credential
 * signer; a HAIP tenant asks same-device, with a redirect_uri. Returns the request's id and the
 * `openid4vp://` request the tester pastes into the suite.
 */
export async function startAtVerifier(world: SuiteWalletWorld, variant: VerifierVariant) {
  const { dcql_query } = tenantQuery(variant.credentialFormat);
  const created = await world.coffer.createRequest({
    dcql_query,
    client_id_prefix: variant.clientIdPrefix,
    response_mode: variant.responseMode,
    trusted_issuers: [world.credentialSigner.ca.pem],
    ...(variant.vpProfile === 'haip' ? { redirect_uri: TENANT_RETURN } : {}),
  });
  if (created.status !== 201)
    throw new Error(`the tenant's request answered ${created.status}: ${created.text}`);
  return {
    id: created.body.data.id as string,
    authorizationRequest: created.body.data.authorization_request as string,
  };
}

/**
 * The plan's other combination, the redirect_uri prefix with url_query (an unsigned request by
 * value, OpenID4VP 1.0 §5.9.3), is one Coffer does not offer: it signs every request. A tenant
 * asking for it is refused; returns the sentence for the report.
 */
export async function redirectUriPrefixIsNotOffered(world: SuiteWalletWorld): Promise<string> {
  const asked = await world.coffer.createRequest({
    dcql_query: tenantQuery('sd_jwt_vc').dcql_query,
    client_id_prefix: 'redirect_uri',
  });
  if (asked.status !== 400) throw new Error(`a tenant asking for redirect_uri got ${asked.status}, not 400`);
  return 'redirect_uri + url_query: not offered, Coffer signs every request (client_id_prefix redirect_uri is a 400)';
}
