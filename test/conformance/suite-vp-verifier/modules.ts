import assert from 'node:assert/strict';
import { createClient } from '../../../src/clients/client-admin.ts';
import type { Conditions, ModuleImplementation, ModuleRun } from '../harness.ts';
import { decide, openConsent, openWallet, pageText } from './person.ts';
import { checkDirectPost, checkPresentation } from './response-checks.ts';
import { describeVariant, type Run, randomValue, type Variant } from './verifier.ts';
import type { SuiteVerifierWorld } from './world.ts';

/**
 * The seventeen modules of the OpenID4VP 1.0 wallet plans (VP1FinalWalletTestPlan; the HAIP plan
 * runs sixteen of them), each over the variants the plan runs that a hosted web wallet can take:
 * plain — sd_jwt_vc and iso_mdl, each with x509_san_dns (signed request_uri, direct_post),
 * x509_hash (signed, direct_post.jwt), decentralized_identifier (signed, direct_post.jwt),
 * redirect_uri (url_query, direct_post; unsigned request_uri, direct_post.jwt) and, in the happy
 * flow, pre_registered; HAIP — x509_hash, signed request_uri, direct_post.jwt.
 * The dc_api and dc_api.jwt response modes need the browser's Digital Credentials API, which a
 * wallet reached by URL does not answer.
 */

type Plan = 'plain' | 'haip';

function variantsOf(plan: Plan): Variant[] {
  const formats = ['sd_jwt_vc', 'iso_mdl'] as const;
  if (plan === 'haip') {
    return formats.map((format) => ({
      format,
      prefix: 'x509_hash',
      method: 'request_uri_signed',
      mode: 'direct_post.jwt',
    }));
  }
  return formats.flatMap((format): Variant[] => [
    { format, prefix: 'x509_san_dns', method: 'request_uri_signed', mode: 'direct_post' },
    { format, prefix: 'x509_hash', method: 'request_uri_signed', mode: 'direct_post.jwt' },
    { format, prefix: 'decentralized_identifier', method: 'request_uri_signed', mode: 'direct_post.jwt' },
    { format, prefix: 'redirect_uri', method: 'url_query', mode: 'direct_post' },
    { format, prefix: 'redirect_uri', method: 'request_uri_unsigned', mode: 'direct_post.jwt' },
  ]);
}

interface Positive {
  /** Changes to the run before the request is built (nonce, state, DCQL, keys). */
  before?: (run: Run) => void;
  /** Changes to `authorization_endpoint_request` after it is built. */
  after?: (run: Run) => void;
  requestUriMethodPost?: boolean;
  reorder?: boolean;
  /** Checks of the request_uri fetch (validateRequestUriFetchMethod). */
  checkFetch?: (c: Conditions, run: Run) => Promise<void>;
}

/** A positive module over one variant: the wallet presents, the suite checks the response and the redirect. */
async function presents(
  c: Conditions,
  world: SuiteVerifierWorld,
  variant: Variant,
  plan: Plan,
  spec: Positive,
) {
  c.variant(describeVariant(variant));
  const run = await world.suite.newRun(variant, spec.before);
  spec.after?.(run);
  await world.suite.finish(run, {
    ...(spec.requestUriMethodPost ? { requestUriMethodPost: true } : {}),
    ...(spec.reorder ? { reorder: true } : {}),
  });
  const { path } = await openConsent(world, run);
  if (variant.method !== 'url_query') {
    assert.ok(run.requestFetches.length >= 1, 'the wallet never fetched request_uri');
    await spec.checkFetch?.(c, run);
  }
  const fetches = run.requestFetches.length;
  const answer = await decide(world, path, 'approve');
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  // handleRequestUriRequest: "Wallet called request_uri after already sending a response" fails the test.
  assert.equal(run.requestFetches.length, fetches, 'the wallet fetched request_uri after its response');
  // setStateToResponseReceived: exactly one response.
  assert.equal(run.responsePosts.length, 1, 'the suite received one response at its response_uri');
  const unpacked = await checkDirectPost(c, run, run.responsePosts[0]!);
  await checkPresentation(c, world, run, unpacked, { haip: plan === 'haip' });
  if (run.returnRedirect) {
    // processCallback: the browser goes (GET) to the redirect_uri the response_uri returned, fragment and all.
    const next = new URL(String(answer.body.redirect_to));
    await c.check('CheckCallbackHttpMethodIsGet', () =>
      assert.equal(
        `${next.origin}${next.pathname}`,
        run.redirectUri,
        'the browser is not sent to the redirect_uri',
      ),
    );
    await c.check('CheckUrlQueryIsEmpty', () => assert.equal(next.search, ''));
    await c.check('CheckUrlFragmentContainsCodeVerifier', () =>
      assert.equal(next.hash, `#${run.codeVerifier}`),
    );
  }
}

/**
 * The pre_registered variant (url_query, direct_post): the verifier is registered with Coffer
 * (`coffer client create --verifier` with the run's response_uri) and sends, as the suite always
 * does, client_metadata with its vp_formats_supported. Coffer takes a registered verifier's
 * metadata from the registration only and refuses the request with invalid_client, told to the
 * registered response_uri.
 */
async function preRegistered(c: Conditions, world: SuiteVerifierWorld, format: Variant['format']) {
  const variant: Variant = { format, prefix: 'pre_registered', method: 'url_query', mode: 'direct_post' };
  c.variant(describeVariant(variant));
  const run = await world.suite.newRun(variant);
  const registered = await createClient(world.server.database.db, {
    name: 'Conformance Suite Verifier',
    verifier: true,
    redirectUris: [run.responseUri],
  });
  run.clientId = String(registered.client_id);
  run.request['client_id'] = run.clientId;
  await world.suite.finish(run);
  const opened = await openWallet(world, run);
  await c.choice(
    format === 'sd_jwt_vc'
      ? 'AddVP1FinalSdJwtClientMetadataToAuthorizationRequest'
      : 'AddVP1FinalIsoMdocClientMetadataToAuthorizationRequest',
    'OpenID4VP 1.0 §5.1 (client_metadata), §5.9.2',
    "the suite sends client_metadata with every request, pre_registered too; Coffer takes a registered verifier's metadata (formats, encryption keys) from its registration only — authoritative data from another source takes precedence (§5.1) — and refuses client_metadata from it with invalid_client, so that a request made in a registered verifier's name cannot bring its own keys; the suite's pre_registered variant therefore ends in that error at the registered response_uri",
    () => {
      if (run.returnRedirect) assert.equal(opened.status, 303, pageText(opened.text));
      else assert.equal(opened.status, 400, `${opened.status} ${opened.location ?? ''}`);
      assert.equal(run.responsePosts.length, 1, 'the verifier was not told');
      const form = run.responsePosts[0]!.form;
      assert.equal(form['error'], 'invalid_client');
      assert.equal(form['state'], run.state);
      assert.equal(form['vp_token'], undefined);
    },
  );
}

interface Negative {
  before?: (run: Run) => void;
  after?: (run: Run) => void;
  /** The suite's Expect…ErrorPage condition (its placeholder for the wallet's error screen). */
  expect: string;
  /** What the page must say. */
  says: RegExp;
  /**
   * Where the spec has the wallet return an error response, Coffer tells the verifier too (by
   * the response mode, once the verifier and its response_uri are authenticated) besides showing
   * the page; the suite's module expects the page only and fails on a call to response_uri.
   */
  tellsVerifier?: { error: string; clause: string; why: string };
}

/**
 * A negative module over one variant: the wallet must refuse (an error shown to the person) and
 * the suite's response_uri must never be called (its handleDirectPost fails the test).
 */
async function refuses(c: Conditions, world: SuiteVerifierWorld, variant: Variant, spec: Negative) {
  c.variant(describeVariant(variant));
  const run = await world.suite.newRun(variant, spec.before);
  spec.after?.(run);
  await world.suite.finish(run);
  const opened = await openWallet(world, run);
  const page = () => {
    assert.equal(opened.status, 400, `the wallet did not refuse: ${opened.status} ${opened.location ?? ''}`);
    assert.match(opened.text, /<html/i);
    assert.match(pageText(opened.text), spec.says, pageText(opened.text));
  };
  const told = spec.tellsVerifier;
  if (!told) {
    await c.check(spec.expect, () => {
      page();
      assert.equal(run.responsePosts.length, 0, 'the response_uri was called');
    });
    return;
  }
  await c.choice(
    spec.expect,
    told.clause,
    `${told.why}; where the response_uri answers with a redirect_uri (always for mdoc), the browser follows it (§8.2) instead of staying on the page`,
    () => {
      if (run.returnRedirect) {
        assert.equal(opened.status, 303, `${opened.status} ${pageText(opened.text)}`);
        assert.equal(opened.location, `${run.redirectUri}#${run.codeVerifier}`);
      } else page();
      assert.equal(run.responsePosts.length, 1, 'the verifier was not sent one error response');
    },
  );
  const unpacked = await checkDirectPost(c, run, run.responsePosts[0]!);
  await c.check('CheckIfAuthorizationEndpointError', () =>
    assert.equal(unpacked.response['error'], told.error),
  );
  await c.check('EnsureNoVpTokenInAuthorizationEndpointResponse', () =>
    assert.equal(unpacked.response['vp_token'], undefined),
  );
  await c.check('CheckStateInAuthorizationResponse', () =>
    assert.equal(unpacked.response['state'], run.state),
  );
}

const each =
  (
    plan: Plan,
    filter: (v: Variant) => boolean,
    body: (c: Conditions, w: SuiteVerifierWorld, v: Variant) => Promise<void>,
  ): ModuleRun<SuiteVerifierWorld> =>
  async (c, world) => {
    await configure(c, world);
    for (const variant of variantsOf(plan).filter(filter)) await body(c, world, variant);
  };

/**
 * The suite's configure(): the wallet's authorization endpoint as the tester configures it
 * (`server.authorization_endpoint`, here Coffer's), and request_uri support, which static
 * configuration leaves at its default (true) and Coffer's wallet metadata does not deny.
 */
async function configure(c: Conditions, world: SuiteVerifierWorld) {
  const endpoint = `${world.server.url}/v1/oid4vp/authorize`;
  await c.check('CheckAuthorizationEndpointIsValidUri', () =>
    assert.match(endpoint, /^[a-zA-Z][a-zA-Z0-9+.-]*:/),
  );
  await c.check('CheckDiscEndpointRequestUriParameterSupported', async () => {
    // The endpoint takes request_uri: a request by reference to an unknown verifier is refused for who it is, not for request_uri.
    const response = await fetch(`${endpoint}?client_id=x509_hash:AAAA&request_uri=https://127.0.0.1:1/r`, {
      redirect: 'manual',
    });
    assert.doesNotMatch(await response.text(), /request_uri_not_supported/);
  });
}

const all = () => true;
const signed = (v: Variant) => v.method === 'request_uri_signed';
const byReference = (v: Variant) => v.method !== 'url_query';
const encrypted = (v: Variant) => v.mode === 'direct_post.jwt';

/** The not-applicable DC API modules: Coffer is reached by URL, and a request for a DC API response mode is refused. */
const dcApiOnly = (plan: Plan, clause: string, why: string): ModuleImplementation<SuiteVerifierWorld> => ({
  notApplicable: { clause, why },
  run: async (c, world) => {
    const [variant] = variantsOf(plan).filter(signed);
    const run = await world.suite.newRun(variant!);
    run.request['response_mode'] = 'dc_api.jwt';
    run.request['expected_origins'] = ['https://verifier.example'];
    delete run.request['response_uri'];
    await world.suite.finish(run);
    const opened = await openWallet(world, run);
    await c.check('ExpectRedirectUriErrorPage', () => {
      assert.equal(opened.status, 400, `${opened.status} ${opened.location ?? ''}`);
      assert.match(pageText(opened.text), /response_mode|dc_api/i, pageText(opened.text));
      assert.equal(run.responsePosts.length, 0);
    });
  },
});

export function walletPlanModules(plan: Plan): Record<string, ModuleImplementation<SuiteVerifierWorld>> {
  const positive = (filter: (v: Variant) => boolean, spec: Positive) =>
    each(plan, filter, (c, world, variant) => presents(c, world, variant, plan, spec));
  const negative = (filter: (v: Variant) => boolean, spec: Negative) =>
    each(plan, filter, (c, world, variant) => refuses(c, world, variant, spec));

  const modules: Record<string, ModuleImplementation<SuiteVerifierWorld>> = {
    'oid4vp-1final-wallet-happy-flow': async (c, world, t) => {
      await positive(all, {
        // The optional state is omitted.
        before: (run) => {
          run.state = undefined;
        },
      })(c, world, t);
      if (plan === 'plain')
        for (const format of ['sd_jwt_vc', 'iso_mdl'] as const) await preRegistered(c, world, format);
    },
    'oid4vp-1final-wallet-alternate-happy-flow': positive(all, {
      reorder: true,
      before: (run) => {
        run.nonce = randomValue(43);
        run.state = randomValue(64);
        run.returnRedirect = true;
        run.tamper.mismatchedIss = true;
        // AddVP1FinalEncryptionParametersToClientMetadataWithoutUseEnc.
        if (run.encryption) delete run.encryption.publicJwk.use;
      },
      after: (run) => {
        run.request[`p${randomValue(16).slice(0, 12)}`] = randomValue(16).slice(0, 12);
        // §5.9.3: under redirect_uri with direct_post the verifier may omit response_uri.
        if (run.variant.prefix === 'redirect_uri') delete run.request['response_uri'];
      },
    }),
    'oid4vp-1final-wallet-request-uri-method-post': positive(byReference, {
      requestUriMethodPost: true,
      checkFetch: async (c, run) => {
        const fetch = run.requestFetches[0]!;
        assert.equal(fetch.method, 'POST', 'the wallet used GET (the suite skips the module then)');
        await c.check('EnsureIncomingUrlQueryIsEmpty', () => assert.equal(fetch.query, ''));
        await c.check('EnsureIncomingRequestAcceptHeaderIsApplicationOauthAuthzReqJwt', () =>
          assert.ok(
            String(fetch.headers.accept ?? '')
              .split(',')
              .some((part) => part.split(';')[0]!.trim().toLowerCase() === 'application/oauth-authz-req+jwt'),
            `accept ${fetch.headers.accept}`,
          ),
        );
        await c.check('EnsureIncomingRequestContentTypeIsFormUrlEncoded', () =>
          assert.match(String(fetch.headers['content-type']), /^application\/x-www-form-urlencoded\s*(;|$)/i),
        );
        await c.check('CheckForUnexpectedParametersInRequestUriPost', () =>
          assert.deepEqual(
            Object.keys(fetch.form).filter((k) => !['wallet_metadata', 'wallet_nonce'].includes(k)),
            [],
          ),
        );
        await c.check('ExtractWalletMetadataAndNonceFromRequestUriPost', () => {
          if (fetch.form['wallet_metadata'] !== undefined) {
            const metadata = JSON.parse(fetch.form['wallet_metadata']);
            assert.equal(typeof metadata, 'object');
          }
        });
      },
    }),
    'oid4vp-1final-wallet-ignores-unusable-encryption-key': positive(encrypted, {
      after: (run) => {
        const metadata = run.request['client_metadata'] as { jwks: { keys: unknown[] } };
        // AddUnusableEncryptionKeyToClientMetadata: after the usable key.
        metadata.jwks.keys.push(
          {
            kty: 'AKP',
            alg: 'ML-KEM-9999',
            kid: 'unusable-pq-enc-key',
            use: 'enc',
            pub: 'Z0FOY29uZm9ybWFuY2UtdGVzdC1wbGFjZWhvbGRlci1wdWJsaWMta2V5',
          },
          {
            kty: 'OIDF-CONFORMANCE-UNSUPPORTED',
            alg: 'OIDF-CONFORMANCE-UNSUPPORTED',
            kid: 'unusable-unknown-enc-key',
            use: 'enc',
          },
        );
      },
    }),
    'oid4vp-1final-wallet-fewer-claims-than-available': positive(all, {
      before: (run) => {
        // RemoveLastClaimFromDcqlQuery.
        (run.dcql.credentials[0]!['claims'] as unknown[]).pop();
      },
    }),
    'oid4vp-1final-wallet-optional-credential-set': positive(all, {
      before: (run) => addNonMatching(run, false),
    }),
    'oid4vp-1final-wallet-no-claims-in-dcql-query': positive(all, {
      before: (run) => {
        // RemoveClaimsFromDcqlQuery.
        delete run.dcql.credentials[0]!['claims'];
      },
    }),
    'oid4vp-1final-wallet-negative-test-response-uri-not-client-id': negative(
      (v) => v.prefix === 'redirect_uri',
      {
        after: (run) => {
          // AddBadResponseUriToAuthorizationEndpointRequest.
          run.request['response_uri'] = `${run.responseUri}/bad`;
        },
        expect: 'ExpectResponseUriErrorPage',
        says: /response_uri|redirect_uri/,
      },
    ),
    'oid4vp-1final-wallet-negative-test-invalid-request-object-signature': negative(signed, {
      before: (run) => {
        run.tamper.invalidSignature = true;
      },
      expect: 'ExpectInvalidRequestObjectSignatureErrorPage',
      says: /signature/,
    }),
    'oid4vp-1final-wallet-multisigned-one-invalid-signature': dcApiOnly(
      plan,
      'OpenID4VP 1.0 Appendix A.3.2',
      'multi-signed requests (JWS JSON serialization) exist only over the Digital Credentials API (request_uri_multisigned with dc_api / dc_api.jwt); a hosted wallet reached by URL takes no DC API request, and Coffer refuses a request for a DC API response mode',
    ),
    'oid4vp-1final-wallet-negative-test-mismatched-client-id': negative(byReference, {
      before: (run) => {
        run.tamper.mismatchedClientId = true;
      },
      expect: 'ExpectRedirectUriErrorPage',
      says: /client_id/,
    }),
    'oid4vp-1final-wallet-negative-test-redirect-uri-with-direct-post': negative(all, {
      after: (run) => {
        // AddRedirectUriAlongsideResponseUri.
        run.request['redirect_uri'] = run.request['response_uri'];
      },
      expect: 'ExpectRedirectUriErrorPage',
      says: /redirect_uri/,
      tellsVerifier: {
        error: 'invalid_request',
        clause: 'OpenID4VP 1.0 §8.2',
        why: '"If the redirect_uri Authorization Request parameter is present when the Response Mode is direct_post, the Wallet MUST return an invalid_request Authorization Response error": Coffer posts it to the authenticated response_uri (encrypted for direct_post.jwt) and shows the person the error page',
      },
    }),
    'oid4vp-1final-wallet-negative-test-missing-nonce': negative(all, {
      before: (run) => {
        run.nonce = undefined;
      },
      expect: 'ExpectRedirectUriErrorPage',
      says: /nonce/,
      tellsVerifier: {
        error: 'invalid_request',
        clause: 'OpenID4VP 1.0 §8.5',
        why: 'a request without the REQUIRED nonce (§5.2) is malformed, for which §8.5 has the wallet answer invalid_request: Coffer posts it to the authenticated response_uri and shows the person the error page',
      },
    }),
    'oid4vp-1final-wallet-negative-test-wrong-expected-origins': dcApiOnly(
      plan,
      'OpenID4VP 1.0 Appendix A.2',
      'expected_origins is checked against the Origin the Digital Credentials API reports (the module runs only with dc_api.jwt and signed requests); a hosted wallet reached by URL takes no DC API request, and Coffer refuses a request for a DC API response mode',
    ),
    'oid4vp-1final-wallet-negative-test-invalid-client-id-prefix': negative(all, {
      after: (run) => {
        // AddInvalidClientIdPrefixToRequestObject.
        const id = String(run.request['client_id']);
        run.request['client_id'] = `invalid_scheme:${id.slice(id.indexOf(':') + 1)}`;
      },
      expect: 'ExpectRedirectUriErrorPage',
      // §5.9.2: an unknown prefix is read as a pre-registered client id, which this one is not.
      says: /not a verifier registered|client/,
    }),
    'oid4vp-1final-wallet-negative-test-unknown-transaction-data-type': negative(all, {
      after: (run) => {
        const item = {
          type: 'conformance-test-unknown-type-must-be-rejected',
          credential_ids: [run.dcql.credentials[0]!['id']],
        };
        run.request['transaction_data'] = [Buffer.from(JSON.stringify(item)).toString('base64url')];
      },
      expect: 'ExpectUnknownTransactionDataTypeErrorPage',
      says: /transaction/,
      tellsVerifier: {
        error: 'invalid_transaction_data',
        clause: 'OpenID4VP 1.0 §5.1, §8.5',
        why: 'an unrecognised transaction data type "MUST" make the wallet return an error, and §8.5 names it invalid_transaction_data: Coffer posts it to the authenticated response_uri and shows the person the error page',
      },
    }),
    'oid4vp-1final-wallet-negative-test-required-non-matching-credential': each(
      plan,
      all,
      async (c, world, variant) => {
        c.variant(describeVariant(variant));
        const run = await world.suite.newRun(variant, (r) => addNonMatching(r, true));
        await world.suite.finish(run);
        const { path, consent } = await openConsent(world, run);
        // ExpectUnsatisfiableDcqlQueryErrorPage: the person is told the request cannot be met, and cannot approve it.
        await c.check('ExpectUnsatisfiableDcqlQueryErrorPage', async () => {
          assert.match(String(consent.unsatisfiable_reason), /nonexistent_credential|no credential|cannot/i);
          const html = await (await fetch(world.server.url + path)).text();
          assert.ok(
            pageText(html.replace(/&#39;/g, "'"), Number.POSITIVE_INFINITY).includes(
              String(consent.unsatisfiable_reason).slice(0, 40),
            ),
            'the consent page does not tell the person',
          );
          const approve = await decide(world, path, 'approve');
          assert.equal(approve.status, 400, JSON.stringify(approve.body));
          assert.equal(run.responsePosts.length, 0, 'a response was sent on approve');
        });
        const declined = await decide(world, path, 'decline');
        assert.equal(declined.status, 200, JSON.stringify(declined.body));
        assert.equal(run.responsePosts.length, 1, 'the suite received one response');
        const unpacked = await checkDirectPost(c, run, run.responsePosts[0]!);
        await c.check('EnsureErrorResponseForUnsatisfiableDcqlQuery', () =>
          assert.ok(unpacked.response['error']),
        );
        await c.check('EnsureNoVpTokenInAuthorizationEndpointResponse', () =>
          assert.equal(unpacked.response['vp_token'], undefined),
        );
        await c.check('EnsureAuthorizationEndpointErrorIsAccessDenied', () =>
          assert.equal(unpacked.response['error'], 'access_denied'),
        );
      },
    ),
  };
  if (plan === 'haip') delete modules['oid4vp-1final-wallet-negative-test-response-uri-not-client-id'];
  return modules;
}

/** AbstractAddNonMatchingCredentialToDcqlQuery: a query nothing matches, in credential_sets beside the real one. */
function addNonMatching(run: Run, required: boolean) {
  const original = run.dcql.credentials[0]!;
  const mdoc = original['format'] === 'mso_mdoc';
  run.dcql.credentials.push({
    id: 'nonexistent_credential',
    format: original['format'],
    meta: mdoc
      ? { doctype_value: 'org.conformance-suite.nonexistent.credential.1' }
      : { vct_values: ['urn:conformance-suite:nonexistent:credential:1'] },
    claims: [
      {
        path: mdoc
          ? ['org.conformance-suite.nonexistent.namespace.1', 'nonexistent_claim']
          : ['nonexistent_claim'],
      },
    ],
  });
  run.dcql.credential_sets = [
    { options: [[original['id']]], required: true },
    { options: [['nonexistent_credential']], required },
  ];
}
