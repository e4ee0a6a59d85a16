import assert from 'node:assert/strict';
import { conformancePlan } from '../harness.ts';
import * as cond from '../suite-fapi2-client/conditions.ts';
import { type AuthorizationRequest, Fapi2Run, type Visit } from '../suite-fapi2-client/fapi2-flow.ts';
import { type HaipIssuerWorld, startHaipIssuerWorld } from '../suite-fapi2-client/haip-world.ts';
import type { Exchange } from '../suite-fapi2-client/http.ts';
import { randomString } from '../suite-fapi2-client/keys.ts';

/**
 * The FAPI 2.0 Security Profile modules of the HAIP issuer plan about the authorization request:
 * pushed authorization requests (RFC 9126) and their request_uri, the front-channel parameters
 * beside it (state, redirect_uri, response_type), and PKCE at PAR. With
 * fapi_request_method=unsigned the "request object" of these modules is the PAR form.
 *
 * The suite accepts either an error at the wallet's callback or an error page of the
 * authorization server (the tester uploads a screenshot for the module's placeholder). Coffer
 * never sends an error to a wallet's redirect URI before the person has acted (it is registered
 * nowhere: Coffer would be an open redirector), so where these modules expect a refusal at the
 * authorization endpoint it is the error page; the placeholder's condition asserts that page.
 */

/** The authorization server shows an error page (the placeholder the tester would fill). */
async function errorPage(run: Fapi2Run, placeholder: string, visit: Visit, reason: RegExp) {
  await run.c.check(placeholder, () => {
    assert.equal(visit.kind, 'errorPage', `not an error page: ${JSON.stringify(visit).slice(0, 300)}`);
    const page = visit as { status: number; text: string };
    assert.equal(page.status, 400);
    assert.match(page.text, /<html/i);
    assert.match(page.text, reason);
  });
}

/** The token request and the credential after a successful callback (performPostAuthorizationFlow). */
async function finishFlow(run: Fapi2Run, request: AuthorizationRequest, code: string) {
  const response = await run.callTokenEndpoint(request.client, await run.tokenRequestForCode(request, code));
  const tokens = await run.processTokenResponse(request.client, response);
  await run.requestProtectedResource(request.client, tokens);
}

/** PAR, then the browser at the redirect URL of the request (with duplicated parameters, or `extra` ones). */
async function pushAndVisit(
  run: Fapi2Run,
  request: AuthorizationRequest,
  extra: Record<string, string> = {},
) {
  const { requestUri } = await run.processParResponse(await run.callParEndpoint(request));
  const url = run.redirectUrl(request, requestUri, 'duplicates', extra);
  await run.c.check('BuildRequestObjectByReferenceRedirectToAuthorizationEndpoint', () =>
    assert.ok(new URL(url).searchParams.get('request_uri')),
  );
  return { requestUri, url, visit: await run.visit(url) };
}

const parRefused = (run: Fapi2Run, condition: string, par: Exchange, errors: string[]) =>
  run.c.check(condition, () => cond.ensureParError(par, errors));

conformancePlan<HaipIssuerWorld>('oid4vci-1_0-issuer-haip-test-plan', {
  file: import.meta.filename,
  setup: () => startHaipIssuerWorld('par'),
  teardown: (world) => world.close(),
  modules: {
    'fapi2-security-profile-final-ensure-different-state-inside-and-outside-request-object': async (
      c,
      world,
    ) => {
      const run = await new Fapi2Run(c, world).configure();
      const request = await run.createAuthorizationRequest(run.client1);
      let other = '';
      await run.c.check('AddIncorrectStateToAuthorizationEndpointRequest', () => {
        other = randomString(8);
        assert.notEqual(other, request.state);
      });
      const { visit } = await pushAndVisit(run, request, { state: other });
      // The pushed request is what counts: the callback carries its state.
      const callback = cond.callbackOf(await run.logIn(visit));
      await finishFlow(run, request, await run.processCallback(callback, request));
    },

    'fapi2-security-profile-final-ensure-authorization-request-with-long-state': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      const request = await run.createAuthorizationRequest(run.client1, { stateLength: 1000 });
      const par = await run.callParEndpoint(request);
      if (par.status !== 201) {
        await parRefused(run, 'EnsurePARInvalidRequestError', par, ['invalid_request']);
        return;
      }
      const { requestUri } = await run.processParResponse(par);
      const visit = await run.visit(run.redirectUrl(request, requestUri, 'duplicates'));
      const callback = cond.callbackOf(await run.logIn(visit));
      await finishFlow(run, request, await run.processCallback(callback, request));
    },

    'fapi2-security-profile-final-state-only-outside-request-object-not-used': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      const request = await run.createAuthorizationRequest(run.client1, { withoutState: true });
      const outside = randomString(8);
      await run.c.check('AddStateToAuthorizationEndpointRequest', () => assert.ok(outside));
      const { visit } = await pushAndVisit(run, request, { state: outside });
      const callback = cond.callbackOf(await run.logIn(visit));
      await run.c.check('CheckMatchingCallbackParameters', () =>
        cond.checkMatchingCallbackParameters(callback, request.redirectUri),
      );
      await run.c.check('CheckIfAuthorizationEndpointError', () =>
        cond.checkIfAuthorizationEndpointError(callback.query),
      );
      await run.c.check('VerifyNoStateInAuthorizationResponse', () =>
        cond.verifyNoStateInAuthorizationResponse(callback.query),
      );
      await finishFlow(run, request, await run.processCallback(callback, request));
    },

    'fapi2-security-profile-final-ensure-request-object-without-redirect-uri-fails': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      const request = await run.createAuthorizationRequest(run.client1);
      await run.c.check('RemoveRedirectUriFromRequestObject', () => {
        delete request.params['redirect_uri'];
      });
      const par = await run.callParEndpoint(request);
      await parRefused(run, 'EnsurePARInvalidRequestOrInvalidRequestObjectError', par, [
        'invalid_request',
        'invalid_request_object',
      ]);
    },

    'fapi2-security-profile-final-plain-fapi-tolerate-unregistered-redirect-uri': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      // CreateBadRedirectUriByAppending: HAIP registers no redirect URI, so any is taken.
      await run.c.check('CreateBadRedirectUriByAppending', () => {
        run.client1.redirectUri = `${world.suiteBaseUrl}/callback/${randomString(6)}`;
      });
      const request = await run.createAuthorizationRequest(run.client1);
      const par = await run.callParEndpoint(request);
      if (par.status !== 201) {
        await parRefused(run, 'EnsurePARInvalidRequestOrInvalidRequestObjectError', par, [
          'invalid_request',
          'invalid_request_object',
        ]);
        return;
      }
      const { requestUri } = await run.processParResponse(par);
      const callback = cond.callbackOf(
        await run.logIn(await run.visit(run.redirectUrl(request, requestUri, 'duplicates'))),
      );
      await finishFlow(run, request, await run.processCallback(callback, request));
    },

    'fapi2-security-profile-final-ensure-unsigned-authorization-request-without-using-par-fails': async (
      c,
      world,
    ) => {
      const run = await new Fapi2Run(c, world).configure();
      const request = await run.createAuthorizationRequest(run.client1);
      const url = run.redirectUrl(request, undefined, 'plain');
      await run.c.check('BuildPlainRedirectToAuthorizationEndpoint', () =>
        assert.equal(new URL(url).searchParams.get('scope'), request.params['scope']),
      );
      await errorPage(
        run,
        'ExpectAuthorizationRequestWithoutRequestObjectErrorPage',
        await run.visit(url),
        /PAR/,
      );
    },

    'fapi2-security-profile-final-ensure-redirect-uri-in-authorization-request': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      const request = await run.createAuthorizationRequest(run.client1);
      delete request.params['redirect_uri'];
      const par = await run.callParEndpoint(request);
      await parRefused(run, 'EnsurePARInvalidRequestOrInvalidRequestObjectError', par, [
        'invalid_request',
        'invalid_request_object',
      ]);
    },

    'fapi2-security-profile-final-ensure-response-type-code-idtoken-fails': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      const request = await run.createAuthorizationRequest(run.client1);
      await run.c.check('SetAuthorizationEndpointRequestResponseTypeToCodeIdtoken', () => {
        request.params['response_type'] = 'code id_token';
      });
      await responseTypeRefused(run, request);
    },

    'fapi2-security-profile-final-ensure-response-type-token-fails': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      const request = await run.createAuthorizationRequest(run.client1);
      await run.c.check('SetAuthorizationEndpointRequestResponseTypeToToken', () => {
        request.params['response_type'] = 'token';
      });
      await responseTypeRefused(run, request);
    },

    'fapi2-security-profile-final-par-ensure-reused-request-uri-prior-to-auth-completion-succeeds': async (
      c,
      world,
    ) => {
      const run = await new Fapi2Run(c, world).configure();
      const request = await run.createAuthorizationRequest(run.client1);
      const { url, visit: first } = await pushAndVisit(run, request);
      assert.equal(first.kind, 'login', 'the first visit shows the log-in page');
      // The person does not log in there; the browser visits the same URL again.
      const second = await run.visit(url);
      await run.c.check('ExpectLoginPage', () =>
        assert.equal(second.kind, 'login', `the second visit: ${JSON.stringify(second).slice(0, 300)}`),
      );
      const callback = cond.callbackOf(await run.logIn(second));
      await finishFlow(run, request, await run.processCallback(callback, request));
    },

    'fapi2-security-profile-final-par-attempt-reuse-request_uri': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      const request = await run.createAuthorizationRequest(run.client1);
      const { url, visit } = await pushAndVisit(run, request);
      const callback = cond.callbackOf(await run.logIn(visit));
      await finishFlow(run, request, await run.processCallback(callback, request));
      await errorPage(run, 'ExpectInvalidRequestUriErrorPage', await run.visit(url), /request_uri/);
    },

    'fapi2-security-profile-final-par-attempt-to-use-expired-request_uri': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      const request = await run.createAuthorizationRequest(run.client1);
      const { requestUri, expiresIn } = await run.processParResponse(await run.callParEndpoint(request));
      assert.ok(expiresIn <= 30 * 60, 'the suite would skip the module');
      const url = run.redirectUrl(request, requestUri, 'duplicates');
      let visit: Visit;
      try {
        // WaitForExpiry, on the issuer's clock (the pushed request's expiry reads it).
        await run.c.check('WaitForExpiry', () => {
          world.clock.aheadMs = (expiresIn + 1) * 1000;
        });
        visit = await run.visit(url);
      } finally {
        world.clock.aheadMs = 0;
      }
      await errorPage(run, 'ExpectInvalidRequestUriErrorPage', visit, /expired/);
    },

    'fapi2-security-profile-final-par-attempt-to-use-request_uri-for-different-client': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure({ secondClient: true });
      const request = await run.createAuthorizationRequest(run.client1);
      const { requestUri } = await run.processParResponse(await run.callParEndpoint(request));
      await run.c.check('AddClientIdToAuthorizationEndpointRequest', () => assert.ok(run.client2!.clientId));
      const url = run.redirectUrl(request, requestUri, 'duplicates', { client_id: run.client2!.clientId });
      await errorPage(run, 'ExpectInvalidRequestUriErrorPage', await run.visit(url), /client_id/);
    },

    'fapi2-security-profile-final-par-authorization-request-containing-request_uri-form-param': async (
      c,
      world,
    ) => {
      const run = await new Fapi2Run(c, world).configure();
      const request = await run.createAuthorizationRequest(run.client1);
      await run.c.check('AddBadRequestUriToRequestParameters', () => {
        request.params['request_uri'] = `urn:fdc:suite.example:${randomString(32)}`;
      });
      const par = await run.callParEndpoint(request);
      await parRefused(
        run,
        'EnsurePARInvalidRequestOrInvalidRequestObjectOrRequestUriNotSupportedError',
        par,
        ['invalid_request', 'invalid_request_object', 'request_uri_not_supported'],
      );
    },

    'fapi2-security-profile-final-par-attempt-invalid-http-method': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      const request = await run.createAuthorizationRequest(run.client1);
      const par = await run.callParEndpoint(request, { method: 'PUT' });
      await run.c.check('EnsureParHTTPError', () => cond.ensureParHttpError(par));
    },

    'fapi2-security-profile-final-par-ensure-pkce-required': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      const request = await run.createAuthorizationRequest(run.client1, { withoutPkce: true });
      const par = await run.callParEndpoint(request);
      await parRefused(run, 'EnsurePARInvalidRequestError', par, ['invalid_request']);
    },

    'fapi2-security-profile-final-par-plain-pkce-rejected': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      const request = await run.createAuthorizationRequest(run.client1);
      await run.c.check('CreatePlainCodeChallenge', () => {
        request.params['code_challenge'] = request.codeVerifier!;
        request.params['code_challenge_method'] = 'plain';
      });
      const par = await run.callParEndpoint(request);
      await parRefused(run, 'EnsurePARInvalidRequestError', par, ['invalid_request']);
    },

    'fapi2-security-profile-final-par-without-duplicate-parameters': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      const { tokens } = await run.obtainTokens(run.client1, { redirect: 'withoutDuplicates' });
      await run.requestProtectedResource(run.client1, tokens);
    },
  },
});

/** FAPI2SPFinalEnsureResponseTypeCodeIdTokenFails.processParErrorResponse (the PAR endpoint refuses it). */
async function responseTypeRefused(run: Fapi2Run, request: AuthorizationRequest) {
  const par = await run.callParEndpoint(request);
  await run.c.check('EnsureHttpStatusCodeIs4xx', () => cond.ensureHttpStatusCodeIs4xx(par));
  await run.c.check('EnsurePARUnsupportedResponseTypeOrInvalidRequestOrUnauthorizedClientError', () =>
    cond.ensureParError(par, ['unsupported_response_type', 'invalid_request', 'unauthorized_client']),
  );
}
