import { AssertionError } from 'node:assert';
import type { Conditions } from '../harness.ts';
import * as request from './authorization-request.ts';
import * as metadata from './client-metadata.ts';
import * as dcql from './dcql.ts';
import { fail, mediaTypeOf, type WalletEnv } from './env.ts';
import * as presentation from './presentation.ts';
import * as requestObject from './request-object.ts';
import * as response from './response.ts';
import {
  describeVariant,
  redirectUriPrefixIsNotOffered,
  startAtVerifier,
  type VerifierVariant,
} from './variants.ts';
import * as result from './verification-result.ts';
import type { SuiteWalletWorld } from './world.ts';

/**
 * One module of the OpenID4VP 1.0 verifier plans, run the way AbstractVP1FinalVerifierTest runs
 * it, for each variant of the plan that applies: the tenant starts a request at Coffer, its
 * `openid4vp://` request is delivered to the suite's wallet, which fetches and checks the request
 * object, checks the request, presents, posts to the response_uri and checks the answer; then
 * what the verifier concluded (the tenant's result API) stands in for the suite's screenshot.
 */
export interface VerifierModule {
  /** Positive modules expect the presentation verified; negative ones rejected at this check of Coffer's. */
  expect: 'verified' | { rejectedAt: string };
  /** The happy flow's nonce checks (VP1FinalVerifierHappyFlow). */
  nonceChecks?: boolean;
  /** How the request object is fetched: GET (the base), POST with wallet_nonce, or GET twice. */
  requestUri?: 'get' | 'post' | 'get-twice';
  /** The SD-JWT+KB the module makes. */
  sdJwt?: presentation.SdJwtVariation;
  /** InvalidateNonce before the credential (SD-JWT) or the session transcript (mdoc). */
  invalidateNonce?: boolean;
  /** A signature spoiled after the SD-JWT+KB is made. */
  spoil?: 'InvalidateSdJwtKbSignature' | 'InvalidateSdJwtCredentialSignature';
  /** The SD-JWT VC signed by the suite's signer (naming its host), or one naming another host. */
  signer?: 'suite' | 'elsewhere';
}

/**
 * A module's conditions over all its variants: each condition is reported once (the first time it
 * holds), and a failure names the variant it failed in.
 */
function acrossVariants(c: Conditions) {
  const reported = new Set<string>();
  const run = async (name: string, report: () => Promise<void>, check: () => unknown, variant: string) => {
    try {
      if (reported.has(name)) {
        try {
          await check();
        } catch (error) {
          throw new AssertionError({ message: `${name}: ${(error as Error).message}` });
        }
      } else {
        await report();
        reported.add(name);
      }
    } catch (error) {
      throw new AssertionError({ message: `[${variant}] ${(error as Error).message}` });
    }
  };
  return (variant: string): Conditions => ({
    check: (name, check) => run(name, () => c.check(name, check), check, variant),
    choice: (name, clause, why, check) => run(name, () => c.choice(name, clause, why, check), check, variant),
    variant: (description) => c.variant(description),
  });
}

export async function runVerifierModule(
  c: Conditions,
  world: SuiteWalletWorld,
  variants: VerifierVariant[],
  module: VerifierModule,
  plan: 'plain' | 'haip',
) {
  const forVariant = acrossVariants(c);
  for (const variant of variants) {
    c.variant(describeVariant(variant));
    await runOnce(forVariant(describeVariant(variant)), world, variant, module);
  }
  if (plan === 'plain') c.variant(await redirectUriPrefixIsNotOffered(world));
  const sdJwt = variants.find((variant) => variant.credentialFormat === 'sd_jwt_vc');
  if (module.nonceChecks && sdJwt) {
    await c.choice(
      'CreateSdJwtKbCredential',
      'SD-JWT VC (draft-ietf-oauth-sd-jwt-vc), Issuer-signed JWT Verification Key Validation; HAIP 1.0, SD-JWT VCs: issuer identification and key resolution',
      "the suite's PID has iss = its own base URL, signed with whatever x5c it is configured with; Coffer takes an https iss only where the x5c leaf names it (a dNSName of its host, or the URI), so a real run needs a signer certificate naming the suite's host (this world's does). A leaf that does not name it is rejected at issuer_named",
      () => runOnce(silently, world, sdJwt, { expect: { rejectedAt: 'issuer_named' }, signer: 'elsewhere' }),
    );
  }
}

/** Conditions run without being reported: a side flow inside a choice. */
const silently: Conditions = {
  check: async (_name, check) => {
    await check();
  },
  choice: async (_name, _clause, _why, check) => {
    await check();
  },
  variant: () => {},
};

async function fetchRequestObject(c: Conditions, env: WalletEnv, how: VerifierModule['requestUri']) {
  if (how === 'post') {
    // VP1FinalVerifierRequestUriMethodPost is skipped unless the request says request_uri_method=post;
    // Coffer's always does, so the module always runs.
    if (env.httpParams['request_uri_method'] !== 'post') fail('the request has no request_uri_method=post');
    await c.check('CreateWalletNonce', () => requestObject.createWalletNonce(env));
    await c.check('PostToRequestUriAndExtractRequestObject', () =>
      requestObject.postToRequestUriAndExtractRequestObject(env),
    );
    const posted = env.requestUriPostResponse!;
    await c.check('EnsureHttpStatusCodeIs200', () =>
      response.ensureHttpStatusCodeIs200(posted.status, posted.body),
    );
    await c.check('EnsureContentTypeApplicationOauthAuthzReqJwt', () => {
      const type = mediaTypeOf(posted.headers.get('content-type'));
      if (type !== 'application/oauth-authz-req+jwt') fail(`the request_uri answered ${type}`);
    });
    await c.check('EnsureWalletNonceClaimMatchesPostedValue', () =>
      requestObject.ensureWalletNonceClaimMatchesPostedValue(env),
    );
    await c.check('EnsureRequestUriIsHttps', () => requestObject.ensureRequestUriIsHttps(env));
    await c.check('EnsureRequestUriHasNoFragment', () => requestObject.ensureRequestUriHasNoFragment(env));
    return;
  }
  for (let fetches = how === 'get-twice' ? 2 : 1; fetches > 0; fetches--) {
    await c.check('FetchRequestUriAndExtractRequestObject', () =>
      requestObject.fetchRequestUriAndExtractRequestObject(env),
    );
    await c.check('EnsureRequestUriIsHttps', () => requestObject.ensureRequestUriIsHttps(env));
    await c.check('EnsureRequestUriHasNoFragment', () => requestObject.ensureRequestUriHasNoFragment(env));
  }
}

/** validateRequestObject of the base module (OpenID4VP §5, RFC 9101, OIDC §6.1). */
async function validateRequestObject(c: Conditions, env: WalletEnv) {
  const ro = requestObject;
  await c.check('ValidateRequestObjectTypIsOAuthQauthReqJwt', () => ro.validateRequestObjectTyp(env));
  await c.check('OIDCCValidateRequestObjectExp', () => ro.oidccValidateRequestObjectExp(env));
  await c.check('ValidateRequestObjectIat', () => ro.validateRequestObjectIat(env));
  await c.check('EnsureNumericRequestObjectClaimsAreNotNull', () =>
    ro.ensureNumericRequestObjectClaimsAreNotNull(env),
  );
  await c.check('ValidateRequestObjectMaxAge', () => ro.validateRequestObjectMaxAge(env));
  await c.check('EnsureRequestObjectDoesNotContainRequestOrRequestUri', () =>
    ro.ensureRequestObjectDoesNotContainRequestOrRequestUri(env),
  );
  await c.check('EnsureRequestObjectDoesNotContainSubWithClientId', () =>
    ro.ensureRequestObjectDoesNotContainSubWithClientId(env),
  );
  await c.check('ValidateRequestObjectIssIfPresent', () => ro.validateRequestObjectIssIfPresent(env));
  await c.check('ValidateRequestObjectAudForVP', () => ro.validateRequestObjectAudForVP(env));
  await c.check('ValidateRequestObjectSignatureAgainstX5cHeader', () =>
    ro.validateRequestObjectSignatureAgainstX5cHeader(env),
  );
}

/** extractAuthorizationEndpointRequestParameters of the base module. */
async function extractRequest(c: Conditions, env: WalletEnv, module: VerifierModule) {
  await fetchRequestObject(c, env, module.requestUri ?? 'get');
  if (env.variant.clientIdPrefix === 'x509_hash') {
    await c.check('ExtractAndValidateX509HashClientId', () =>
      requestObject.extractAndValidateX509HashClientId(env),
    );
  }
  await validateRequestObject(c, env);
  await c.check('EnsureClientIdInAuthorizationRequestParametersMatchRequestObject', () =>
    requestObject.ensureClientIdInAuthorizationRequestParametersMatchRequestObject(env),
  );
  await c.check('ValidateEncryptedRequestObjectHasKid', () =>
    requestObject.validateEncryptedRequestObjectHasKid(env),
  );
  await c.check('EnsureOptionalAuthorizationRequestParametersMatchRequestObject', () =>
    requestObject.ensureOptionalAuthorizationRequestParametersMatchRequestObject(env),
  );
  await c.check('CheckForUnexpectedParametersInVpAuthorizationEndpointHttpRequest', () =>
    request.checkForUnexpectedParametersInVpAuthorizationEndpointHttpRequest(env),
  );
  await c.check('CreateEffectiveAuthorizationRequestParameters', () =>
    request.createEffectiveAuthorizationRequestParameters(env),
  );
  await c.check('ExtractNonceFromAuthorizationRequest', () =>
    request.extractNonceFromAuthorizationRequest(env),
  );
  if (module.nonceChecks) {
    await c.check('CheckForInvalidCharsInNonce', () => request.checkForInvalidCharsInNonce(env));
    await c.check('VP1FinalCheckNonceMinimumLength', () => request.checkNonceMinimumLength(env));
    await c.check('VP1FinalCheckNonceMaximumLength', () => request.checkNonceMaximumLength(env));
    await c.check('VP1FinalEnsureMinimumNonceEntropy', () => request.ensureMinimumNonceEntropy(env));
  }
  await c.check('EnsureAuthorizationRequestContainsPkceCodeChallenge', () =>
    request.ensureAuthorizationRequestContainsPkceCodeChallenge(env),
  );
}

/** validateAuthorizationEndpointRequestParameters of the base module. */
async function validateRequest(c: Conditions, env: WalletEnv) {
  const r = request;
  await c.check('EnsureResponseTypeIsVpToken', () => r.ensureResponseTypeIsVpToken(env));
  await c.check('ValidateResponseMode', () => r.validateResponseMode(env));
  await c.check('CheckNoClientIdSchemeParameter', () => r.checkNoClientIdSchemeParameter(env));
  await c.check('CheckNoScopeParameter', () => r.checkNoScopeParameter(env));
  await c.check('CheckRequestUriMethodParameter', () => r.checkRequestUriMethodParameter(env));
  await c.check('WarnIfRequestUriMethodInRequestObject', () =>
    requestObject.warnIfRequestUriMethodInRequestObject(env),
  );
  // The suite checks this only when request_uri_method is not post; Coffer's request says post,
  // and a wallet that fetched by GET (no wallet_nonce) must still find none (§5.10).
  if (env.walletNonce === undefined) {
    await c.check('EnsureNoWalletNonceInRequestObject', () =>
      requestObject.ensureNoWalletNonceInRequestObject(env),
    );
  }
  await c.check('CheckForUnexpectedParametersInVpAuthorizationRequest', () =>
    r.checkForUnexpectedParametersInVpAuthorizationRequest(env),
  );
  await c.check('CheckNoTransactionDataInVpAuthorizationRequest', () =>
    r.checkNoTransactionDataInVpAuthorizationRequest(env),
  );
  await c.check('ExtractVerifierInfoFromAuthorizationRequest', () =>
    r.extractVerifierInfoFromAuthorizationRequest(env),
  );
  await c.check('ValidateVerifierInfo', () => r.validateVerifierInfo(env));
  await c.check('CheckForUnexpectedParametersInVerifierInfo', () =>
    r.checkForUnexpectedParametersInVerifierInfo(env),
  );
  if (env.variant.clientIdPrefix === 'x509_san_dns') {
    await c.check('EnsureMatchingClientId', () => r.ensureMatchingClientId(env));
  }
  await c.check('EnsureValidResponseUriForAuthorizationEndpointRequest', () => r.ensureValidResponseUri(env));
  await c.check('CheckNoRedirectUriInVpAuthorizationRequest', () =>
    r.checkNoRedirectUriInVpAuthorizationRequest(env),
  );
  await c.check('CheckNoPresentationDefinitionInVpAuthorizationRequest', () =>
    r.checkNoPresentationDefinitionInVpAuthorizationRequest(env),
  );
  await c.check('VP1FinalCheckForUnexpectedParametersInVpClientMetadata', () =>
    metadata.checkForUnexpectedParametersInVpClientMetadata(env),
  );
  await c.check('VP1FinalValidateVpFormatsSupportedInClientMetadata', () =>
    metadata.validateVpFormatsSupportedInClientMetadata(env),
  );
  if (env.variant.responseMode === 'direct_post.jwt') {
    await c.check('VP1FinalCheckForKeyIdInClientMetadataJWKs', () =>
      metadata.checkForKeyIdInClientMetadataJwks(env),
    );
    await c.check('VP1FinalValidateClientMetadataJwksForEncryptedResponse', () =>
      metadata.validateClientMetadataJwksForEncryptedResponse(env),
    );
    // ValidateJwksSequence(client_metadata.jwks)
    await c.check('MapJwksToValidationLocation', () => metadata.mapJwksToValidationLocation(env));
    await c.check('EnsureJwksHasNoPrivateOrSymmetricKeyMaterial', () =>
      metadata.ensureJwksHasNoPrivateOrSymmetricKeyMaterial(env),
    );
    await c.check('ValidateJwksStructure', () => metadata.validateJwksStructure(env));
    await c.check('ParseUsableJwksKeys', () => metadata.parseUsableJwksKeys(env));
    await c.check('WarnOnUnusableJwksKeys', () => metadata.warnOnUnusableJwksKeys(env));
    if (env.variant.vpProfile === 'haip') {
      await c.check('ValidateVpClientMetadataEncryptionForHaip', () =>
        metadata.validateVpClientMetadataEncryptionForHaip(env),
      );
    }
    await c.check('VP1FinalCheckEncryptionKeyNotReused', () => metadata.checkEncryptionKeyNotReused(env));
  }
}

async function checkDcql(c: Conditions, env: WalletEnv) {
  await c.check('ExtractDCQLQueryFromAuthorizationRequest', () =>
    dcql.extractDcqlQueryFromAuthorizationRequest(env),
  );
  await c.check('ValidateDCQLQuery', () => dcql.validateDcqlQuery(env));
  await c.check('CheckForUnexpectedParametersInDcqlQuery', () =>
    dcql.checkForUnexpectedParametersInDcqlQuery(env),
  );
  await c.check('CheckForNonSelectivelyDisclosableClaimsInDcqlQuery', () =>
    dcql.checkForNonSelectivelyDisclosableClaimsInDcqlQuery(env),
  );
  await c.check('CheckForUnreferencedClaimsInDcqlQuery', () =>
    dcql.checkForUnreferencedClaimsInDcqlQuery(env),
  );
  await c.check('CheckDCQLQueryCredentialFormatMatchesTestConfiguration', () =>
    dcql.checkDcqlQueryCredentialFormatMatchesTestConfiguration(env),
  );
}

async function present(c: Conditions, env: WalletEnv, module: VerifierModule) {
  await c.check('CreateAuthorizationEndpointResponseParams', () =>
    response.createAuthorizationEndpointResponseParams(env),
  );
  if (env.variant.credentialFormat === 'sd_jwt_vc') {
    if (module.invalidateNonce) await c.check('InvalidateNonce', () => presentation.invalidateNonce(env));
    const variation = module.sdJwt ?? 'CreateSdJwtKbCredential';
    await c.check(variation, () =>
      presentation.createSdJwtKbCredential(env, variation, module.signer === 'elsewhere'),
    );
    if (module.spoil === 'InvalidateSdJwtKbSignature') {
      await c.check(module.spoil, () => presentation.invalidateSdJwtKbSignature(env));
    } else if (module.spoil === 'InvalidateSdJwtCredentialSignature') {
      await c.check(module.spoil, () => presentation.invalidateSdJwtCredentialSignature(env));
    }
  } else {
    await c.check('CreateMDocGeneratedNonce', () => presentation.createMdocGeneratedNonce(env));
    if (module.invalidateNonce) await c.check('InvalidateNonce', () => presentation.invalidateNonce(env));
    const encrypted = env.variant.responseMode === 'direct_post.jwt';
    await c.check(
      encrypted
        ? 'CreateVP1FinalVerifierIsoMdocRedirectSessionTranscriptEncrypted'
        : 'CreateVP1FinalVerifierIsoMdocRedirectSessionTranscriptUnencrypted',
      () => presentation.createIsoMdocRedirectSessionTranscript(env, encrypted),
    );
    await c.check('CreateMdocCredential', () => presentation.createMdocCredential(env));
  }
  await c.check('AddVP1FinalDCQLVPTokenToAuthorizationEndpointResponseParams', () =>
    response.addDcqlVpTokenToResponseParams(env),
  );
  if (env.variant.responseMode === 'direct_post') {
    await c.check('BuildUnsignedRequestToDirectPostEndpoint', () =>
      response.buildUnsignedRequestToDirectPostEndpoint(env),
    );
  } else {
    await c.check('VP1FinalEncryptVPResponse', () => response.encryptVpResponse(env));
  }
  await c.check('CallDirectPostEndpoint', () => response.callDirectPostEndpoint(env));
}

/** validateDirectPostEndpointResponse of the base module (§8.2, HAIP §5). */
async function validateDirectPostAnswer(c: Conditions, env: WalletEnv) {
  const answered = env.directPostResponse!;
  await c.check('EnsureHttpStatusCodeIs200', () =>
    response.ensureHttpStatusCodeIs200(answered.status, answered.body),
  );
  await c.check('EnsureContentTypeJson', () => response.ensureContentTypeJson(env));
  await c.check('ValidateDirectPostResponse', () => response.validateDirectPostResponse(env));
  await c.check('ValidateDirectPostResponseRedirectUriWhenPresent', () =>
    response.validateDirectPostResponseRedirectUriWhenPresent(env),
  );
  if (env.variant.vpProfile === 'haip') {
    await c.check('VP1FinalEnsureDirectPostResponseHasRedirectUriForHaip', () =>
      response.ensureDirectPostResponseHasRedirectUriForHaip(env),
    );
  }
}

async function runOnce(
  c: Conditions,
  world: SuiteWalletWorld,
  variant: VerifierVariant,
  module: VerifierModule,
) {
  // The tester starts the flow at the verifier under test.
  const started = await startAtVerifier(world, variant);
  const env = {
    world,
    variant,
    verifierRequestId: started.id,
    client: {},
    httpParams: {},
    responseParams: {},
    formParams: {},
  } as unknown as WalletEnv;

  // configure()
  await c.check('OIDCCGenerateServerConfiguration', () => {
    env.server = { issuer: `${world.baseUrl}/`, authorization_endpoint: `${world.baseUrl}/authorize` };
  });
  await c.check('SetRequestUriParameterSupportedToTrueInServerConfiguration', () => {
    env.server.request_uri_parameter_supported = true;
  });
  if (variant.clientIdPrefix === 'x509_san_dns') {
    // The tester configures client.client_id: the DNS name the verifier's certificate names.
    const configured = new URL(world.coffer.front.url).hostname;
    await c.check(
      'OIDCCGetStaticClientConfigurationForRPTests',
      () => configured || fail('no client configured'),
    );
    await c.check('OID4VPSetClientIdToIncludeClientIdScheme', () =>
      request.configuredX509SanDnsClientId(env, configured),
    );
  }
  await c.check('RegisterClientRequestObjectTrustAnchor', () => {
    env.trustAnchorPem = world.requestObjectTrustAnchorPem;
  });
  if (variant.vpProfile === 'haip') {
    await c.check('EnsureClientRequestObjectTrustAnchorConfigured', () => {
      if (!env.trustAnchorPem) fail('client.request_object_trust_anchor_pem is not configured');
    });
  }

  // The openid4vp:// request's query string is delivered to the suite's /authorize.
  env.httpParams = Object.fromEntries(new URL(started.authorizationRequest).searchParams);
  await extractRequest(c, env, module);
  await validateRequest(c, env);
  await checkDcql(c, env);
  await present(c, env, module);

  if (module.expect === 'verified') {
    await validateDirectPostAnswer(c, env);
    const presented =
      variant.credentialFormat === 'sd_jwt_vc' ? presentation.PRESENTED_PID : presentation.PRESENTED_MDL;
    await c.check('ExpectVerifierSuccessfulVerificationPage', () =>
      result.expectVerifierSuccessfulVerificationPage(env, presented),
    );
    return;
  }
  // AbstractVP1FinalVerifierNegativeTest: a 4xx passes at once; a 2xx (deferred verification) must
  // be a well-formed §8.2 answer, and the verifier must then report the rejection.
  if (!response.directPostWas2xx(env)) {
    await c.check('EnsureHttpStatusCodeIs4xx', () => response.ensureHttpStatusCodeIs4xx(env));
    return;
  }
  await validateDirectPostAnswer(c, env);
  const { rejectedAt } = module.expect;
  await c.check('ExpectVerifierRejectedPresentationPage', () =>
    result.expectVerifierRejectedPresentationPage(env, rejectedAt),
  );
}
