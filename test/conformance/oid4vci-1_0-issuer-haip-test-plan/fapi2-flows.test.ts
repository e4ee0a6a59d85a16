import assert from 'node:assert/strict';
import { conformancePlan } from '../harness.ts';
import * as cond from '../suite-fapi2-client/conditions.ts';
import { checkDiscovery } from '../suite-fapi2-client/discovery-checks.ts';
import { Fapi2Run } from '../suite-fapi2-client/fapi2-flow.ts';
import {
  type HaipIssuerWorld,
  MDOC_CONFIGURATION,
  startHaipIssuerWorld,
} from '../suite-fapi2-client/haip-world.ts';
import { type Exchange, exchange } from '../suite-fapi2-client/http.ts';
import { randomString } from '../suite-fapi2-client/keys.ts';
import { tlsIsTheDeployments } from '../suite-fapi2-client/tls.ts';

/**
 * The FAPI 2.0 Security Profile authorization-server modules of the HAIP issuer plan that test
 * the whole flow: discovery, the happy flow with two clients, and the variations of it that
 * should still succeed. Run against the authorization server of a tenant issuer enabled with
 * `coffer issuer enable --haip` (Coffer's OP), the suite playing a wallet that authenticates
 * with a client attestation, binds its tokens with DPoP and asks by scope.
 */
conformancePlan<HaipIssuerWorld>('oid4vci-1_0-issuer-haip-test-plan', {
  file: import.meta.filename,
  setup: () => startHaipIssuerWorld('flows'),
  teardown: (world) => world.close(),
  modules: {
    'fapi2-security-profile-final-discovery-end-point-verification': async (c, world) => {
      const run = new Fapi2Run(c, world);
      await run.fetchServerConfiguration({ discovery: true });
      await run.c.check('VCISetDiscoveryUrlFromAuthorizationServer', () => assert.ok(run.server.as.issuer));
      const configuration =
        run.server.issuerMetadata.credential_configurations_supported[world.configurationId];
      await checkDiscovery(run.c, run.server.as, run.server.asMetadataUrl, configuration);
    },

    'fapi2-security-profile-final-happy-flow': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure({ secondClient: true });
      await mdocIsIssuerInitiatedOnly(run);
      const first = await run.obtainTokens(run.client1);
      await c.check('ExtractTLSTestValuesFromResourceConfiguration', () =>
        assert.ok(new URL(run.server.credentialEndpoint).host),
      );
      await tlsIsTheDeployments(run.c, run.server.credentialEndpoint);
      await run.requestProtectedResource(run.client1, first.tokens);

      // performAdditionalResourceEndpointTests
      await run.c.check('DisallowAccessTokenInQuery', async () => {
        const cNonce = await run.fetchCNonce();
        const body = await run.credentialRequestBody(run.client1, cNonce);
        const url = new URL(run.server.credentialEndpoint);
        url.searchParams.set('access_token', first.tokens.accessToken);
        const answer = await exchange(run.fetch, url.href, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        assert.ok(answer.status < 200 || answer.status >= 300, `HTTP ${answer.status}`);
      });
      await run.c.check('AddIpV6FapiCustomerIpAddressToResourceEndpointRequest', () => assert.ok(true));
      await run.c.check('SetUtf8JsonAcceptHeadersForResourceEndpointRequest', () => assert.ok(true));
      const utf8 = await run.callCredentialEndpoint(run.client1, first.tokens, {
        headers: {
          'x-fapi-customer-ip-address': '2001:db8::1020',
          accept: 'application/json; charset=utf-8',
          'accept-charset': 'utf-8',
        },
      });
      await run.expectRepeatedCredentialSuccess(utf8);
      await run.c.check('SetPermissiveAcceptHeaderForResourceEndpointRequest', () => assert.ok(true));
      const permissive = await run.callCredentialEndpoint(run.client1, first.tokens, {
        headers: { accept: '*/*' },
      });
      await run.expectRepeatedCredentialSuccess(permissive);
      await run.c.check('ClearAcceptHeaderForResourceEndpointRequest', () => assert.ok(true));

      // The second client: a 128-character state, a dpop_jkt form parameter (no DPoP proof at
      // PAR), the redirect's parameters in reverse order, a redirect URI with a query.
      const client2 = run.client2!;
      const request = await run.createAuthorizationRequest(client2);
      await run.c.check('GenerateDpopKey', () => assert.ok(client2.dpop()));
      await run.addDpopJkt(request);
      const second = await run.obtainTokens(client2, { request, redirect: 'reordered' });
      await run.requestProtectedResource(client2, second.tokens);

      // switchToClient1AndTryClient2AccessToken: client 1's DPoP key with client 2's token.
      const stolen = await run.callCredentialEndpoint(run.client1, {
        ...second.tokens,
        dpopKey: run.client1.dpop(),
      });
      await run.c.check('EnsureHttpStatusCodeIs4xx', () => cond.ensureHttpStatusCodeIs4xx(stolen.response));
    },

    'fapi2-security-profile-final-user-rejects-authentication': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure({ secondClient: true });
      for (const client of [run.client1, run.client2!]) {
        const request = await run.createAuthorizationRequest(client, { stateLength: 128 });
        const { requestUri } = await run.processParResponse(await run.callParEndpoint(request));
        const visit = await run.visit(run.redirectUrl(request, requestUri, 'duplicates'));
        // The person cancels at the log-in page instead of logging in.
        const callback = cond.callbackOf(await run.decline(visit));
        await run.processErrorCallback(callback, request, {
          condition: 'ExpectAccessDeniedErrorFromAuthorizationEndpointDueToUserRejectingRequest',
          errors: ['access_denied'],
        });
        if (client === run.client2) {
          await run.c.check('CheckMatchingCallbackParameters', () =>
            cond.checkMatchingCallbackParameters(callback, request.redirectUri),
          );
        }
      }
    },

    'fapi2-security-profile-final-ensure-authorization-request-without-state-success': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      const request = await run.createAuthorizationRequest(run.client1, { withoutState: true });
      const { callback } = await run.authorize(request);
      await run.c.check('CheckMatchingCallbackParameters', () =>
        cond.checkMatchingCallbackParameters(callback, request.redirectUri),
      );
      await run.c.check('CheckIfAuthorizationEndpointError', () =>
        cond.checkIfAuthorizationEndpointError(callback.query),
      );
      await run.c.check('VerifyNoStateInAuthorizationResponse', () =>
        cond.verifyNoStateInAuthorizationResponse(callback.query),
      );
      const code = await run.processCallback(callback, request);
      const tokens = await run.processTokenResponse(
        run.client1,
        await run.callTokenEndpoint(run.client1, await run.tokenRequestForCode(request, code)),
      );
      await run.requestProtectedResource(run.client1, tokens);
    },

    'fapi2-security-profile-final-access-token-type-header-case-sensitivity': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      const { tokens } = await run.obtainTokens(run.client1);
      // SetAccessTokenTypeToInvertedCase (RFC 9110 §11.1: the scheme is case-insensitive).
      let inverted = '';
      await run.c.check('SetAccessTokenTypeToInvertedCase', () => {
        inverted = [...tokens.tokenType]
          .map((ch) => (ch === ch.toUpperCase() ? ch.toLowerCase() : ch.toUpperCase()))
          .join('');
        assert.notEqual(inverted, tokens.tokenType);
      });
      const call = await run.callCredentialEndpoint(run.client1, { ...tokens, tokenType: inverted });
      await run.validateCredentialResponse(call);
    },

    'fapi2-security-profile-final-refresh-token': {
      notApplicable: {
        clause: 'HAIP 1.0 §4.4 (Token Endpoint: refresh tokens RECOMMENDED), OpenID4VCI 1.0 §14.5',
        why: "Coffer issues no refresh token to wallets (an issuance is fetched with its access token; a new credential is a new issuance), so the suite finds none after the token response and skips the module (FAPIEnsureServerConfigurationDoesNotSupportRefreshToken, then SKIPPED); the authorization server's grant_types_supported names refresh_token for the OP's own registered clients",
      },
      run: async (c, world) => {
        const run = await new Fapi2Run(c, world).configure({ secondClient: true });
        const request = await run.createAuthorizationRequest(run.client1);
        await run.c.check('AddPromptConsentToAuthorizationEndpointRequestIfScopeContainsOfflineAccess', () =>
          assert.ok(!request.params['scope']!.split(' ').includes('offline_access')),
        );
        const { tokens } = await run.obtainTokens(run.client1, { request });
        await run.requestProtectedResource(run.client1, tokens);
        await run.c.check('ExtractRefreshTokenFromTokenResponse', () =>
          assert.equal(tokens.response.body.refresh_token, undefined, 'a refresh token was issued'),
        );
        await run.c.choice(
          'FAPIEnsureServerConfigurationDoesNotSupportRefreshToken',
          'OpenID Connect Discovery 1.0 §3 (grant_types_supported), HAIP 1.0 §4.4',
          "The authorization server is Coffer's OP, shared by its registered apps (which get refresh tokens with offline_access) and by wallets (which do not): its metadata lists refresh_token for the former",
          () => assert.ok(run.server.as.grant_types_supported.includes('refresh_token')),
        );
      },
    },

    'fapi2-security-profile-final-ensure-client-id-in-token-endpoint': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure({ secondClient: true });
      const request = await run.createAuthorizationRequest(run.client1);
      const { callback } = await run.authorize(request);
      const code = await run.processCallback(callback, request);
      const params = await run.tokenRequestForCode(request, code);
      // The code of client 1, sent with client 2's client_id and client 2's attestation.
      await run.c.check('AddClientIdToRequest', () => {
        params['client_id'] = run.client2!.clientId;
      });
      const response = await run.callTokenEndpoint(run.client2!, params);
      await run.c.check('CheckTokenEndpointHttpStatusIs400Allowing401ForInvalidClientError', () =>
        cond.checkTokenStatus400Allowing401ForInvalidClient(response),
      );
      await run.c.check('CheckTokenEndpointReturnedJsonContentType', () =>
        cond.ensureContentTypeJson(response),
      );
      await run.c.check('CheckErrorFromTokenEndpointResponseErrorInvalidClientOrInvalidGrant', () =>
        cond.errorIsOneOf(response.body, ['invalid_client', 'invalid_grant']),
      );
      await run.tokenErrorFieldChecks(response);
    },

    'fapi2-security-profile-final-ensure-authorization-code-is-bound-to-client': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure({ secondClient: true });
      const request = await run.createAuthorizationRequest(run.client1);
      const { callback } = await run.authorize(request);
      const code = await run.processCallback(callback, request);
      // switchToSecondClient: the token request rebuilt as client 2 (its redirect URI, client 1's verifier).
      const asSecond = { ...request, client: run.client2!, redirectUri: run.client2!.redirectUri };
      const response = await run.callTokenEndpoint(
        run.client2!,
        await run.tokenRequestForCode(asSecond, code),
      );
      await run.c.check('CheckTokenEndpointHttpStatus400', () => cond.ensureHttpStatus(response, [400]));
      await run.c.check('CheckTokenEndpointReturnedJsonContentType', () =>
        cond.ensureContentTypeJson(response),
      );
      await run.c.check('CheckErrorFromTokenEndpointResponseErrorInvalidGrant', () =>
        cond.errorIsOneOf(response.body, ['invalid_grant']),
      );
      await run.tokenErrorFieldChecks(response);
    },

    'fapi2-security-profile-final-attempt-reuse-authorization-code-after-one-second': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      const first = await run.obtainTokens(run.client1);
      await run.requestProtectedResource(run.client1, first.tokens);
      await run.c.check('WaitForOneSecond', () => new Promise((resolve) => setTimeout(resolve, 1000)));
      const again = await run.callTokenEndpoint(
        run.client1,
        await run.tokenRequestForCode(first.request, first.code),
      );
      await run.c.check('ServerAllowedReusingAuthorizationCode', () => assert.notEqual(again.status, 200));
      await run.c.check('CheckTokenEndpointHttpStatus400', () => cond.ensureHttpStatus(again, [400]));
      await run.c.check('CheckTokenEndpointReturnedJsonContentType', () => cond.ensureContentTypeJson(again));
      await run.c.check('CheckErrorFromTokenEndpointResponseErrorInvalidGrant', () =>
        cond.errorIsOneOf(again.body, ['invalid_grant']),
      );
      await run.tokenErrorFieldChecks(again);
      // The first access token "should" have been revoked (RFC 6749 §4.1.2).
      const afterReuse = await run.callCredentialEndpoint(run.client1, first.tokens);
      await run.c.choice(
        'EnsureHttpStatusCodeIs4xx',
        'RFC 6749 §4.1.2 (tokens issued from a reused code SHOULD be revoked)',
        'Coffer refuses the reused issuer code (invalid_grant) but does not revoke the access token issued from it: that token fetches only the one issuance its offer holds (a HAIP wallet proves its attestation, PKCE verifier and DPoP key for it), and the issuance was fetched already, so the request is refused with credential_request_denied',
        () => {
          cond.ensureHttpStatusCodeIs4xx(afterReuse.response);
          assert.equal(afterReuse.response.body?.error, 'credential_request_denied');
        },
      );
    },

    'fapi2-security-profile-final-ensure-token-endpoint-fails-with-expired-auth-code': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      const request = await run.createAuthorizationRequest(run.client1);
      const { callback } = await run.authorize(request);
      const code = await run.processCallback(callback, request);
      // WaitFor62Seconds, on the issuer's clock (the code's expiry reads it).
      let response: Awaited<ReturnType<typeof run.callTokenEndpoint>>;
      try {
        await run.c.check('WaitFor62Seconds', () => {
          world.clock.aheadMs = 62_000;
        });
        response = await run.callTokenEndpoint(run.client1, await run.tokenRequestForCode(request, code));
      } finally {
        world.clock.aheadMs = 0;
      }
      await run.c.check('ServerAllowedExpiredAuthorizationCode', () =>
        assert.notEqual(response.status, 200, response.text),
      );
      await run.c.check('CheckTokenEndpointHttpStatus400', () => cond.ensureHttpStatus(response, [400]));
      await run.c.check('CheckTokenEndpointReturnedJsonContentType', () =>
        cond.ensureContentTypeJson(response),
      );
      await run.c.check('CheckErrorFromTokenEndpointResponseErrorInvalidGrant', () =>
        cond.errorIsOneOf(response.body, ['invalid_grant']),
      );
      await run.tokenErrorFieldChecks(response);
    },

    'fapi2-security-profile-final-ensure-pkce-code-verifier-required': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      const request = await run.createAuthorizationRequest(run.client1);
      const { callback } = await run.authorize(request);
      const code = await run.processCallback(callback, request);
      const response = await run.callTokenEndpoint(
        run.client1,
        await run.tokenRequestForCode(request, code, { codeVerifier: null }),
      );
      await pkceRefusal(run, response);
    },

    'fapi2-security-profile-final-incorrect-pkce-code-verifier-rejected': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      const request = await run.createAuthorizationRequest(run.client1);
      const { callback } = await run.authorize(request);
      const code = await run.processCallback(callback, request);
      let other = '';
      await run.c.check('CreateRandomCodeVerifier', () => {
        other = randomString(32);
        assert.notEqual(other, request.codeVerifier);
      });
      const response = await run.callTokenEndpoint(
        run.client1,
        await run.tokenRequestForCode(request, code, { codeVerifier: other }),
      );
      await pkceRefusal(run, response);
    },
  },
});

/**
 * The plan's credential_format is the tester's pick; these modules always start from the wallet
 * (no credential offer). Run with mdoc, their PAR would ask for an mso_mdoc configuration's scope.
 */
async function mdocIsIssuerInitiatedOnly(run: Fapi2Run) {
  const request = await run.createAuthorizationRequest(run.client1);
  request.params['scope'] = MDOC_CONFIGURATION.scope;
  const par = await run.callParEndpoint(request);
  await run.c.choice(
    'CheckPAREndpointResponse201WithNoError',
    'OpenID4VCI 1.0 §3.3.3 and §5.1.2 (wallet-initiated issuance by scope)',
    "These modules are wallet-initiated. Coffer issues wallet-initiated only from_profile configurations (the claims come from the person's profile), which mso_mdoc configurations cannot be (a profile has no mdoc namespace), so with credential_format mdoc the PAR is refused (invalid_request); the modules run with sd_jwt_vc, and mso_mdoc issuance follows an offer (issuer-initiated)",
    () => {
      assert.equal(par.status, 400, par.text);
      assert.equal(par.body?.error, 'invalid_request');
      assert.match(par.body?.error_description, /only on an offer/);
    },
  );
  run.c.variant('mso_mdoc: not run (wallet-initiated mdoc issuance is refused; see the choice)');
}

/** FAPI2SPFinalPAREnsurePKCECodeVerifierRequired's checks of the token endpoint's refusal (RFC 7636 §4.6). */
async function pkceRefusal(run: Fapi2Run, response: Exchange) {
  await run.c.check('CheckTokenEndpointHttpStatus400', () => cond.ensureHttpStatus(response, [400]));
  await run.c.check('CheckTokenEndpointReturnedJsonContentType', () => cond.ensureContentTypeJson(response));
  await run.c.check('CheckErrorFromTokenEndpointResponseErrorInvalidGrant', () =>
    cond.errorIsOneOf(response.body, ['invalid_grant']),
  );
  await run.tokenErrorFieldChecks(response);
}
