import assert from 'node:assert/strict';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { decode as cborDecode } from 'cborg';
import { CompactEncrypt, compactDecrypt, decodeProtectedHeader, importJWK, type JWK } from 'jose';
import type { Conditions } from '../harness.ts';
import * as cond from '../suite-fapi2-client/conditions.ts';
import { verifySdJwtCredential } from '../suite-fapi2-client/credential-checks.ts';
import { type DpopVariation, isNqchar } from '../suite-fapi2-client/dpop.ts';
import { Fapi2Run, type Tokens } from '../suite-fapi2-client/fapi2-flow.ts';
import { type Exchange, exchange, mediaTypeOf } from '../suite-fapi2-client/http.ts';
import {
  newSuiteKey,
  randomString,
  type SuiteKey,
  seconds,
  signCompact,
} from '../suite-fapi2-client/keys.ts';
import { newClientId, SuiteClient } from '../suite-fapi2-client/suite-client.ts';
import { type IssuerWorld, OFFER_CLAIMS } from './worlds.ts';

// biome-ignore lint/suspicious/noExplicitAny: the suite reads arbitrary JSON
type Json = any;

/** The variant a VCI module runs in (the plan's VCIGrantType, VCICredentialEncryption…). */
export interface VciVariant {
  grant: 'authorization_code' | 'pre_authorized_code';
  encrypted: boolean;
}

/** How a module breaks one credential request (the suite's negative modules). */
export interface CredentialRequestVariation {
  /** VCIInjectRandomCNonce */
  randomNonce?: boolean;
  /** VCIInvalidateJwtProofSignature */
  invalidProofSignature?: boolean;
  /** VCIInvalidateKeyAttestationSignature */
  invalidKeyAttestationSignature?: boolean;
  /** VCIFailOnMissingProof: no proofs at all. */
  withoutProofs?: boolean;
  /** VCIInjectUnknownCredentialConfigurationId */
  configurationId?: string;
  /** VCIInjectUnknownCredentialIdentifier + VCIUseCredentialIdentifierInCredentialRequest */
  credentialIdentifier?: string;
  /** AddRandomFieldsToJsonObject on the request object (the happy flow). */
  randomFields?: boolean;
  /** VCIPrepareBatchProofKeys: this many proof keys. */
  proofKeyCount?: number;
  /** VCIAddCompressionToCredentialRequestEncryption */
  zip?: boolean;
  /** VCIUseUnsupportedEncryptionAlgorithm */
  unsupportedEncryptionAlg?: boolean;
  /** Further request headers (the additional-requests module). */
  headers?: Record<string, string>;
  dpopVariation?: DpopVariation;
}

export interface CredentialCall {
  response: Exchange;
  proofKeys: JWK[];
  /** The wallet's key for an encrypted answer. */
  responseKey?: ReturnType<typeof newEncryptionKey>;
  /** The decrypted answer (or the plain one). */
  effective?: Exchange;
  /** The x-fapi-interaction-id the request sent (the first client's). */
  interactionId?: string;
  /** Who asked, with which token (for the Deferred Credential Endpoint). */
  client?: SuiteClient;
  tokens?: Pick<Tokens, 'accessToken' | 'tokenType' | 'dpopKey'>;
}

const flip = (jws: string) => {
  const [h, p, s] = jws.split('.');
  const bytes = Buffer.from(s!, 'base64url');
  bytes[0] = bytes[0]! ^ 0x01;
  return `${h}.${p}.${bytes.toString('base64url')}`;
};

/** VCIGenerateCredentialEncryptionJwks: an ECDH-ES P-256 key of the wallet. */
function newEncryptionKey() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const publicJwk = {
    ...(publicKey.export({ format: 'jwk' }) as JWK),
    kid: randomString(8),
    use: 'enc',
    alg: 'ECDH-ES',
  };
  return { privateKey, publicJwk };
}

/**
 * One run of a VCI module of the issuer plans (AbstractVCIIssuerTestModule): the suite as the
 * wallet. The way to an access token is the FAPI client's (PAR, log-in, token with client
 * attestation and DPoP) for the authorization code grant, or a tenant's offer redeemed with the
 * pre-authorized code; then the nonce endpoint, the proofs, the credential request (encrypted in
 * the encrypted variant), the credentials' checks and the notification.
 */
export class VciRun {
  readonly fapi: Fapi2Run;
  readonly c: Conditions;
  readonly world: IssuerWorld;
  readonly variant: VciVariant;
  client1!: SuiteClient;
  client2: SuiteClient | undefined;
  metadata!: Json;
  /** The tester's part when the issuer defers: e.g. the tenant supplies the offer's claims. */
  onDeferred: (() => Promise<void>) | undefined;
  /** The offer the last pre-authorized grant came from. */
  offerId: string | undefined;

  constructor(c: Conditions, world: IssuerWorld, variant: VciVariant) {
    this.world = world;
    this.variant = variant;
    // The FAPI client names its own (HAIP) variant when made; this run names the VCI one.
    let muted = true;
    this.fapi = new Fapi2Run({ ...c, variant: (d) => (muted ? undefined : c.variant(d)) }, world);
    muted = false;
    this.c = this.fapi.c;
  }

  /** The variant of this run, for the report, once the configuration's format is known. */
  private reportVariant() {
    const { variant, world } = this;
    const format = this.fapi.server.configuration?.format === 'mso_mdoc' ? 'mso_mdoc' : 'sd_jwt_vc';
    const description = [
      format,
      variant.grant === 'authorization_code'
        ? 'authorization_code (wallet-initiated, scope)'
        : 'pre-authorized_code (issuer-initiated, tx_code)',
      world.haip ? 'client_attestation' : 'no client authentication (anonymous pre-authorized access)',
      'DPoP (ES256)',
      variant.encrypted ? 'credential request and response encrypted' : 'plain credential requests',
    ];
    this.c.variant(description.join(', '));
  }

  get fetch() {
    return this.fapi.fetch;
  }

  // ---------------------------------------------------------------- configuration

  async configure(options: { secondClient?: boolean } = {}): Promise<this> {
    const { c } = this;
    if (this.variant.grant === 'authorization_code') {
      await this.fapi.configure(options);
      this.client1 = this.fapi.client1;
      this.client2 = this.fapi.client2;
    } else {
      await this.fapi.fetchServerConfiguration();
      this.client1 = await this.configurePreAuthorizedClient(1);
      if (options.secondClient) this.client2 = await this.configurePreAuthorizedClient(2);
      await c.check('VCIResolveCredentialEndpointToUse', () =>
        assert.equal(typeof this.fapi.server.issuerMetadata.credential_endpoint, 'string'),
      );
    }
    this.metadata = this.fapi.server.issuerMetadata;
    this.reportVariant();
    await c.check('VCIDetermineCryptographicBinding', () =>
      assert.ok(this.fapi.server.configuration.cryptographic_binding_methods_supported, 'no binding'),
    );
    if (this.variant.encrypted) await this.checkEncryptionSupported();
    return this;
  }

  /** configureClient without PAR or client authentication: the pre-authorized code grant. */
  private async configurePreAuthorizedClient(n: 1 | 2): Promise<SuiteClient> {
    const { c } = this;
    const client = new SuiteClient(
      newClientId(n),
      `${this.world.suiteBaseUrl}/callback`,
      this.world.attester,
    );
    await c.check(n === 1 ? 'GetStaticClientConfiguration' : 'GetStaticClient2Configuration', () =>
      assert.ok(client.clientId),
    );
    const configurationId = this.world.configurationId;
    await c.check('VCIAddCredentialConfigurationIdToEnv', () => assert.ok(configurationId));
    let configuration: Json;
    await c.check('VCIResolveRequestedCredentialConfiguration', () => {
      configuration = this.fapi.server.issuerMetadata.credential_configurations_supported?.[configurationId];
      assert.ok(configuration, `no configuration ${configurationId}`);
    });
    this.fapi.server.configuration = configuration;
    await c.check('VCIResolveCredentialProofTypeToUse', () => {
      assert.ok(configuration.proof_types_supported?.jwt, 'no jwt proof type');
    });
    await c.check('VCIGenerateClientJwksIfMissing', () => assert.equal(client.proofKeys.length, 1));
    await c.check('VCIValidateClientJWKsPrivatePart', () => assert.ok(client.proofKeys[0]!.privateJwk.d));
    if (n === 1) this.fapi.client1 = client;
    else this.fapi.client2 = client;
    return client;
  }

  /** onConfigure of the encrypted variant (OpenID4VCI 1.0 §8.2, §12.2.4). */
  private async checkEncryptionSupported() {
    const { c, metadata } = this;
    await c.check('VCIGenerateCredentialEncryptionJwks', () => assert.ok(newEncryptionKey().publicJwk.x));
    await c.check('VCICheckCredentialResponseEncryptionSupported', () => {
      const enc = metadata.credential_response_encryption;
      assert.ok(enc, 'no credential_response_encryption');
      assert.ok(Array.isArray(enc.alg_values_supported) && enc.alg_values_supported.length > 0);
      assert.ok(Array.isArray(enc.enc_values_supported) && enc.enc_values_supported.length > 0);
      assert.equal(typeof enc.encryption_required, 'boolean');
    });
    await c.check('VCICheckCredentialRequestEncryptionSupported', () => {
      const enc = metadata.credential_request_encryption;
      assert.ok(enc, 'no credential_request_encryption');
      assert.ok(Array.isArray(enc.jwks?.keys) && enc.jwks.keys.length > 0);
      assert.ok(enc.jwks.keys.every((k: Json) => typeof k.kid === 'string' && k.kid));
      assert.ok(Array.isArray(enc.enc_values_supported) && enc.enc_values_supported.length > 0);
      assert.equal(typeof enc.encryption_required, 'boolean');
    });
    await c.check('VCIEnsureCredentialRequestEncryptionWhenResponseEncryptionRequired', () => {
      if (metadata.credential_response_encryption?.encryption_required)
        assert.ok(metadata.credential_request_encryption);
    });
    await c.check('VCIEnsureCredentialRequestEncryptionWhenResponseEncryptionOptional', () => {
      if (metadata.credential_response_encryption) assert.ok(metadata.credential_request_encryption);
    });
  }

  // ---------------------------------------------------------------- the way to an access token

  /**
   * performAuthorizationFlow (authorization code: the FAPI client's PAR, log-in and token
   * request) or the credential offer and the pre-authorized code. With `randomFields`, the
   * happy flow's unknown parameters in the authorization and token requests.
   */
  async obtainTokens(
    client: SuiteClient,
    options: { randomFields?: boolean; deferred?: boolean } = {},
  ): Promise<Tokens> {
    const { c, fapi } = this;
    if (this.variant.grant === 'authorization_code') {
      const request = await fapi.createAuthorizationRequest(client);
      if (options.randomFields)
        await c.check('AddRandomParameterToAuthorizationEndpointRequest', () => {
          request.params[`random_${randomString(4)}`] = randomString(8);
        });
      const { callback } = await fapi.authorize(request, { redirect: 'withoutDuplicates' });
      const code = await fapi.processCallback(callback, request);
      const params = await fapi.tokenRequestForCode(request, code);
      if (options.randomFields) await this.addRandomFields(params, 'token endpoint request body');
      return fapi.processTokenResponse(client, await fapi.callTokenEndpoint(client, params));
    }
    const params = await this.receiveOffer(undefined, { deferred: options.deferred ?? false });
    if (options.randomFields) await this.addRandomFields(params, 'token endpoint request body');
    const response = await fapi.callTokenEndpoint(client, params, {
      authenticateAs: this.world.haip ? client : null,
    });
    return fapi.processTokenResponse(client, response);
  }

  private async addRandomFields(target: Record<string, unknown>, _what: string) {
    await this.c.check('AddRandomFieldsToJsonObject', () => {
      target[`unknown_${randomString(4)}`] = randomString(8);
    });
  }

  /**
   * The tester makes an offer at Coffer (the tenant API) and hands its link to the suite's
   * credential_offer endpoint with the tx_code: processCredentialOffer, then
   * VCIExtractPreAuthorizedCodeAndTxCodeFromCredentialOffer and the token request.
   */
  async receiveOffer(
    configurationIds = [this.world.configurationId],
    options: { deferred?: boolean } = {},
  ): Promise<Record<string, string>> {
    const { c } = this;
    const claims = Object.fromEntries(configurationIds.map((id) => [id, OFFER_CLAIMS[id]]));
    // A deferred offer has no claims yet: the tenant supplies them once the wallet has asked.
    const made = await this.world.api('POST', '/v1/issuer/offers', {
      configuration_ids: configurationIds,
      ...(options.deferred ? {} : { claims }),
      tx_code: {},
    });
    assert.equal(made.status, 201, made.text);
    const offerId = made.body.data.id as string;
    this.offerId = offerId;
    this.onDeferred = options.deferred
      ? async () => {
          const put = await this.world.api('PUT', `/v1/issuer/offers/${offerId}/claims`, { claims });
          assert.ok(put.status >= 200 && put.status < 300, put.text);
        }
      : undefined;
    const link = new URL(made.body.data.offer_link as string);
    const query = Object.fromEntries(link.searchParams);
    await c.check('VCIWaitForCredentialOffer', () => assert.ok(link.href));
    await c.check('VCIValidateCredentialOfferRequestParams', () => {
      assert.ok(
        (query['credential_offer'] === undefined) !== (query['credential_offer_uri'] === undefined),
        'exactly one of credential_offer and credential_offer_uri',
      );
    });
    let offer: Json;
    await c.check('VCIFetchCredentialOfferFromCredentialOfferUri', async () => {
      const response = await exchange(this.fetch, query['credential_offer_uri']!);
      assert.equal(response.status, 200);
      assert.equal(mediaTypeOf(response.headers), 'application/json');
      offer = response.body;
    });
    await c.check('VCIValidateCredentialOffer', () => {
      assert.equal(offer.credential_issuer, this.world.issuerId);
      assert.ok(
        Array.isArray(offer.credential_configuration_ids) && offer.credential_configuration_ids.length,
      );
      for (const id of offer.credential_configuration_ids)
        assert.ok(this.metadata.credential_configurations_supported[id], `${id} is not in the metadata`);
      assert.ok(offer.grants && typeof offer.grants === 'object');
    });
    await c.check('CheckForUnexpectedParametersInCredentialOffer', () =>
      assert.deepEqual(
        Object.keys(offer).filter(
          (k) => !['credential_issuer', 'credential_configuration_ids', 'grants'].includes(k),
        ),
        [],
      ),
    );
    await c.check('VCIUseStaticTxCodeFromConfig', () => assert.ok(made.body.data.tx_code));
    const params: Record<string, string> = {};
    await c.check('VCIExtractPreAuthorizedCodeAndTxCodeFromCredentialOffer', () => {
      const grant = offer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code'];
      assert.ok(grant?.['pre-authorized_code'], 'no pre-authorized_code');
      assert.equal(grant.tx_code?.length, String(made.body.data.tx_code).length);
      params['pre-authorized_code'] = grant['pre-authorized_code'];
      params['tx_code'] = made.body.data.tx_code;
    });
    await c.check('VCICreateTokenEndpointRequestForPreAuthorizedCodeGrant', () => {
      params['grant_type'] = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
    });
    return params;
  }

  // ---------------------------------------------------------------- the credential request

  /**
   * requestProtectedResource: the FAPI headers (first client), the nonce endpoint and its checks,
   * the key attestation and proofs, the request object (encrypted in that variant), and the call
   * with DPoP, made afresh on use_dpop_nonce.
   */
  async requestCredential(
    client: SuiteClient,
    tokens: Pick<Tokens, 'accessToken' | 'tokenType' | 'dpopKey'>,
    variation: CredentialRequestVariation = {},
  ): Promise<CredentialCall> {
    const { c, fapi } = this;
    const url = fapi.server.credentialEndpoint;
    const first = client === this.client1;
    const proofKeys: SuiteKey[] =
      variation.proofKeyCount !== undefined
        ? Array.from({ length: variation.proofKeyCount }, () => newSuiteKey())
        : client.proofKeys;
    let response!: Exchange;
    let responseKey: ReturnType<typeof newEncryptionKey> | undefined;
    const interactionId = randomUUID();
    for (let attempt = 0; attempt < 2; attempt++) {
      const headers: Record<string, string> = {};
      await c.check('CreateEmptyResourceEndpointRequestHeaders', () => assert.ok(headers));
      if (first) {
        await c.check('AddFAPIAuthDateToResourceEndpointRequest', () => {
          headers['x-fapi-auth-date'] = new Date().toUTCString();
        });
        await c.check('AddIpV4FapiCustomerIpAddressToResourceEndpointRequest', () => {
          headers['x-fapi-customer-ip-address'] = '198.51.100.119';
        });
        await c.check('CreateRandomFAPIInteractionId', () => assert.ok(randomUUID()));
        await c.check('AddFAPIInteractionIdToResourceEndpointRequest', () => {
          headers['x-fapi-interaction-id'] = interactionId;
        });
      }
      Object.assign(headers, variation.headers);
      let cNonce = await fapi.fetchCNonce();
      if (variation.randomNonce)
        await c.check('VCIInjectRandomCNonce', () => {
          cNonce = randomString(24);
        });
      const request: Record<string, unknown> = {};
      if (!variation.withoutProofs) {
        const proofs = await this.proofs(client, proofKeys, cNonce, variation);
        request['proofs'] = { jwt: proofs };
      }
      await c.check('VCICreateCredentialRequest', () => {
        if (variation.credentialIdentifier === undefined)
          request['credential_configuration_id'] = variation.configurationId ?? this.world.configurationId;
      });
      if (variation.configurationId !== undefined) {
        await c.check('VCIInjectUnknownCredentialConfigurationId', () =>
          assert.ok(!this.metadata.credential_configurations_supported[variation.configurationId!]),
        );
        await c.check('VCIUseCredentialConfigurationIdInCredentialRequest', () =>
          assert.equal(request['credential_configuration_id'], variation.configurationId),
        );
      }
      if (variation.credentialIdentifier !== undefined) {
        await c.check('VCIInjectUnknownCredentialIdentifier', () =>
          assert.match(variation.credentialIdentifier!, /^unknown:/),
        );
        await c.check('VCIUseCredentialIdentifierInCredentialRequest', () => {
          request['credential_identifier'] = variation.credentialIdentifier;
        });
      }
      if (this.variant.encrypted) {
        responseKey = newEncryptionKey();
        const encryption: Record<string, unknown> = {};
        await c.check('VCIAddCredentialResponseEncryptionToRequest', () => {
          encryption['enc'] = this.metadata.credential_response_encryption.enc_values_supported[0];
          encryption['jwk'] = responseKey!.publicJwk;
          request['credential_response_encryption'] = encryption;
        });
        if (variation.zip)
          await c.check('VCIAddCompressionToCredentialRequestEncryption', () => {
            encryption['zip'] = 'DEF';
          });
        if (variation.unsupportedEncryptionAlg)
          await c.check('VCIUseUnsupportedEncryptionAlgorithm', () => {
            encryption['jwk'] = { ...responseKey!.publicJwk, alg: 'UNSUPPORTED_ALG' };
          });
      }
      if (variation.randomFields) await this.addRandomFields(request, 'credential request');
      let body = '';
      await c.check('SerializeVCICredentialRequestObject', () => {
        body = JSON.stringify(request);
      });
      headers['content-type'] = 'application/json';
      if (this.variant.encrypted) {
        await c.check('VCIEncryptCredentialRequest', async () => {
          body = await this.encryptRequest(body);
          headers['content-type'] = 'application/jwt';
        });
      }
      headers['authorization'] = `${tokens.tokenType} ${tokens.accessToken}`;
      headers['dpop'] = await fapi.dpopProofFor(
        client,
        'RESOURCE',
        url,
        variation.dpopVariation,
        tokens.dpopKey,
        tokens.accessToken,
      );
      response = await exchange(this.fetch, url, { method: 'POST', headers, body });
      const challenge = response.headers.get('www-authenticate') ?? '';
      if (response.status !== 401 || !/error="use_dpop_nonce"/.test(challenge)) break;
      client.rsNonce = response.headers.get('dpop-nonce') ?? undefined;
    }
    await c.check('CallProtectedResourceAllowingDpopNonceError', () => assert.ok(response.status > 0));
    return {
      response,
      proofKeys: proofKeys.map((k) => k.publicJwk),
      ...(responseKey ? { responseKey } : {}),
      ...(first ? { interactionId } : {}),
      client,
      tokens,
    };
  }

  /** GenerateVCIKeyAttestationAndProofSteps: the key attestation when asked for, then one proof per key. */
  private async proofs(
    client: SuiteClient,
    keys: SuiteKey[],
    cNonce: string,
    variation: CredentialRequestVariation,
  ): Promise<string[]> {
    const { c } = this;
    const configuration = this.fapi.server.configuration;
    let keyAttestation: string | undefined;
    await c.check('VCIGenerateKeyAttestationIfNecessary', async () => {
      const required = configuration.proof_types_supported?.jwt?.key_attestations_required;
      if (required === undefined) return;
      keyAttestation = await signCompact(
        { alg: 'ES256', typ: 'key-attestation+jwt', x5c: this.world.attester.x5c },
        {
          iat: seconds(),
          exp: seconds() + 300,
          attested_keys: keys.map((k) => ({ ...k.publicJwk })),
          ...(required.key_storage ? { key_storage: required.key_storage } : {}),
          ...(required.user_authentication ? { user_authentication: required.user_authentication } : {}),
          nonce: cNonce,
        },
        this.world.attester.privateKey,
      );
    });
    if (variation.invalidKeyAttestationSignature)
      await c.check('VCIInvalidateKeyAttestationSignature', () => {
        assert.ok(keyAttestation, 'no key attestation to break');
        keyAttestation = flip(keyAttestation);
      });
    const proofs: string[] = [];
    await c.check('VCIGenerateJwtProof', async () => {
      for (const key of keys) {
        const { kty, crv, x, y } = key.publicJwk;
        proofs.push(
          await signCompact(
            {
              alg: 'ES256',
              typ: 'openid4vci-proof+jwt',
              jwk: { kty, crv, x, y },
              ...(keyAttestation ? { key_attestation: keyAttestation } : {}),
            },
            {
              ...(this.variant.grant === 'authorization_code' ? { iss: client.clientId } : {}),
              aud: this.fapi.server.credentialIssuer,
              iat: seconds(),
              nonce: cNonce,
            },
            key.privateKey,
          ),
        );
      }
    });
    if (variation.invalidProofSignature)
      await c.check('VCIInvalidateJwtProofSignature', () => {
        for (const [i, proof] of proofs.entries()) proofs[i] = flip(proof);
      });
    return proofs;
  }

  // ---------------------------------------------------------------- the credential response

  /**
   * verifyCredentialIssuerCredentialResponse and verifyEffectiveCredentialResponse: 200 or 202,
   * the JWE decrypted in the encrypted variant, the body's members, each credential verified.
   */
  async verifyCredentialResponse(call: CredentialCall): Promise<string[]> {
    const { c } = this;
    const { response } = call;
    await c.check('EnsureHttpStatusCodeIsAnyOf', () => cond.ensureHttpStatus(response, [200, 202]));
    let effective = response;
    if (this.variant.encrypted) {
      await c.check('EnsureContentTypeApplicationJwt', () =>
        assert.equal(mediaTypeOf(response.headers), 'application/jwt'),
      );
      await c.check('VCIEnsureCredentialResponseIsEncryptedJwe', () => {
        assert.equal(response.text.split('.').length, 5, 'not a compact JWE');
        const header = decodeProtectedHeader(response.text);
        assert.ok(header.enc && header.alg);
      });
      await c.check('VCIDecryptCredentialResponse', async () => {
        const { plaintext } = await compactDecrypt(response.text, call.responseKey!.privateKey);
        const text = new TextDecoder().decode(plaintext);
        effective = { ...response, text, body: JSON.parse(text) };
      });
    } else {
      await c.check('EnsureContentTypeJson', () => cond.ensureContentTypeJson(response));
    }
    call.effective = effective;
    await c.check('VCIValidateNoUnknownKeysInCredentialResponse', () =>
      cond.validateNoUnknownKeysInCredentialResponse(effective),
    );
    let deferred = false;
    await c.check('VCICheckForDeferredCredentialResponse', () => {
      deferred = cond.checkForDeferredCredentialResponse(effective);
    });
    let last = response;
    if (deferred) {
      await c.check('EnsureHttpStatusCode', () => cond.ensureHttpStatus(response, [202]));
      await c.check('VCIEnsureIntervalPresentInDeferredResponse', () =>
        assert.ok(Number.isInteger(effective.body.interval) && effective.body.interval > 0, 'no interval'),
      );
      await this.onDeferred?.();
      ({ response: last, effective } = await this.callDeferredCredentialEndpoint(
        call,
        effective.body.transaction_id,
      ));
      call.effective = effective;
    } else {
      await c.check('EnsureHttpStatusCodeIs200', () => cond.ensureHttpStatus(response, [200]));
    }
    let credentials: string[] = [];
    await c.check('VCIExtractCredentialResponse', () => {
      credentials = cond.extractCredentialResponse(effective);
    });
    const configuration = this.fapi.server.configuration;
    for (const credential of credentials) {
      if (configuration.format === 'mso_mdoc') await this.verifyMdoc(credential, configuration);
      else
        await verifySdJwtCredential(c, credential, {
          vct: configuration.vct,
          proofKeys: call.proofKeys,
          fetch: this.fetch,
        });
    }
    await c.check('CheckForDateHeaderInResourceResponse', () => cond.checkForDateHeader(last));
    // Only when the issuer echoes x-fapi-interaction-id (FAPI2-IMP-2.1.1; skipped otherwise).
    const echoed = last.headers.get('x-fapi-interaction-id');
    if (echoed !== null) {
      await c.check('CheckForFAPIInteractionIdInResourceResponse', () =>
        assert.match(echoed, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i),
      );
      if (call.interactionId !== undefined)
        await c.check('EnsureMatchingFAPIInteractionId', () => assert.equal(echoed, call.interactionId));
    }
    return credentials;
  }

  /**
   * callDeferredCredentialEndpoint (§9): the transaction_id, with credential_response_encryption
   * and the request encrypted in the encrypted variant, DPoP with the access token; 200 or 202,
   * a JWE when encrypted and issued, JSON otherwise.
   */
  private async callDeferredCredentialEndpoint(
    call: CredentialCall,
    transactionId: string,
  ): Promise<{ response: Exchange; effective: Exchange }> {
    const { c, fapi } = this;
    const client = call.client!;
    const tokens = call.tokens!;
    let url = '';
    await c.check('VCIResolveDeferredCredentialEndpointToUse', () => {
      url = this.metadata.deferred_credential_endpoint;
      assert.ok(url?.startsWith('https://'), 'no https deferred_credential_endpoint');
    });
    const request: Record<string, unknown> = {};
    await c.check('VCICreateDeferredCredentialRequest', () => {
      assert.equal(typeof transactionId, 'string');
      request['transaction_id'] = transactionId;
    });
    let responseKey: ReturnType<typeof newEncryptionKey> | undefined;
    let body = '';
    let contentType = 'application/json';
    if (this.variant.encrypted) {
      responseKey = newEncryptionKey();
      await c.check('VCIAddCredentialResponseEncryptionToRequest', () => {
        request['credential_response_encryption'] = {
          enc: this.metadata.credential_response_encryption.enc_values_supported[0],
          jwk: responseKey!.publicJwk,
        };
      });
    }
    body = JSON.stringify(request);
    if (this.variant.encrypted) {
      await c.check('VCIEncryptCredentialRequest', async () => {
        body = await this.encryptRequest(body);
        contentType = 'application/jwt';
      });
    }
    // As the suite: CreateRandomFAPIInteractionId replaces the id the credential request sent, and
    // EnsureMatchingFAPIInteractionId then expects this one back; a DPoP nonce retry keeps it.
    let interactionId = '';
    await c.check('CreateRandomFAPIInteractionId', () => {
      interactionId = randomUUID();
    });
    if (call.interactionId !== undefined) call.interactionId = interactionId;
    let response!: Exchange;
    for (let attempt = 0; attempt < 2; attempt++) {
      const headers: Record<string, string> = {
        'content-type': contentType,
        'x-fapi-interaction-id': interactionId,
        authorization: `${tokens.tokenType} ${tokens.accessToken}`,
        dpop: await fapi.dpopProofFor(client, 'RESOURCE', url, {}, tokens.dpopKey, tokens.accessToken),
      };
      response = await exchange(this.fetch, url, { method: 'POST', headers, body });
      const challenge = response.headers.get('www-authenticate') ?? '';
      if (response.status !== 401 || !/error="use_dpop_nonce"/.test(challenge)) break;
      client.rsNonce = response.headers.get('dpop-nonce') ?? undefined;
    }
    await c.check('EnsureHttpStatusCodeIsAnyOf', () => cond.ensureHttpStatus(response, [200, 202]));
    let effective = response;
    if (this.variant.encrypted && response.status === 200) {
      await c.check('EnsureContentTypeApplicationJwt', () =>
        assert.equal(mediaTypeOf(response.headers), 'application/jwt'),
      );
      await c.check('VCIEnsureCredentialResponseIsEncryptedJwe', () =>
        assert.equal(response.text.split('.').length, 5, 'not a compact JWE'),
      );
      await c.check('VCIDecryptCredentialResponse', async () => {
        const { plaintext } = await compactDecrypt(response.text, responseKey!.privateKey);
        const text = new TextDecoder().decode(plaintext);
        effective = { ...response, text, body: JSON.parse(text) };
      });
    } else {
      await c.check('EnsureContentTypeJson', () => cond.ensureContentTypeJson(response));
    }
    return { response, effective };
  }

  /** VCIEncryptCredentialRequest: a compact JWE to the issuer's request encryption key. */
  private async encryptRequest(body: string): Promise<string> {
    const meta = this.metadata.credential_request_encryption;
    const key = (meta.jwks.keys as Json[]).find(
      (k) => (k.use ?? 'enc') === 'enc' && /^ECDH-ES|^RSA/.test(k.alg),
    );
    assert.ok(key?.kid, 'no usable request encryption key with a kid');
    return new CompactEncrypt(new TextEncoder().encode(body))
      .setProtectedHeader({ alg: key.alg, enc: meta.enc_values_supported[0], kid: key.kid, cty: 'json' })
      .encrypt(await importPublic(key));
  }

  /** VCIProfileBehavior's mdoc branch, as far as this client reads an IssuerSigned structure. */
  private async verifyMdoc(credential: string, configuration: Json) {
    const { c } = this;
    let issuerSigned: Json;
    await c.check('ParseMdocCredentialFromVCIIssuance', () => {
      issuerSigned = cborDecode(Buffer.from(credential, 'base64url'), { useMaps: true, tags: tagged() });
      assert.ok(issuerSigned instanceof Map, 'IssuerSigned is not a map');
    });
    await c.check('ValidateMdocIssuerSignedSignature', () => {
      const auth = issuerSigned.get('issuerAuth');
      assert.ok(Array.isArray(auth) && auth.length === 4, 'issuerAuth is not a COSE_Sign1');
    });
    await c.check('VCIEnsureMdocDocTypeMatchesCredentialConfiguration', () => {
      const auth = issuerSigned.get('issuerAuth');
      const mso = cborDecode(cborDecode(auth[2], { useMaps: true, tags: tagged() }) as Uint8Array, {
        useMaps: true,
        tags: tagged(),
      }) as Map<string, unknown>;
      assert.equal(mso.get('docType'), configuration.doctype);
      assert.ok(issuerSigned.get('nameSpaces')?.has(configuration.doctype));
    });
  }

  /** EnsureHttpStatusCodeIs400, the error's members, never a JWE, the expected error code (§8.3.1). */
  async verifyCredentialErrorResponse(call: CredentialCall, error: string) {
    const { c } = this;
    const { response } = call;
    await c.check('EnsureHttpStatusCodeIs400', () => cond.ensureHttpStatus(response, [400]));
    await c.check('VCIValidateNoUnknownKeysInCredentialErrorResponse', () =>
      assert.deepEqual(
        Object.keys(response.body ?? {}).filter(
          (k) => !['error', 'error_description', 'error_uri'].includes(k),
        ),
        [],
      ),
    );
    await c.check('VCIEnsureCredentialResponseIsNotAnEncryptedJwe', () => {
      assert.notEqual(mediaTypeOf(response.headers), 'application/jwt');
      assert.ok(response.body, 'the error is not JSON');
    });
    await c.check('VCIValidateCredentialErrorResponse', () =>
      assert.equal(response.body?.error, error, response.text),
    );
  }

  /** sendNotificationIfSupported: credential_accepted for the notification_id, with DPoP. */
  async sendNotification(
    client: SuiteClient,
    tokens: Pick<Tokens, 'accessToken' | 'tokenType' | 'dpopKey'>,
    call: CredentialCall,
    options: { randomFields?: boolean } = {},
  ) {
    const { c, fapi } = this;
    let notificationId: string | undefined;
    await c.check('VCIExtractNotificationIdFromCredentialResponse', () => {
      notificationId = call.effective?.body?.notification_id;
      if (notificationId !== undefined) assert.equal(typeof notificationId, 'string');
    });
    if (notificationId === undefined) return;
    let url = '';
    await c.check('VCIResolveNotificationEndpointToUse', () => {
      url = this.metadata.notification_endpoint;
      assert.ok(url?.startsWith('https://'), 'no https notification_endpoint');
    });
    const body: Record<string, unknown> = {};
    await c.check('VCICreateNotificationRequest', () => {
      Object.assign(body, { notification_id: notificationId, event: 'credential_accepted' });
    });
    if (options.randomFields) await this.addRandomFields(body, 'notification request body');
    let response!: Exchange;
    for (let attempt = 0; attempt < 2; attempt++) {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'x-fapi-interaction-id': randomUUID(),
        authorization: `${tokens.tokenType} ${tokens.accessToken}`,
        dpop: await fapi.dpopProofFor(client, 'RESOURCE', url, {}, tokens.dpopKey, tokens.accessToken),
      };
      response = await exchange(this.fetch, url, { method: 'POST', headers, body: JSON.stringify(body) });
      const challenge = response.headers.get('www-authenticate') ?? '';
      if (response.status !== 401 || !/error="use_dpop_nonce"/.test(challenge)) break;
      client.rsNonce = response.headers.get('dpop-nonce') ?? undefined;
      assert.ok(client.rsNonce && isNqchar(client.rsNonce));
    }
    await c.check('EnsureHttpStatusCodeIs2xx', () =>
      assert.ok(response.status >= 200 && response.status < 300, `HTTP ${response.status} ${response.text}`),
    );
  }

  /** The whole base flow: tokens, one credential request verified, the notification. */
  async happyFlow(
    client: SuiteClient,
    options: { randomFields?: boolean; notify?: boolean; deferred?: boolean } = {},
  ) {
    const tokens = await this.obtainTokens(client, options);
    const call = await this.requestCredential(client, tokens, {
      randomFields: options.randomFields ?? false,
    });
    const credentials = await this.verifyCredentialResponse(call);
    if (options.notify ?? true) await this.sendNotification(client, tokens, call, options);
    return { tokens, call, credentials };
  }
}

/** CBOR tag 24 (encoded CBOR data item) keeps its bytes; the MSO is read from them. */
const tagged = () => {
  const tags: ((inner: unknown) => unknown)[] = [];
  tags[24] = (inner) => inner;
  tags[0] = (inner) => inner;
  tags[1004] = (inner) => inner;
  return tags;
};

function importPublic(jwk: Json) {
  return importJWK({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, n: jwk.n, e: jwk.e }, jwk.alg);
}
