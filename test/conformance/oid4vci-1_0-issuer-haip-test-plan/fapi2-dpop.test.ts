import assert from 'node:assert/strict';
import type { Conditions } from '../harness.ts';
import { conformancePlan } from '../harness.ts';
import * as cond from '../suite-fapi2-client/conditions.ts';
import { type DpopVariation, setMember } from '../suite-fapi2-client/dpop.ts';
import { type CredentialCall, Fapi2Run, type Tokens } from '../suite-fapi2-client/fapi2-flow.ts';
import { type HaipIssuerWorld, startHaipIssuerWorld } from '../suite-fapi2-client/haip-world.ts';
import type { Exchange } from '../suite-fapi2-client/http.ts';
import {
  newSuiteKey,
  randomString,
  seconds,
  sha256Base64url,
  thumbprintOf,
} from '../suite-fapi2-client/keys.ts';
import { tlsIsTheDeployments } from '../suite-fapi2-client/tls.ts';

/**
 * The FAPI 2.0 Security Profile modules of the HAIP issuer plan about DPoP (RFC 9449): proofs
 * with nbf/exp or a skewed iat, the authorization code bound to the DPoP key at PAR (a proof
 * there, or dpop_jkt) and refusals when it is not that key, the token endpoint without DPoP, and
 * the suite's series of broken proofs at the credential endpoint.
 */

/** The usual way to tokens, with a DPoP variation on the PAR, token and resource proofs. */
async function flowWithDpop(run: Fapi2Run, variation: DpopVariation, options: { dpopAtPar: boolean }) {
  const client = run.client1;
  const request = await run.createAuthorizationRequest(client);
  const par = await run.callParEndpoint(request, { dpop: options.dpopAtPar, dpopVariation: variation });
  const { requestUri } = await run.processParResponse(par);
  const callback = cond.callbackOf(
    await run.logIn(await run.visit(run.redirectUrl(request, requestUri, 'duplicates'))),
  );
  const code = await run.processCallback(callback, request);
  const response = await run.callTokenEndpoint(client, await run.tokenRequestForCode(request, code), {
    dpopVariation: variation,
  });
  const tokens = await run.processTokenResponse(client, response);
  const call = await run.callCredentialEndpoint(client, tokens, { dpopVariation: variation });
  await run.validateCredentialResponse(call);
}

/** CheckTokenEndpointReturnedInvalidRequestGrantOrDPopProofError (RFC 9449 §5, §10.1). */
async function refusedForDpop(run: Fapi2Run, response: Exchange) {
  await run.c.check('CheckTokenEndpointReturnedInvalidRequestGrantOrDPopProofError', () =>
    cond.errorWithStatus(response, cond.INVALID_REQUEST_GRANT_OR_DPOP_PROOF),
  );
}

/** AddInvalidDpopJktToAuthorizationEndpointRequest: the thumbprint of a key the client does not use. */
async function addInvalidDpopJkt(c: Conditions, params: Record<string, string>) {
  await c.check('AddInvalidDpopJktToAuthorizationEndpointRequest', async () => {
    params['dpop_jkt'] = await thumbprintOf(newSuiteKey().publicJwk);
  });
}

const flipSignature = (jws: string) => {
  const [header, payload, signature] = jws.split('.');
  const bytes = Buffer.from(signature!, 'base64url').map((b) => b ^ 0x5a);
  return `${header}.${payload}.${Buffer.from(bytes).toString('base64url')}`;
};

conformancePlan<HaipIssuerWorld>('oid4vci-1_0-issuer-haip-test-plan', {
  file: import.meta.filename,
  setup: () => startHaipIssuerWorld('dpop'),
  teardown: (world) => world.close(),
  modules: {
    'fapi2-security-profile-final-check-dpop-proof-nbf-exp': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      await flowWithDpop(
        run,
        {
          claims: (claims) => {
            claims['nbf'] = seconds();
            claims['exp'] = seconds() + 300;
          },
        },
        { dpopAtPar: false },
      );
      await run.c.check('SetDpopNbfToNow', () => assert.ok(true));
      await run.c.check('SetDpopExpToFiveMinutesInFuture', () => assert.ok(true));
    },

    'fapi2-security-profile-final-ensure-dpopproof-with-iat-10seconds-before-succeeds': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      await run.c.check('SetDpopIatTo10SecondsInPast', () => assert.ok(true));
      await flowWithDpop(run, { claims: setMember('iat', () => seconds() - 10) }, { dpopAtPar: true });
    },

    'fapi2-security-profile-final-ensure-dpopproof-with-iat-10seconds-after-succeeds': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      // The module's name says 10 s; its condition sets 8 s.
      await run.c.check('SetDpopIatTo8SecondsInFuture', () => assert.ok(true));
      await flowWithDpop(run, { claims: setMember('iat', () => seconds() + 8) }, { dpopAtPar: true });
    },

    'fapi2-security-profile-final-ensure-mismatched-dpop-jkt-fails': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      await run.c.check('GenerateDpopKey', () => assert.ok(run.client1.dpop()));
      const request = await run.createAuthorizationRequest(run.client1);
      await addInvalidDpopJkt(run.c, request.params);
      const par = await run.callParEndpoint(request, { dpop: true });
      await run.c.check('EnsurePARInvalidRequestOrInvalidDpopProof', () =>
        cond.ensureParError(par, ['invalid_request', 'invalid_dpop_proof']),
      );
    },

    'fapi2-security-profile-final-ensure-token-endpoint-fails-with-mismatched-dpop-proof-jkt': async (
      c,
      world,
    ) => {
      const run = await new Fapi2Run(c, world).configure();
      const request = await run.createAuthorizationRequest(run.client1);
      const { callback } = await run.authorize(request, { dpop: true });
      const code = await run.processCallback(callback, request);
      // GenerateDpopKey before the token request's proof: another key than the PAR's.
      const other = newSuiteKey();
      await run.c.check('GenerateDpopKey', () =>
        assert.notEqual(other.publicJwk.x, run.client1.dpop().publicJwk.x),
      );
      run.client1.dpopKey = other;
      const response = await run.callTokenEndpoint(run.client1, await run.tokenRequestForCode(request, code));
      await refusedForDpop(run, response);
    },

    'fapi2-security-profile-final-ensure-token-endpoint-fails-with-mismatched-dpop-jkt': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      await run.c.check('GenerateDpopKey', () => assert.ok(run.client1.dpop()));
      const request = await run.createAuthorizationRequest(run.client1);
      await addInvalidDpopJkt(run.c, request.params);
      const { callback } = await run.authorize(request);
      const code = await run.processCallback(callback, request);
      const response = await run.callTokenEndpoint(run.client1, await run.tokenRequestForCode(request, code));
      await refusedForDpop(run, response);
    },

    'fapi2-security-profile-final-ensure-dpopproof-at-par-endpoint-binding-success': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      const { tokens } = await run.obtainTokens(run.client1, { dpopAtPar: true });
      await run.requestProtectedResource(run.client1, tokens);
    },

    'fapi2-security-profile-final-ensure-dpop-auth-code-binding-success': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      await run.c.check('GenerateDpopKey', () => assert.ok(run.client1.dpop()));
      const request = await run.createAuthorizationRequest(run.client1);
      await run.addDpopJkt(request);
      const { tokens } = await run.obtainTokens(run.client1, { request, dpopAtPar: true });
      await run.requestProtectedResource(run.client1, tokens);
    },

    'fapi2-security-profile-final-ensure-holder-of-key-required': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      await run.c.check('ExtractTLSTestValuesFromServerConfiguration', () =>
        assert.ok(new URL(run.server.as.token_endpoint).host),
      );
      // The authorization, userinfo and token endpoints' TLS (no registration endpoint).
      await tlsIsTheDeployments(run.c, run.server.as.token_endpoint);
      const request = await run.createAuthorizationRequest(run.client1);
      const { callback } = await run.authorize(request);
      const code = await run.processCallback(callback, request);
      // Client authentication, no DPoP proof.
      const response = await run.callTokenEndpoint(
        run.client1,
        await run.tokenRequestForCode(request, code),
        {
          dpop: false,
        },
      );
      await run.c.check('CallTokenEndpointAllowingTLSFailure', () => assert.ok(response.status > 0));
      await run.c.check('EnsureHttpStatusCodeIs4xx', () => cond.ensureHttpStatusCodeIs4xx(response));
      await run.c.check('CheckTokenEndpointHttpStatus400or401', () =>
        cond.ensureHttpStatus(response, [400, 401]),
      );
      await run.c.check('CheckTokenEndpointReturnedJsonContentType', () =>
        cond.ensureContentTypeJson(response),
      );
      await refusedForDpop(run, response);
      await run.tokenErrorFieldChecks(response);
    },

    'fapi2-security-profile-final-dpop-negative-tests': async (c, world) => {
      const run = await new Fapi2Run(c, world).configure();
      const { tokens } = await run.obtainTokens(run.client1);
      await run.requestProtectedResource(run.client1, tokens);
      await dpopNegativeTests(run, tokens);
    },
  },
});

/**
 * FAPI2SPFinalDpopNegativeTests.requestProtectedResource after the first credential: each case
 * a fresh credential request (c_nonce, proof, request, DPoP proof) with one change, expected to
 * succeed or to be refused with 400/401 (EnsureHttpStatusCodeIs200or201 / …400or401).
 */
async function dpopNegativeTests(run: Fapi2Run, tokens: Tokens) {
  const client = run.client1;
  const url = run.server.credentialEndpoint;
  const fails = async (name: string, call: CredentialCall) =>
    run.c.check('EnsureHttpStatusCodeIs400or401', () => {
      assert.ok(
        [400, 401].includes(call.response.status),
        `${name}: HTTP ${call.response.status} ${call.response.text}`,
      );
    });
  const succeeds = (call: CredentialCall) => run.expectRepeatedCredentialSuccess(call);
  const send = (variation: DpopVariation, options: Parameters<Fapi2Run['callCredentialEndpoint']>[2] = {}) =>
    run.callCredentialEndpoint(client, tokens, { dpopVariation: variation, ...options });

  // DPoP header name in capitals (RFC 9449 §4.1; HTTP field names are case-insensitive).
  await run.c.check('Fapi2DPoPNegativeConditions.AddDpopHeaderAllCapital', () => assert.ok(true));
  await succeeds(await send({}, { dpopHeaderName: 'DPOP' }));

  // Two DPoP headers (the previous proof kept, a new one made).
  const previous = await run.dpopProofFor(client, 'RESOURCE', url, {}, tokens.dpopKey, tokens.accessToken);
  await fails('two proofs', await send({ after: (proof) => `${proof}, ${previous}` }));
  await fails('not a JWT', await send({ after: (proof) => proof.split('.').slice(0, 2).join('.') }));
  await fails('no typ', await send({ header: (h) => delete h['typ'] }));
  await fails(
    'no alg',
    await send({
      after: (proof) => {
        const [header, ...rest] = proof.split('.');
        const renamed = Buffer.from(header!, 'base64url').toString().replace('alg', 'alg2');
        return [Buffer.from(renamed).toString('base64url'), ...rest].join('.');
      },
    }),
  );
  await fails('no jwk', await send({ header: (h) => delete h['jwk'] }));
  for (const claim of ['jti', 'htm', 'htu', 'iat']) {
    await fails(`no ${claim}`, await send({ claims: (claims) => delete claims[claim] }));
  }
  await fails('no ath', await send({ withoutAth: true }));
  await fails('typ invalid', await send({ header: setMember('typ', () => 'dpop+jwt+wrongyousee') }));
  // (RS256 is tried only with an RSA DPoP key; HAIP's is ES256.)
  await fails('alg none', await send({ unsigned: true }));
  await fails('bad signature', await send({ after: flipSignature }));
  await fails(
    'private jwk',
    await send({ header: setMember('jwk', () => ({ ...tokens.dpopKey.privateJwk })) }),
  );
  await fails('htm PUT', await send({ claims: setMember('htm', () => 'PUT') }));
  await succeeds(
    await send({
      claims: setMember(
        'htu',
        (c) => `${c['htu']}?allthedoorsonthisspaceshiphavebeen#programmedtohaveacheeryandsunnydisposition`,
      ),
    }),
  );
  await succeeds(await send({ claims: setMember('htu', (c) => String(c['htu']).split('?')[0]) }));
  await fails('htu elsewhere', await send({ claims: setMember('htu', (c) => `${c['htu']}ohnonotagain`) }));

  // iat an hour off: refused, unless the server's demand of a nonce (the first try has none)
  // stood in for the iat check (callResourceEndpointStepsForIatAndNonceTests).
  for (const offset of [3600, -3600]) {
    client.rsNonce = undefined;
    const call = await send({ claims: setMember('iat', () => seconds() + offset) });
    if (call.usedNonce) await succeeds(call);
    else await fails(`iat ${offset}`, call);
  }

  const jti = randomString(11);
  await succeeds(await send({ claims: setMember('jti', () => jti) }));
  await fails('jti again', await send({ claims: setMember('jti', () => jti) }));
  await run.c.check('SetDpopAccessTokenHashToIncorrectValue', () => assert.ok(true));
  await fails(
    'ath of another token',
    await send({ claims: setMember('ath', () => sha256Base64url('another access token')) }),
  );
  await fails('another key', await send({ signWith: newSuiteKey() }));
  await succeeds(
    await send({
      header: setMember('tx_id', () => seconds() + 3600),
      claims: setMember('tx_id_key', () => seconds() + 3600),
    }),
  );
  // htu with the scheme and host in capitals (RFC 3986 §6.2.2–6.2.3 normalisation).
  await succeeds(
    await send({
      claims: (claims) => {
        const htu = new URL(url);
        claims['htu'] = String(claims['htu'])
          .replace(htu.hostname, htu.hostname.toUpperCase())
          .replace(htu.protocol.slice(0, -1), htu.protocol.slice(0, -1).toUpperCase());
      },
    }),
  );
  // DpopHtuWithPort: the endpoint already names its port here, so the htu is unchanged.
  await succeeds(await send({ claims: setMember('htu', () => url) }));
  await fails('no DPoP header', await send({}, { withoutDpop: true }));
  await fails('no DPoP header, Bearer', await send({}, { withoutDpop: true, scheme: 'Bearer' }));
  // A correct proof still works: the refusals above were the proofs'.
  await succeeds(await send({}));
}
