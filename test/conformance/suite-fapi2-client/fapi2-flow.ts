import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { codeFromOutbox } from '../../oidc/flow-helpers.ts';
import type { Conditions } from '../harness.ts';
import * as cond from './conditions.ts';
import { verifySdJwtCredential } from './credential-checks.ts';
import { createDpopProof, type DpopVariation, isNqchar } from './dpop.ts';
import type { HaipIssuerWorld } from './haip-world.ts';
import { type Exchange, exchange, form } from './http.ts';
import { randomString, seconds, signCompact, thumbprintOf } from './keys.ts';
import { reportedOnce } from './once.ts';
import { newClientId, SuiteClient } from './suite-client.ts';

// biome-ignore lint/suspicious/noExplicitAny: the suite reads arbitrary JSON
type Json = any;

/** What the suite learned of the issuer and its authorization server (fetchServerConfiguration). */
export interface SuiteServer {
  credentialIssuer: string;
  issuerMetadata: Json;
  /** The RFC 8414 metadata of the one authorization server the issuer names. */
  as: Json;
  asMetadataUrl: string;
  /** vci_credential_configuration */
  configuration: Json;
  /** protected_resource_url: the credential endpoint. */
  credentialEndpoint: string;
}

/** An authorization request the suite made (authorization_endpoint_request) and its PKCE verifier. */
export interface AuthorizationRequest {
  client: SuiteClient;
  params: Record<string, string>;
  state: string | undefined;
  codeVerifier: string | undefined;
  redirectUri: string;
}

/** Where the browser ended after visiting the authorization endpoint. */
export type Visit =
  | { kind: 'login'; interactionPath: string }
  | { kind: 'callback'; url: string }
  | { kind: 'errorPage'; status: number; text: string };

export interface Tokens {
  accessToken: string;
  tokenType: string;
  response: Exchange;
  /** The DPoP key the access token is bound to. */
  dpopKey: ReturnType<SuiteClient['dpop']>;
}

export interface CredentialCall {
  response: Exchange;
  /** The keys the request's proofs named. */
  proofKeys: ReturnType<SuiteClient['publicJwks']>;
}

const PKCE = (verifier: string) => createHash('sha256').update(verifier, 'ascii').digest('base64url');
const alphanumeric = (length: number) => {
  let out = '';
  while (out.length < length) out += randomString(length).replace(/[^A-Za-z0-9]/g, '');
  return out.slice(0, length);
};

/**
 * One run of a FAPI 2.0 Security Profile authorization-server module of the HAIP issuer plan
 * (AbstractFAPI2SPFinalServerTestModule with VCIHaipProfileBehavior): configuration, the PAR
 * authorization request, the person's log-in at the issuer's authorization server (headless,
 * through the interaction's JSON endpoints, with the e-mail code from the outbox), the callback,
 * the token endpoint with client attestation and DPoP, the nonce endpoint and the credential
 * request as the protected resource. Each step is a method the modules call or vary.
 */
export class Fapi2Run {
  readonly c: Conditions;
  server!: SuiteServer;
  client1!: SuiteClient;
  client2: SuiteClient | undefined;
  readonly fetch: typeof fetch;
  readonly world: HaipIssuerWorld;

  constructor(c: Conditions, world: HaipIssuerWorld) {
    this.world = world;
    this.c = reportedOnce(c);
    this.fetch = world.front.fetch;
    this.c.variant('sd_jwt_vc, wallet-initiated, client_attestation, DPoP (ES256), unsigned PAR, scope');
  }

  // ---------------------------------------------------------------- configuration

  /** configure(): CreateRedirectUri, the server configuration, client 1 (and client 2), the resource. */
  async configure(options: { secondClient?: boolean } = {}): Promise<this> {
    const { c } = this;
    const redirectUri = `${this.world.suiteBaseUrl}/callback`;
    await c.check('CreateRedirectUri', () => assert.ok(new URL(redirectUri)));
    await this.fetchServerConfiguration();
    await c.check('CheckServerConfiguration', () => {
      for (const member of ['authorization_endpoint', 'token_endpoint', 'issuer'])
        assert.ok(typeof this.server.as[member] === 'string' && this.server.as[member], `no ${member}`);
    });
    this.client1 = await this.configureClient(1, redirectUri);
    if (options.secondClient) {
      // AbstractFAPI2SPFinalMultipleClient: the second client's redirect URI has a query
      // (AddRedirectUriQuerySuffix), which must come back unchanged.
      const withQuery = `${redirectUri}?dummy1=lorem&dummy2=ipsum`;
      await c.check('AddRedirectUriQuerySuffix', () => assert.equal(new URL(withQuery).searchParams.size, 2));
      this.client2 = await this.configureClient(2, withQuery);
      await c.check('ValidateClientPrivateKeysAreDifferent', async () =>
        assert.notEqual(
          await thumbprintOf(this.client1.proofKeys[0]!.publicJwk),
          await thumbprintOf(this.client2!.proofKeys[0]!.publicJwk),
        ),
      );
    }
    await c.check('VCIResolveCredentialEndpointToUse', () =>
      assert.equal(typeof this.server.issuerMetadata.credential_endpoint, 'string'),
    );
    await c.check('SetProtectedResourceUrlToSingleResourceEndpoint', () =>
      assert.ok(this.server.credentialEndpoint),
    );
    return this;
  }

  /**
   * VCIProfileBehavior.fetchServerConfiguration, with VCIHaipProfileBehavior's nonce endpoint
   * check; the discovery module's fetch (discoveryFetchServerConfiguration) has neither that nor
   * the TLS information.
   */
  async fetchServerConfiguration(options: { discovery?: boolean } = {}) {
    const { c } = this;
    const issuerId = this.world.issuerId;
    const issuerUrl = new URL(issuerId);
    let metadataResponse: Exchange;
    await c.check('VCIGetDynamicCredentialIssuerMetadata', async () => {
      metadataResponse = await exchange(
        this.fetch,
        `${issuerUrl.origin}/.well-known/openid-credential-issuer${issuerUrl.pathname}`,
      );
      assert.equal(metadataResponse.status, 200);
    });
    let issuerMetadata: Json;
    await c.check('VCIParseCredentialIssuerMetadata', () => {
      issuerMetadata = JSON.parse(metadataResponse.text);
      assert.ok(issuerMetadata && typeof issuerMetadata === 'object' && !Array.isArray(issuerMetadata));
    });
    if (!options.discovery)
      await c.check('VCIExtractTlsInfoFromCredentialIssuer', () =>
        assert.equal(issuerUrl.protocol, 'https:'),
      );
    const asMetadata: Record<string, { url: string; body: Json }> = {};
    await c.check('VCIFetchOAuthorizationServerMetadata', async () => {
      const servers = issuerMetadata.authorization_servers ?? [issuerId];
      assert.ok(Array.isArray(servers), 'authorization_servers is not an array');
      for (const as of servers as string[]) {
        const url = new URL(as);
        const path = url.pathname === '/' ? '' : url.pathname;
        const metadataUrl = `${url.origin}/.well-known/oauth-authorization-server${path}`;
        const response = await exchange(this.fetch, metadataUrl);
        assert.equal(response.status, 200, `${metadataUrl}: HTTP ${response.status}`);
        asMetadata[as] = { url: metadataUrl, body: response.body };
      }
    });
    let selected!: string;
    await c.check('VCISelectOAuthorizationServer', () => {
      const names = Object.keys(asMetadata);
      assert.equal(names.length, 1, 'several authorization servers and none configured');
      selected = names[0]!;
    });
    if (!options.discovery)
      await c.check('VCIValidateNonceEndpointInIssuerMetadata', () =>
        assert.equal(typeof issuerMetadata.nonce_endpoint, 'string'),
      );
    this.server = {
      credentialIssuer: issuerMetadata.credential_issuer,
      issuerMetadata,
      as: asMetadata[selected]!.body,
      asMetadataUrl: asMetadata[selected]!.url,
      configuration: undefined,
      credentialEndpoint: issuerMetadata.credential_endpoint,
    };
  }

  /** configureClient / configureSecondClient with VCIHaipProfileBehavior's extras and the client attestation. */
  async configureClient(n: 1 | 2, redirectUri: string): Promise<SuiteClient> {
    const { c } = this;
    const client = new SuiteClient(newClientId(n), redirectUri, this.world.attester);
    await c.check(n === 1 ? 'GetStaticClientConfiguration' : 'GetStaticClient2Configuration', () =>
      assert.ok(client.clientId),
    );
    const configurationId = this.world.configurationId;
    await c.check('VCIAddCredentialConfigurationIdToEnv', () => assert.ok(configurationId));
    let configuration: Json;
    await c.check('VCIResolveRequestedCredentialConfiguration', () => {
      configuration = this.server.issuerMetadata.credential_configurations_supported?.[configurationId];
      assert.ok(configuration, `no configuration ${configurationId}`);
    });
    this.server.configuration = configuration;
    await c.check('VCIEnsureResolvedCredentialConfigurationMatchesSelection', () =>
      assert.equal(configuration.format, 'dc+sd-jwt'),
    );
    await c.check('VCIEnsureScopePresentInCredentialConfigurationForHaip', () =>
      assert.ok(typeof configuration.scope === 'string' && configuration.scope.length > 0),
    );
    await c.check('VCIDetermineCredentialConfigurationTransferMethod', () =>
      assert.ok(configuration.scope, 'the scope is used, not authorization_details'),
    );
    await c.check('VCIResolveCredentialProofTypeToUse', () => {
      assert.ok(configuration.cryptographic_binding_methods_supported && configuration.proof_types_supported);
      assert.equal(Object.keys(configuration.proof_types_supported)[0], 'jwt');
    });
    await c.check('VCICheckKeyAttestationJwksIfKeyAttestationIsRequired', () =>
      assert.ok(this.world.attester.x5c.length > 0),
    );
    await c.check('GenerateClientAttestationClientInstanceKey', () =>
      assert.equal(client.instanceKey.publicJwk.crv, 'P-256'),
    );
    await c.check('CreateClientAttestationJwt', async () =>
      assert.ok(await client.createClientAttestation()),
    );
    await c.check('VCIGenerateClientJwksIfMissing', () => assert.equal(client.proofKeys.length, 1));
    await c.check('VCIValidateClientJWKsPrivatePart', () => assert.ok(client.proofKeys[0]!.privateJwk.d));
    await c.check('ExtractJWKsFromStaticClientConfiguration', () =>
      assert.equal(client.publicJwks().length, 1),
    );
    await c.check('CheckForKeyIdInClientJWKs', () => assert.ok(client.publicJwks().every((k) => k.kid)));
    await c.check('CheckDistinctKeyIdValueInClientJWKs', () => {
      const kids = client.publicJwks().map((k) => k.kid);
      assert.equal(new Set(kids).size, kids.length);
    });
    await c.check('FAPI2CheckKeyAlgInClientJWKs', () =>
      assert.ok(client.publicJwks().every((k) => k.alg === 'ES256')),
    );
    await c.check('FAPI2FinalEnsureMinimumClientKeyLength', () =>
      assert.ok(client.publicJwks().every((k) => k.crv === 'P-256')),
    );
    return client;
  }

  get asIssuer(): string {
    return this.server.as.issuer;
  }

  // ---------------------------------------------------------------- authorization request

  /**
   * CreateAuthorizationRequestSteps: client_id, redirect_uri and scope, a random state (10
   * characters, 128 for the second client), response_type code, PKCE S256.
   */
  async createAuthorizationRequest(
    client: SuiteClient,
    options: { stateLength?: number; withoutState?: boolean; withoutPkce?: boolean } = {},
  ): Promise<AuthorizationRequest> {
    const { c } = this;
    const params: Record<string, string> = {};
    await c.check('CreateAuthorizationEndpointRequestFromClientInformation', () => {
      params['client_id'] = client.clientId;
      params['redirect_uri'] = client.redirectUri;
      params['scope'] = this.server.configuration.scope;
    });
    let state: string | undefined;
    await c.check('CreateRandomStateValue', () => {
      const length = options.stateLength ?? (client === this.client2 ? 128 : 10);
      state = length > 10 ? `${alphanumeric(length - 4)}-._~` : alphanumeric(length);
      assert.equal(state.length, length);
    });
    if (!options.withoutState) {
      await c.check('AddStateToAuthorizationEndpointRequest', () => {
        params['state'] = state!;
      });
    } else {
      state = undefined;
    }
    await c.check('SetAuthorizationEndpointRequestResponseTypeToCode', () => {
      params['response_type'] = 'code';
    });
    let codeVerifier: string | undefined;
    if (!options.withoutPkce) {
      await c.check('CreateRandomCodeVerifier', () => {
        codeVerifier = randomString(32);
        assert.ok(codeVerifier.length >= 43);
      });
      await c.check('CreateS256CodeChallenge', () => assert.ok(codeVerifier));
      await c.check('AddCodeChallengeToAuthorizationEndpointRequest', () => {
        params['code_challenge'] = PKCE(codeVerifier!);
        params['code_challenge_method'] = 'S256';
      });
    }
    return { client, params, state, codeVerifier, redirectUri: client.redirectUri };
  }

  /** AddDpopJktToAuthorizationEndpointRequest (RFC 9449 §10.1), for the client's DPoP key. */
  async addDpopJkt(request: AuthorizationRequest) {
    await this.c.check('AddDpopJktToAuthorizationEndpointRequest', async () => {
      request.params['dpop_jkt'] = await thumbprintOf(request.client.dpop().publicJwk);
    });
  }

  /**
   * The PAR call (callParEndpointAndStopOnFailure): client attestation headers made afresh for
   * each attempt; with `dpop`, a DPoP proof of the client's key and one retry on use_dpop_nonce
   * (CallPAREndpointAllowingDpopNonceError).
   */
  async callParEndpoint(
    request: AuthorizationRequest,
    options: {
      dpop?: boolean;
      dpopVariation?: DpopVariation;
      method?: string;
      body?: Record<string, string>;
    } = {},
  ): Promise<Exchange> {
    const { c } = this;
    const client = request.client;
    const url = this.server.as.pushed_authorization_request_endpoint as string;
    const body = options.body ?? { ...request.params };
    await c.check('BuildUnsignedPAREndpointRequest', () => assert.ok(Object.keys(body).length > 0));
    if (options.dpop && !client.dpopKey)
      await c.check('GenerateDpopKey', () => assert.equal(client.dpop().publicJwk.crv, 'P-256'));
    let response!: Exchange;
    for (let attempt = 0; attempt < 2; attempt++) {
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
      await c.check('CreateClientAttestationProofJwt', async () =>
        Object.assign(headers, await client.clientAttestationHeaders(this.asIssuer)),
      );
      await c.check('AddClientAttestationHeaderToRequest', () =>
        assert.ok(headers['oauth-client-attestation']),
      );
      await c.check('AddClientAttestationProofHeaderToRequest', () =>
        assert.ok(headers['oauth-client-attestation-pop']),
      );
      if (options.dpop) headers['dpop'] = await this.dpopProofFor(client, 'PAR', url, options.dpopVariation);
      response = await exchange(this.fetch, url, {
        method: options.method ?? 'POST',
        headers,
        body: form(body),
      });
      await this.afterClientAttestationResponse(response);
      if (!options.dpop || response.body?.error !== 'use_dpop_nonce') break;
      await c.check('CallPAREndpointAllowingDpopNonceError', () => {
        client.asNonce = response.headers.get('dpop-nonce') ?? undefined;
        assert.ok(client.asNonce, 'use_dpop_nonce without a DPoP-Nonce header');
      });
    }
    await c.check(options.dpop ? 'CallPAREndpointAllowingDpopNonceError' : 'CallPAREndpoint', () => {
      if (response.status >= 200 && response.status < 300)
        assert.ok(response.body, 'a 2xx PAR answer is not JSON');
    });
    return response;
  }

  /** ExtractClientAttestationChallengeFromResponseHeader, ValidateClientAttestationChallengeResponseHeader. */
  private async afterClientAttestationResponse(response: Exchange) {
    const challenge = response.headers.get('oauth-client-attestation-challenge');
    await this.c.check('ExtractClientAttestationChallengeFromResponseHeader', () => assert.ok(true));
    await this.c.check('ValidateClientAttestationChallengeResponseHeader', () => {
      if (challenge !== null) assert.match(challenge, /^[A-Za-z0-9_\-.~]{16,512}$/);
    });
  }

  /** processParResponse: the checks of a successful PAR answer; the request_uri. */
  async processParResponse(response: Exchange): Promise<{ requestUri: string; expiresIn: number }> {
    const { c } = this;
    await c.check('CheckPAREndpointResponse201WithNoError', () =>
      cond.checkParResponse201WithNoError(response),
    );
    await c.check('CheckForRequestUriValue', () => cond.checkForRequestUriValue(response));
    await c.check('CheckForPARResponseExpiresIn', () => cond.checkForParResponseExpiresIn(response));
    await c.check('EnsureContentTypeJson', () => cond.ensureContentTypeJson(response));
    await c.check('ExtractRequestUriFromPARResponse', () => {
      assert.ok(response.body.request_uri && response.body.expires_in);
    });
    await c.check('EnsureMinimumRequestUriEntropy', () =>
      cond.ensureMinimumRequestUriEntropy(response.body.request_uri),
    );
    return { requestUri: response.body.request_uri, expiresIn: response.body.expires_in };
  }

  /**
   * The front-channel URL: BuildRequestObjectByReferenceRedirectToAuthorizationEndpoint (client_id,
   * request_uri and the request's other parameters again), …WithoutDuplicates (client_id and
   * request_uri only), …ReorderedParams (as the first, in reverse alphabetical order), or
   * BuildPlainRedirectToAuthorizationEndpoint (no PAR: every parameter in the query).
   */
  redirectUrl(
    request: AuthorizationRequest,
    requestUri: string | undefined,
    kind: 'duplicates' | 'withoutDuplicates' | 'reordered' | 'plain',
    extra: Record<string, string> = {},
  ): string {
    const endpoint = new URL(this.server.as.authorization_endpoint);
    let params: [string, string][];
    if (kind === 'plain') params = Object.entries(request.params);
    else if (kind === 'withoutDuplicates')
      params = [
        ['client_id', request.client.clientId],
        ['request_uri', requestUri!],
      ];
    else {
      params = [
        ['client_id', request.client.clientId],
        ['request_uri', requestUri!],
      ];
      for (const [name, value] of Object.entries(request.params)) {
        if (name !== 'client_id' && ['response_type', 'scope', 'redirect_uri', 'state'].includes(name))
          params.push([name, value]);
      }
      if (kind === 'reordered') params.sort(([a], [b]) => b.localeCompare(a));
    }
    for (const [name, value] of Object.entries(extra)) {
      params = params.filter(([n]) => n !== name);
      params.push([name, value]);
    }
    for (const [name, value] of params) endpoint.searchParams.append(name, value);
    return endpoint.href;
  }

  /** The browser goes to the authorization endpoint (performRedirect): a log-in page, a redirect, or an error page. */
  async visit(url: string): Promise<Visit> {
    const response = await this.fetch(url, { redirect: 'manual' });
    const text = await response.text();
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      if (location.startsWith('/interaction/')) return { kind: 'login', interactionPath: location };
      return { kind: 'callback', url: new URL(location, url).href };
    }
    return { kind: 'errorPage', status: response.status, text };
  }

  /**
   * The person logs in at the issuer's authorization server (an e-mail code, from the outbox)
   * and the browser comes back to the suite's callback.
   */
  async logIn(visit: Visit, email = this.world.nextEmail()): Promise<string> {
    assert.equal(visit.kind, 'login', `no log-in page: ${JSON.stringify(visit).slice(0, 400)}`);
    const interaction = (visit as { interactionPath: string }).interactionPath;
    const base = this.world.front.url;
    const post = async (step: string, body: unknown) =>
      exchange(this.fetch, `${base}${interaction}/${step}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const sent = await post('login/email', { email });
    assert.equal(sent.status, 202, sent.text);
    const code = await codeFromOutbox(this.world.server, email);
    const verified = await post('login/email/verify', { code });
    assert.equal(verified.status, 200, verified.text);
    return verified.body.redirect_to as string;
  }

  /** The person cancels at the log-in page (the tester of user-rejects-authentication); where the browser goes. */
  async decline(visit: Visit): Promise<string> {
    assert.equal(visit.kind, 'login', `no log-in page: ${JSON.stringify(visit).slice(0, 400)}`);
    const interaction = (visit as { interactionPath: string }).interactionPath;
    // What the person sees: the log-in page, with a way to cancel.
    const page = await exchange(this.fetch, `${this.world.front.url}${interaction}`, {
      headers: { accept: 'text/html' },
    });
    assert.equal(page.status, 200);
    assert.match(page.text, /<button[^>]*id="login-cancel"[^>]*>Cancel<\/button>/);
    const answer = await exchange(this.fetch, `${this.world.front.url}${interaction}/consent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'decline' }),
    });
    assert.equal(answer.status, 200, `the log-in page offers no way to decline: ${answer.text}`);
    return answer.body.redirect_to as string;
  }

  /** The usual way to a code: PAR, the redirect with duplicated parameters, the log-in. */
  async authorize(
    request: AuthorizationRequest,
    options: { dpop?: boolean; redirect?: 'duplicates' | 'withoutDuplicates' | 'reordered' } = {},
  ): Promise<{ callback: cond.Callback; requestUri: string }> {
    const par = await this.callParEndpoint(request, { dpop: options.dpop ?? false });
    const { requestUri } = await this.processParResponse(par);
    const url = this.redirectUrl(request, requestUri, options.redirect ?? 'duplicates');
    await this.c.check(
      options.redirect === 'withoutDuplicates'
        ? 'BuildRequestObjectByReferenceRedirectToAuthorizationEndpointWithoutDuplicates'
        : options.redirect === 'reordered'
          ? 'BuildRequestObjectByReferenceRedirectToAuthorizationEndpointReorderedParams'
          : 'BuildRequestObjectByReferenceRedirectToAuthorizationEndpoint',
      () => assert.ok(new URL(url).searchParams.get('request_uri')),
    );
    const callback = await this.logIn(await this.visit(url));
    return { callback: cond.callbackOf(callback), requestUri };
  }

  /** processCallback + onAuthorizationCallbackResponse: the checks of a successful response; the code. */
  async processCallback(callback: cond.Callback, request: AuthorizationRequest): Promise<string> {
    const { c } = this;
    await c.check('RejectErrorInUrlFragment', () => cond.rejectErrorInUrlFragment(callback));
    await c.check('RejectAuthCodeInUrlFragment', () => cond.rejectAuthCodeInUrlFragment(callback));
    await c.check('CheckMatchingCallbackParameters', () =>
      cond.checkMatchingCallbackParameters(callback, request.redirectUri),
    );
    await c.check('RejectStateInUrlFragmentForCodeFlow', () => cond.rejectStateInUrlFragment(callback));
    await c.check('CheckIfAuthorizationEndpointError', () =>
      cond.checkIfAuthorizationEndpointError(callback.query),
    );
    await c.check('ValidateSuccessfulAuthCodeFlowResponseFromAuthorizationEndpoint', () =>
      cond.validateSuccessfulAuthCodeFlowResponse(callback.query),
    );
    await c.check('CheckStateInAuthorizationResponse', () =>
      cond.checkStateInAuthorizationResponse(callback.query, request.state),
    );
    await c.check('RequireIssInAuthorizationResponse', () =>
      cond.requireIssInAuthorizationResponse(callback.query, this.asIssuer),
    );
    let code = '';
    await c.check('ExtractAuthorizationCodeFromAuthorizationResponse', () => {
      code = cond.extractAuthorizationCode(callback.query);
    });
    await c.check('EnsureMinimumAuthorizationCodeLength', () => cond.ensureMinimumLength(code));
    await c.check('EnsureMinimumAuthorizationCodeEntropy', () => cond.ensureMinimumEntropy(code));
    return code;
  }

  /** The checks of an error response at the callback (the placeholder modules' error branch). */
  async processErrorCallback(
    callback: cond.Callback,
    request: AuthorizationRequest,
    expected: { condition: string; errors: string[] },
  ) {
    const { c } = this;
    await c.check('CheckStateInAuthorizationResponse', () =>
      cond.checkStateInAuthorizationResponse(callback.query, request.state),
    );
    await c.check('EnsureErrorFromAuthorizationEndpointResponse', () =>
      cond.ensureErrorFromAuthorizationEndpoint(callback.query),
    );
    await c.check('CheckForUnexpectedParametersInErrorResponseFromAuthorizationEndpoint', () =>
      cond.checkForUnexpectedParametersInErrorResponse(
        callback.query,
        request.redirectUri.includes('dummy1'),
      ),
    );
    await c.check(expected.condition, () => cond.errorIsOneOf(callback.query, expected.errors));
  }

  // ---------------------------------------------------------------- token endpoint

  /** CreateTokenEndpointRequestForAuthorizationCodeGrant + AddCodeVerifierToTokenEndpointRequest. */
  async tokenRequestForCode(
    request: AuthorizationRequest,
    code: string,
    options: { codeVerifier?: string | null } = {},
  ): Promise<Record<string, string>> {
    const params: Record<string, string> = {};
    await this.c.check('CreateTokenEndpointRequestForAuthorizationCodeGrant', () => {
      Object.assign(params, { grant_type: 'authorization_code', code, redirect_uri: request.redirectUri });
    });
    const verifier = options.codeVerifier === undefined ? request.codeVerifier : options.codeVerifier;
    if (verifier !== null && verifier !== undefined) {
      await this.c.check('AddCodeVerifierToTokenEndpointRequest', () => {
        params['code_verifier'] = verifier;
      });
    }
    return params;
  }

  /**
   * callSenderConstrainedTokenEndpoint: client attestation headers (of `authenticateAs`, or none)
   * and a DPoP proof of `dpopKey` made afresh for each attempt, one retry on use_dpop_nonce.
   */
  async callTokenEndpoint(
    client: SuiteClient,
    params: Record<string, string>,
    options: {
      dpop?: boolean;
      dpopKey?: ReturnType<SuiteClient['dpop']>;
      dpopVariation?: DpopVariation;
      authenticateAs?: SuiteClient | null;
    } = {},
  ): Promise<Exchange> {
    const { c } = this;
    const url = this.server.as.token_endpoint as string;
    const authenticating = options.authenticateAs === undefined ? client : options.authenticateAs;
    const dpop = options.dpop ?? true;
    if (dpop && !options.dpopKey && !client.dpopKey)
      await c.check('GenerateDpopKey', () => assert.equal(client.dpop().publicJwk.crv, 'P-256'));
    let response!: Exchange;
    for (let attempt = 0; attempt < 2; attempt++) {
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
      if (authenticating) {
        await c.check('CreateClientAttestationProofJwt', async () =>
          Object.assign(headers, await authenticating.clientAttestationHeaders(this.asIssuer)),
        );
        await c.check('AddClientAttestationHeaderToRequest', () =>
          assert.ok(headers['oauth-client-attestation']),
        );
        await c.check('AddClientAttestationProofHeaderToRequest', () =>
          assert.ok(headers['oauth-client-attestation-pop']),
        );
      }
      if (dpop) {
        const key = options.dpopKey ?? client.dpop();
        headers['dpop'] = await this.dpopProofFor(client, 'TOKEN', url, options.dpopVariation, key);
      }
      response = await exchange(this.fetch, url, { method: 'POST', headers, body: form(params) });
      await this.afterClientAttestationResponse(response);
      if (!dpop || response.body?.error !== 'use_dpop_nonce') break;
      await c.check('CallTokenEndpointAllowingDpopNonceErrorAndReturnFullResponse', () => {
        client.asNonce = response.headers.get('dpop-nonce') ?? undefined;
        assert.ok(client.asNonce, 'use_dpop_nonce without a DPoP-Nonce header');
      });
    }
    await c.check(
      dpop
        ? 'CallTokenEndpointAllowingDpopNonceErrorAndReturnFullResponse'
        : 'CallTokenEndpointAndReturnFullResponse',
      () =>
        assert.ok(
          response.body !== undefined,
          `the token endpoint answered no JSON: ${response.text.slice(0, 200)}`,
        ),
    );
    return response;
  }

  /** processTokenEndpointResponse with the VCI post-token checks. */
  async processTokenResponse(
    client: SuiteClient,
    response: Exchange,
    dpopKey = client.dpop(),
  ): Promise<Tokens> {
    const { c } = this;
    await c.check('CheckTokenEndpointHttpStatus200', () => cond.ensureHttpStatus(response, [200]));
    await c.check('CheckIfTokenEndpointResponseError', () =>
      cond.checkIfTokenEndpointResponseError(response),
    );
    await c.check('CheckForAccessTokenValue', () => cond.checkForAccessTokenValue(response));
    await c.check('ExtractAccessTokenFromTokenResponse', () => assert.ok(response.body.access_token));
    await c.check('ExtractExpiresInFromTokenEndpointResponse', () => cond.extractExpiresIn(response));
    await c.check('ValidateExpiresIn', () => cond.validateExpiresIn(response));
    await c.check('CheckForRefreshTokenValue', () => assert.ok(true));
    if (response.body.refresh_token !== undefined) {
      await c.check('EnsureMinimumRefreshTokenLength', () =>
        cond.ensureMinimumLength(response.body.refresh_token),
      );
      await c.check('EnsureMinimumRefreshTokenEntropy', () =>
        cond.ensureMinimumEntropy(response.body.refresh_token),
      );
    }
    await c.check('EnsureMinimumAccessTokenLength', () =>
      cond.ensureMinimumLength(response.body.access_token),
    );
    await c.check('EnsureMinimumAccessTokenEntropy', () =>
      cond.ensureMinimumEntropy(response.body.access_token),
    );
    await c.check('ExpectNoIdTokenInTokenResponse', () => cond.expectNoIdTokenInTokenResponse(response));
    // afterTokenEndpointResponseProcessed: the request had no authorization_details, so only the
    // extraction runs (an authorization_details answer would be checked by the skipped ones).
    await c.check('VCIExtractCredentialIdentifiersFromTokenEndpointResponse', () => {
      const details = response.body.authorization_details;
      if (details !== undefined) assert.ok(Array.isArray(details));
    });
    return {
      accessToken: response.body.access_token,
      tokenType: response.body.token_type,
      response,
      dpopKey,
    };
  }

  /** The error checks every token-endpoint refusal gets (ValidateError…, CRLF, description, uri). */
  async tokenErrorFieldChecks(response: Exchange) {
    const { c } = this;
    await c.check('ValidateErrorFromTokenEndpointResponseError', () =>
      cond.validateErrorField(response.body),
    );
    await c.check('CheckErrorDescriptionFromTokenEndpointResponseErrorContainsCRLFTAB', () =>
      cond.checkErrorDescriptionContainsNoCrLfTab(response.body),
    );
    await c.check('ValidateErrorDescriptionFromTokenEndpointResponseError', () =>
      cond.validateErrorDescription(response.body),
    );
    await c.check('ValidateErrorUriFromTokenEndpointResponseError', () =>
      cond.validateErrorUri(response.body),
    );
  }

  /** The full way to tokens for one client: request, PAR, log-in, callback, token. */
  async obtainTokens(
    client: SuiteClient,
    options: {
      request?: AuthorizationRequest;
      dpopAtPar?: boolean;
      redirect?: 'duplicates' | 'withoutDuplicates' | 'reordered';
    } = {},
  ): Promise<{ request: AuthorizationRequest; tokens: Tokens; code: string }> {
    const request = options.request ?? (await this.createAuthorizationRequest(client));
    const { callback } = await this.authorize(request, {
      dpop: options.dpopAtPar ?? false,
      redirect: options.redirect ?? 'duplicates',
    });
    const code = await this.processCallback(callback, request);
    const response = await this.callTokenEndpoint(client, await this.tokenRequestForCode(request, code));
    return { request, code, tokens: await this.processTokenResponse(client, response) };
  }

  // ---------------------------------------------------------------- DPoP

  /** CreateDpopProofSteps for an endpoint, with the server's nonce when one was given. */
  async dpopProofFor(
    client: SuiteClient,
    endpoint: 'PAR' | 'TOKEN' | 'RESOURCE',
    url: string,
    variation: DpopVariation = {},
    key = client.dpop(),
    accessToken?: string,
  ): Promise<string> {
    const { c } = this;
    const nonce = endpoint === 'RESOURCE' ? client.rsNonce : client.asNonce;
    await c.check('CreateDpopHeader', () => assert.equal(key.publicJwk.kty, 'EC'));
    await c.check('CreateDpopClaims', () => assert.ok(true));
    if (endpoint === 'PAR') await c.check('SetDpopHtmHtuForParEndpoint', () => assert.ok(url));
    if (endpoint === 'TOKEN') await c.check('SetDpopHtmHtuForTokenEndpoint', () => assert.ok(url));
    if (endpoint === 'RESOURCE') {
      await c.check('SetDpopHtmHtuForResourceEndpoint', () => assert.ok(url));
      await c.check('SetDpopAccessTokenHash', () => assert.ok(accessToken));
    }
    await c.check(
      endpoint === 'RESOURCE'
        ? 'SetDpopProofNonceForResourceEndpoint'
        : 'SetDpopProofNonceForAuthorizationServer',
      () => assert.ok(true),
    );
    await c.check('EnsureDpopNonceContainsAllowedCharactersOnly', () => {
      if (nonce !== undefined) assert.ok(isNqchar(nonce), `nonce ${nonce}`);
    });
    let proof = '';
    await c.check('SignDpopProof', async () => {
      proof = await createDpopProof(key, { htm: 'POST', htu: url, nonce, accessToken }, variation);
    });
    return proof;
  }

  // ---------------------------------------------------------------- the resource: the credential endpoint

  /** callNonceEndpointIfNeeded: CallCredentialIssuerNonceEndpoint and ValidateVCINonceEndpointResponse. */
  async fetchCNonce(): Promise<string> {
    const { c } = this;
    let response!: Exchange;
    await c.check('CallCredentialIssuerNonceEndpoint', async () => {
      response = await exchange(this.fetch, this.server.issuerMetadata.nonce_endpoint, { method: 'POST' });
    });
    await c.check('EnsureHttpStatusCodeIs200', () => cond.ensureHttpStatus(response, [200]));
    await c.check('EnsureContentTypeJson', () => cond.ensureContentTypeJson(response));
    await c.check('CheckCacheControlHeaderContainsNoStore', () =>
      cond.checkCacheControlHeaderContainsNoStore(response),
    );
    await c.check('VCIValidateCredentialNonceResponse', () =>
      assert.ok(response.body?.c_nonce, 'no c_nonce'),
    );
    return response.body.c_nonce as string;
  }

  /**
   * generateProofAndPopulateCredentialRequest: VCIGenerateKeyAttestationIfNecessary (the
   * configuration wants key attestations), VCIGenerateJwtProof, VCICreateCredentialRequest,
   * SerializeVCICredentialRequestObject.
   */
  async credentialRequestBody(client: SuiteClient, cNonce: string): Promise<string> {
    const { c } = this;
    const configuration = this.server.configuration;
    let keyAttestation: string | undefined;
    await c.check('VCIGenerateKeyAttestationIfNecessary', async () => {
      const required = configuration.proof_types_supported?.jwt?.key_attestations_required;
      if (required === undefined) return;
      keyAttestation = await signCompact(
        { alg: 'ES256', typ: 'key-attestation+jwt', x5c: this.world.attester.x5c },
        {
          iat: seconds(),
          exp: seconds() + 300,
          attested_keys: client.proofKeys.map((k) => ({ ...k.publicJwk })),
          ...(required.key_storage ? { key_storage: required.key_storage } : {}),
          ...(required.user_authentication ? { user_authentication: required.user_authentication } : {}),
          nonce: cNonce,
        },
        this.world.attester.privateKey,
      );
    });
    const proofs: string[] = [];
    await c.check('VCIGenerateJwtProof', async () => {
      for (const key of client.proofKeys) {
        const { kty, crv, x, y } = key.publicJwk;
        proofs.push(
          await signCompact(
            {
              alg: 'ES256',
              typ: 'openid4vci-proof+jwt',
              jwk: { kty, crv, x, y },
              ...(keyAttestation ? { key_attestation: keyAttestation } : {}),
            },
            { iss: client.clientId, aud: this.server.credentialIssuer, iat: seconds(), nonce: cNonce },
            key.privateKey,
          ),
        );
      }
    });
    const request: Record<string, unknown> = {};
    await c.check('VCICreateCredentialRequest', () => {
      request['credential_configuration_id'] = this.world.configurationId;
      request['proofs'] = { jwt: proofs };
    });
    let body = '';
    await c.check('SerializeVCICredentialRequestObject', () => {
      body = JSON.stringify(request);
    });
    return body;
  }

  /**
   * One credential request (requestProtectedResourceUsingDpop, or the update + call of a repeated
   * one): a fresh c_nonce, proof and request, a DPoP proof with ath, and one retry on
   * use_dpop_nonce (CallProtectedResourceAllowingDpopNonceError).
   */
  async callCredentialEndpoint(
    client: SuiteClient,
    tokens: Pick<Tokens, 'accessToken' | 'tokenType' | 'dpopKey'>,
    options: {
      dpopVariation?: DpopVariation;
      scheme?: string;
      headers?: Record<string, string>;
      withoutDpop?: boolean;
      /** The DPoP header's name as sent (AddDpopHeaderAllCapital: DPOP). */
      dpopHeaderName?: string;
      /** Proofs made by the second try again (the suite builds the whole request per attempt). */
      freshNonceFirst?: boolean;
      retries?: number;
    } = {},
  ): Promise<CredentialCall & { usedNonce: boolean }> {
    const { c } = this;
    const url = this.server.credentialEndpoint;
    let response!: Exchange;
    let usedNonce = false;
    for (let attempt = 0; attempt < (options.retries ?? 2); attempt++) {
      const cNonce = await this.fetchCNonce();
      const body = await this.credentialRequestBody(client, cNonce);
      const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
      headers['authorization'] = `${options.scheme ?? tokens.tokenType} ${tokens.accessToken}`;
      if (!options.withoutDpop) {
        headers[options.dpopHeaderName ?? 'dpop'] = await this.dpopProofFor(
          client,
          'RESOURCE',
          url,
          options.dpopVariation,
          tokens.dpopKey,
          tokens.accessToken,
        );
      }
      await c.check('CreateEmptyResourceEndpointRequestHeaders', () => assert.ok(headers));
      response = await exchange(this.fetch, url, { method: 'POST', headers, body });
      const challenge = response.headers.get('www-authenticate') ?? '';
      if (options.withoutDpop || response.status !== 401 || !/error="use_dpop_nonce"/.test(challenge)) break;
      usedNonce = true;
      await c.check('CallProtectedResourceAllowingDpopNonceError', () => {
        client.rsNonce = response.headers.get('dpop-nonce') ?? undefined;
        assert.ok(client.rsNonce, 'use_dpop_nonce without a DPoP-Nonce header');
      });
    }
    await c.check(
      options.withoutDpop ? 'CallProtectedResource' : 'CallProtectedResourceAllowingDpopNonceError',
      () => assert.ok(response.status > 0),
    );
    return { response, proofKeys: client.publicJwks(), usedNonce };
  }

  /** requestProtectedResource's checks after the call, then validateResourceEndpointResponse. */
  async validateCredentialResponse(call: CredentialCall) {
    const { c } = this;
    const { response } = call;
    await c.check('EnsureHttpStatusCodeIs200or201', () => cond.ensureHttpStatus(response, [200, 201]));
    await c.check('CheckForDateHeaderInResourceResponse', () => cond.checkForDateHeader(response));
    await this.validateCredentialBody(call);
  }

  /** VCIProfileBehavior.validateResourceEndpointResponse (plain, not encrypted). */
  async validateCredentialBody(call: CredentialCall) {
    const { c } = this;
    const { response } = call;
    await c.check('EnsureContentTypeJson', () => cond.ensureContentTypeJson(response));
    await c.check('VCIValidateNoUnknownKeysInCredentialResponse', () =>
      cond.validateNoUnknownKeysInCredentialResponse(response),
    );
    await c.check('VCICheckForDeferredCredentialResponse', () =>
      assert.equal(cond.checkForDeferredCredentialResponse(response), false, 'deferred'),
    );
    let credentials: string[] = [];
    await c.check('VCIExtractCredentialResponse', () => {
      credentials = cond.extractCredentialResponse(response);
    });
    for (const credential of credentials) {
      await verifySdJwtCredential(c, credential, {
        vct: this.server.configuration.vct,
        proofKeys: call.proofKeys,
        fetch: this.fetch,
      });
    }
  }

  /**
   * A further credential request with the same access token that the suite expects to succeed
   * (EnsureHttpStatusCodeIs200or201, then the response's validation). Coffer issues each
   * configuration of an offer once, so such a request that passed the token and DPoP checks is
   * refused with credential_request_denied: recorded as Coffer's choice.
   */
  async expectRepeatedCredentialSuccess(call: CredentialCall) {
    if (call.response.status === 200 || call.response.status === 201) {
      await this.c.check('EnsureHttpStatusCodeIs200or201', () =>
        cond.ensureHttpStatus(call.response, [200, 201]),
      );
      await this.validateCredentialBody(call);
      return;
    }
    await this.c.choice(
      'EnsureHttpStatusCodeIs200or201',
      'OpenID4VCI 1.0 §14.3 (Multiple Accesses to the Credential Endpoint)',
      "Coffer issues each configuration of an offer once; a further request with the same access token that passes the token and DPoP checks is answered 400 credential_request_denied (the issuer 'MAY also decide to no longer accept the Access Token')",
      () => {
        assert.equal(call.response.status, 400, call.response.text);
        assert.equal(call.response.body?.error, 'credential_request_denied');
      },
    );
  }

  /** The base requestProtectedResource: one credential request, checked. */
  async requestProtectedResource(client: SuiteClient, tokens: Tokens): Promise<CredentialCall> {
    const call = await this.callCredentialEndpoint(client, tokens);
    await this.validateCredentialResponse(call);
    return call;
  }
}
