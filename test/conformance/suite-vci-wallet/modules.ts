import assert from 'node:assert/strict';
import { createHash, X509Certificate } from 'node:crypto';
import { decodeSdJwt, getClaims } from '@sd-jwt/decode';
import { compactVerify, importJWK, type JWK } from 'jose';
import type { Conditions, ModuleImplementation } from '../harness.ts';
import * as cond from '../suite-fapi2-client/conditions.ts';
import {
  checkScopesSyntax,
  unexpectedMembers,
  validateMetadataTypes,
} from '../suite-fapi2-client/discovery-checks.ts';
import { type Exchange, exchange, mediaTypeOf } from '../suite-fapi2-client/http.ts';
import {
  decodeJwt,
  newSuiteKey,
  randomString,
  seconds,
  signCompact,
  thumbprintOf,
} from '../suite-fapi2-client/keys.ts';
import { reportedOnce } from '../suite-fapi2-client/once.ts';
import type { SuiteClient } from '../suite-fapi2-client/suite-client.ts';
import { tlsIsTheDeployments } from '../suite-fapi2-client/tls.ts';
import { type CredentialCall, VciRun, type VciVariant } from './vci-run.ts';
import type { IssuerWorld } from './worlds.ts';

// biome-ignore lint/suspicious/noExplicitAny: the suite reads arbitrary JSON
type Json = any;

/** Which variants the plan runs a module in, and the configurations it asks for. */
export interface PlanShape {
  grant: VciVariant['grant'];
  /** The configuration of the batch module (one with batch_size ≥ 2). */
  batchConfigurationId: string;
  /** The mso_mdoc configuration, when the plan runs the happy flow with credential_format mdoc. */
  mdocConfigurationId?: string;
}

const plain = (shape: PlanShape): VciVariant => ({ grant: shape.grant, encrypted: false });
const encrypted = (shape: PlanShape): VciVariant => ({ grant: shape.grant, encrypted: true });

const hasher = async (data: string | ArrayBuffer) =>
  new Uint8Array(
    createHash('sha256')
      .update(typeof data === 'string' ? data : Buffer.from(data))
      .digest(),
  );

const flip = (jws: string) => {
  const [h, p, s] = jws.split('.');
  const bytes = Buffer.from(s!, 'base64url');
  bytes[0] = bytes[0]! ^ 0x01;
  return `${h}.${p}.${bytes.toString('base64url')}`;
};

// ---------------------------------------------------------------- metadata

const CREDENTIAL_ISSUER_MEMBERS = [
  'credential_issuer',
  'authorization_servers',
  'credential_endpoint',
  'nonce_endpoint',
  'deferred_credential_endpoint',
  'notification_endpoint',
  'credential_request_encryption',
  'credential_response_encryption',
  'batch_credential_issuance',
  'signed_metadata',
  'display',
  'credential_configurations_supported',
];

/**
 * VCIIssuerMetadataTest.start (and VCIIssuerMetadataSignedTest's, with Accept: application/jwt):
 * the issuer's metadata, as JSON or as a signed JWT (§12.2.2, §12.2.3), and its authorization
 * server's.
 */
async function metadataTest(c: Conditions, world: IssuerWorld, signed: boolean) {
  const url = new URL(world.issuerId);
  const metadataUrl = `${url.origin}/.well-known/openid-credential-issuer${url.pathname}`;
  if (signed) await c.check('VCIRequestSignedCredentialIssuerMetadata', () => assert.ok(metadataUrl));
  let response!: Exchange;
  await c.check('VCIGetDynamicCredentialIssuerMetadata', async () => {
    response = await exchange(world.front.fetch, metadataUrl, {
      headers: { accept: signed ? 'application/jwt' : 'application/json' },
    });
    assert.equal(response.status, 200);
  });
  let metadata: Json;
  if (signed) {
    await c.check('EnsureContentTypeApplicationJwt', () =>
      assert.equal(mediaTypeOf(response.headers), 'application/jwt'),
    );
    await c.check('VCIDecodeSignedCredentialIssuerMetadata', async () => {
      const { header, payload } = decodeJwt(response.text);
      assert.equal(header['typ'], 'openidvci-issuer-metadata+jwt');
      const x5c = header['x5c'] as string[] | undefined;
      assert.ok(header['jwk'] !== undefined || (Array.isArray(x5c) && x5c.length > 0), 'neither jwk nor x5c');
      const key = header['jwk']
        ? await importJWK(header['jwk'] as JWK, header['alg'] as string)
        : new X509Certificate(Buffer.from(x5c![0]!, 'base64')).publicKey;
      await compactVerify(response.text, key);
      assert.equal(payload['sub'], world.issuerId);
      assert.ok(Number.isInteger(payload['iat']) && (payload['iat'] as number) <= seconds() + 300);
      if (payload['exp'] !== undefined)
        assert.ok(Number.isInteger(payload['exp']) && (payload['exp'] as number) > seconds());
      metadata = Object.fromEntries(
        Object.entries(payload).filter(([k]) => !['sub', 'iat', 'exp', 'iss', 'nbf', 'jti'].includes(k)),
      );
    });
  } else {
    await c.check('EnsureContentTypeJson', () => cond.ensureContentTypeJson(response));
    await c.check('VCIParseCredentialIssuerMetadata', () => {
      metadata = JSON.parse(response.text);
      assert.ok(metadata && typeof metadata === 'object' && !Array.isArray(metadata));
    });
  }
  await c.check('VCIExtractTlsInfoFromCredentialIssuer', () => assert.equal(url.protocol, 'https:'));
  await checkIssuerMetadata(c, metadata, world);
  const servers: string[] = metadata.authorization_servers ?? [world.issuerId];
  const asMetadata: Json[] = [];
  await c.check('VCIFetchOAuthorizationServerMetadata', async () => {
    for (const as of servers) {
      const u = new URL(as);
      const answer = await exchange(
        world.front.fetch,
        `${u.origin}/.well-known/oauth-authorization-server${u.pathname === '/' ? '' : u.pathname}`,
      );
      await c.check('EnsureHttpStatusCodeIs200', () => cond.ensureHttpStatus(answer, [200]));
      await c.check('EnsureContentTypeJson', () => cond.ensureContentTypeJson(answer));
      asMetadata.push(answer.body);
    }
  });
  for (const [i, as] of asMetadata.entries()) {
    await c.check('ValidateServerMetadataAgainstSchema', () => validateMetadataTypes(as));
    await c.check('CheckForUnexpectedParametersInServerMetadata', () =>
      assert.deepEqual(unexpectedMembers(as), []),
    );
    await c.check('CheckDiscEndpointAllEndpointsAreHttps', () => {
      for (const [member, value] of Object.entries(as))
        if (member.endsWith('_endpoint') || member === 'jwks_uri')
          assert.ok(typeof value === 'string' && value.startsWith('https://'), `${member} is not https`);
    });
    await c.check(
      'VCIEnsureAuthorizationDetailsTypesSupportedContainOpenIdCredentialIfScopeIsMissing',
      () => {
        const withoutScope = Object.values(metadata.credential_configurations_supported).some(
          (configuration: Json) => typeof configuration.scope !== 'string',
        );
        if (withoutScope) assert.ok(as.authorization_details_types_supported?.includes('openid_credential'));
      },
    );
    await c.check('CheckDiscEndpointScopesSupportedSyntax', () => checkScopesSyntax(as));
    await c.check('CheckDiscEndpointLocalesSyntax', () => {
      for (const tag of [...(as.ui_locales_supported ?? []), ...(as.claims_locales_supported ?? [])])
        assert.match(tag, /^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$/);
    });
    await c.check('CheckDiscEndpointLocalesCanonicalCasing', () => assert.ok(true));
    await c.check('VCIEnsureAuthorizationServerIssuerMatchesExpected', () =>
      assert.equal(as.issuer, servers[i]),
    );
    let jwks: Json;
    await c.check('FetchServerKeys', async () => {
      if (as.jwks_uri === undefined) return;
      const answer = await exchange(world.front.fetch, as.jwks_uri);
      assert.equal(answer.status, 200);
      jwks = answer.body;
    });
    await c.check('ValidateServerJWKs', () => {
      if (jwks === undefined) return;
      assert.ok(Array.isArray(jwks.keys) && jwks.keys.length > 0);
      for (const key of jwks.keys) assert.ok(typeof key.kty === 'string');
    });
    await c.check('EnsureServerJwksDoesNotContainPrivateOrSymmetricKeys', () => {
      if (jwks === undefined) return;
      for (const key of jwks.keys) {
        assert.notEqual(key.kty, 'oct');
        for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) assert.equal(key[member], undefined);
      }
    });
    if (world.haip) {
      await c.check('EnsureServerConfigurationSupportsAttestJwtClientAuth', () =>
        assert.ok(as.token_endpoint_auth_methods_supported?.includes('attest_jwt_client_auth')),
      );
      await c.check('CheckDiscEndpointClientAttestationSigningAlgValuesSupported', () => {
        for (const member of [
          'client_attestation_signing_alg_values_supported',
          'client_attestation_pop_signing_alg_values_supported',
        ]) {
          const algs = as[member];
          assert.ok(Array.isArray(algs) && algs.length > 0, member);
          assert.ok(!algs.includes('none'), `${member} has none`);
        }
      });
    }
  }
}

const isHttps = (value: unknown) =>
  typeof value === 'string' && value.startsWith('https://') && URL.canParse(value);
const JWS_ALGS = [
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
  'PS256',
  'PS384',
  'PS512',
  'RS256',
  'RS384',
  'RS512',
];

/** VCIIssuerMetadataTest.checkIssuerMetadata (OpenID4VCI 1.0 §12.2, Appendix A). */
async function checkIssuerMetadata(c: Conditions, metadata: Json, world: IssuerWorld) {
  const configurations = Object.entries(metadata.credential_configurations_supported ?? {}) as [
    string,
    Json,
  ][];
  await c.check('VCICheckRequiredMetadataFields', () => {
    assert.equal(typeof metadata.credential_issuer, 'string');
    assert.equal(typeof metadata.credential_endpoint, 'string');
    assert.ok(configurations.length > 0, 'no credential_configurations_supported');
  });
  await c.check('VCIEnsureHttpsUrlsMetadata', () => {
    for (const member of [
      'credential_issuer',
      'credential_endpoint',
      'nonce_endpoint',
      'deferred_credential_endpoint',
      'notification_endpoint',
    ])
      if (metadata[member] !== undefined) assert.ok(isHttps(metadata[member]), `${member} is not https`);
  });
  await c.check('VCIValidateAuthorizationServersAreHttps', () => {
    for (const as of metadata.authorization_servers ?? []) assert.ok(isHttps(as), `${as} is not https`);
  });
  await c.check('VCIValidateCredentialIssuerUri', () => {
    assert.equal(metadata.credential_issuer, world.issuerId);
    const u = new URL(metadata.credential_issuer);
    assert.equal(u.search, '');
    assert.equal(u.hash, '');
  });
  await c.check('VCICredentialIssuerMetadataValidation', () => {
    for (const [id, configuration] of configurations) {
      assert.equal(typeof configuration.format, 'string', `${id} has no format`);
      if (configuration.proof_types_supported !== undefined)
        assert.ok(
          configuration.cryptographic_binding_methods_supported,
          `${id}: proofs without binding methods`,
        );
    }
  });
  await c.check('CheckForUnexpectedParametersInCredentialIssuerMetadata', () =>
    assert.deepEqual(
      Object.keys(metadata).filter((k) => !CREDENTIAL_ISSUER_MEMBERS.includes(k)),
      [],
    ),
  );
  await c.check('VCIValidateCredentialSigningAlgValuesSupported', () => {
    for (const [id, configuration] of configurations) {
      const algs = configuration.credential_signing_alg_values_supported;
      if (algs === undefined) continue;
      assert.ok(Array.isArray(algs) && algs.length > 0, id);
      if (configuration.format === 'mso_mdoc')
        assert.ok(
          algs.every((a: unknown) => Number.isInteger(a)),
          `${id}: COSE algorithms`,
        );
      else
        assert.ok(
          algs.every((a: unknown) => typeof a === 'string' && a !== 'none'),
          id,
        );
    }
  });
  await c.check('VCIValidateProofSigningAlgValuesSupported', () => {
    for (const [id, configuration] of configurations) {
      const jwt = configuration.proof_types_supported?.jwt;
      if (jwt === undefined) continue;
      assert.ok(
        Array.isArray(jwt.proof_signing_alg_values_supported) &&
          jwt.proof_signing_alg_values_supported.length > 0,
      );
      assert.ok(
        jwt.proof_signing_alg_values_supported.every((a: string) => JWS_ALGS.includes(a)),
        id,
      );
    }
  });
  await c.check('VCIValidateProofTypesCoPresence', () => {
    for (const [id, configuration] of configurations)
      assert.equal(
        configuration.proof_types_supported === undefined,
        configuration.cryptographic_binding_methods_supported === undefined,
        `${id}: proof_types_supported and cryptographic_binding_methods_supported go together`,
      );
  });
  const displays = () => [
    ...(metadata.display ?? []),
    ...configurations.flatMap(
      ([, configuration]) => configuration.credential_metadata?.display ?? configuration.display ?? [],
    ),
  ];
  await c.check('VCIValidateDisplayLocales', () => {
    for (const display of displays())
      if (display.locale !== undefined) assert.match(display.locale, /^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{1,8})*$/);
  });
  await c.check('VCIWarnOnNonCanonicalDisplayLocales', () => {
    for (const display of displays())
      if (display.locale !== undefined)
        assert.match(display.locale, /^[a-z]{2,3}(-[A-Z]{2}|-[A-Z][a-z]{3})*$/);
  });
  await c.check('VCIValidateCredentialConfigurationScopeSyntax', () => {
    for (const [, configuration] of configurations)
      if (configuration.scope !== undefined) assert.match(configuration.scope, /^[\x21\x23-\x5B\x5D-\x7E]+$/);
  });
  const response = metadata.credential_response_encryption;
  const request = metadata.credential_request_encryption;
  await c.check('VCICheckCredentialResponseEncryptionSupported', () => {
    if (response === undefined) return;
    assert.ok(Array.isArray(response.alg_values_supported) && response.alg_values_supported.length);
    assert.ok(Array.isArray(response.enc_values_supported) && response.enc_values_supported.length);
    assert.equal(typeof response.encryption_required, 'boolean');
  });
  await c.check('VCICheckCredentialRequestEncryptionSupported', () => {
    if (request === undefined) return;
    assert.ok(Array.isArray(request.jwks?.keys) && request.jwks.keys.length);
    for (const key of request.jwks.keys) {
      assert.ok(key.kid, 'a request encryption key without kid');
      for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) assert.equal(key[member], undefined);
    }
    assert.ok(Array.isArray(request.enc_values_supported) && request.enc_values_supported.length);
    assert.equal(typeof request.encryption_required, 'boolean');
  });
  await c.check('VCIValidateEncryptionAlgorithms', () => {
    const jweAlgs = /^(ECDH-ES(\+A(128|192|256)KW)?|RSA-OAEP(-256|-384|-512)?|HPKE-\d+)$/;
    for (const alg of response?.alg_values_supported ?? []) assert.match(alg, jweAlgs);
    for (const key of request?.jwks?.keys ?? []) if (key.alg !== undefined) assert.match(key.alg, jweAlgs);
    for (const enc of [...(response?.enc_values_supported ?? []), ...(request?.enc_values_supported ?? [])])
      assert.match(enc, /^(A(128|192|256)GCM|A(128|192|256)CBC-HS(256|384|512))$/);
  });
  await c.check('VCIValidateEncryptionZipValues', () => {
    for (const zip of [...(response?.zip_values_supported ?? []), ...(request?.zip_values_supported ?? [])])
      assert.equal(zip, 'DEF');
  });
  await c.check('VCIEnsureCredentialRequestEncryptionWhenResponseEncryptionRequired', () => {
    if (response?.encryption_required) assert.ok(request);
  });
  await c.check('VCIEnsureCredentialRequestEncryptionWhenResponseEncryptionOptional', () => {
    if (response) assert.ok(request);
  });
  await c.check('VCICheckForOldSdJwtFormatInCredentialConfigurations', () => {
    for (const [id, configuration] of configurations) assert.notEqual(configuration.format, 'vc+sd-jwt', id);
  });
  if (world.haip)
    await c.check('VCIValidateNonceEndpointInIssuerMetadata', () =>
      assert.ok(isHttps(metadata.nonce_endpoint)),
    );
  await c.check('VCIValidateFormatOfCredentialConfigurationsInMetadata', () => {
    for (const [id, configuration] of configurations) {
      if (world.haip)
        assert.ok(['dc+sd-jwt', 'mso_mdoc'].includes(configuration.format), `${id}: ${configuration.format}`);
      if (configuration.format === 'dc+sd-jwt') assert.equal(typeof configuration.vct, 'string', id);
      if (configuration.format === 'mso_mdoc') assert.equal(typeof configuration.doctype, 'string', id);
    }
  });
}

// ---------------------------------------------------------------- client attestation at PAR

/** A client attestation signed by the tester's attester with changed claims (CreateClientAttestationJwtWith…). */
async function attestationWith(client: SuiteClient, change: (claims: Record<string, unknown>) => void) {
  const now = seconds();
  const claims: Record<string, unknown> = {
    iss: 'https://attester.suite.example',
    sub: client.clientId,
    iat: now,
    nbf: now,
    exp: now + 300,
    cnf: {
      jwk: { kty: 'EC', crv: 'P-256', x: client.instanceKey.publicJwk.x, y: client.instanceKey.publicJwk.y },
    },
  };
  change(claims);
  client.attestation = await signCompact(
    { alg: 'ES256', typ: 'oauth-client-attestation+jwt', x5c: client.attester.x5c },
    claims,
    client.attester.privateKey,
  );
}

/**
 * The client attestation modules: the PAR request with a broken attestation or PoP, refused
 * (EnsureHttpStatusCodeIs400or401, EnsureContentTypeJson,
 * CheckErrorFromParEndpointResponseErrorInvalidClientOrInvalidRequestOrInvalidClientAttestation).
 */
function attestationAtPar(
  shape: PlanShape,
  breakIt: (run: VciRun, client: SuiteClient) => Promise<void>,
): ModuleImplementation<IssuerWorld> {
  if (shape.grant === 'pre_authorized_code') return anonymousAccess;
  return async (c, world) => {
    const run = await new VciRun(c, world, plain(shape)).configure();
    await breakIt(run, run.client1);
    const request = await run.fapi.createAuthorizationRequest(run.client1);
    const response = await run.fapi.callParEndpoint(request);
    await run.c.check('EnsureHttpStatusCodeIs400or401', () => cond.ensureHttpStatus(response, [400, 401]));
    await run.c.check('EnsureContentTypeJson', () => cond.ensureContentTypeJson(response));
    await run.c.check(
      'CheckErrorFromParEndpointResponseErrorInvalidClientOrInvalidRequestOrInvalidClientAttestation',
      () =>
        cond.errorIsOneOf(response.body, ['invalid_client', 'invalid_request', 'invalid_client_attestation']),
    );
  };
}

/**
 * The plain plan runs the pre-authorized code grant, for which Coffer's plain issuer asks no
 * client authentication: the client attestation modules (VariantNotApplicable unless
 * client_auth_type is client_attestation) do not apply; they run in the HAIP plan.
 */
const anonymousAccess: ModuleImplementation<IssuerWorld> = {
  notApplicable: {
    clause: 'OpenID4VCI 1.0 §6.1 and §12.3 (pre-authorized_grant_anonymous_access_supported)',
    why: "Coffer's plain issuer takes the pre-authorized code without client authentication (pre-authorized_grant_anonymous_access_supported true), so there is no client attestation to break; the client attestation modules run in the HAIP plan, where Coffer requires one",
  },
  run: async (c: Conditions, world: IssuerWorld) => {
    const run = await new VciRun(reportedOnce(c), world, {
      grant: 'pre_authorized_code',
      encrypted: false,
    }).configure();
    await c.check('CheckDiscEndpointPreAuthorizedGrantAnonymousAccessSupported', () =>
      assert.equal(run.fapi.server.as['pre-authorized_grant_anonymous_access_supported'], true),
    );
    // A token request without any client authentication is answered with tokens.
    await run.obtainTokens(run.client1);
  },
};

// ---------------------------------------------------------------- batch

async function batchChecks(run: VciRun, call: CredentialCall, credentials: string[], batchSize: number) {
  const { c } = run;
  await c.check('VCIEnsureNotMoreCredentialsThanRequestedProofs', () =>
    assert.ok(credentials.length <= call.proofKeys.length),
  );
  await c.check('VCIWarnIfFewerCredentialsThanRequestedProofs', () =>
    assert.equal(credentials.length, Math.min(batchSize, 20)),
  );
  const decoded = await Promise.all(credentials.map((credential) => decodeSdJwt(credential, hasher)));
  const payloads = decoded.map((d) => d.jwt.payload as Record<string, Json>);
  await c.check('VCIEnsureBatchSdJwtCredentialDatasetsMatch', async () => {
    const mayDiffer = ['cnf', 'iat', 'nbf', 'exp', 'jti', 'status', '_sd', '_sd_alg', 'sd_hash'];
    const datasets = await Promise.all(
      decoded.map(async (d) => {
        const claims = (await getClaims(d.jwt.payload, d.disclosures, hasher)) as Record<string, unknown>;
        return Object.fromEntries(Object.entries(claims).filter(([k]) => !mayDiffer.includes(k)));
      }),
    );
    for (const dataset of datasets.slice(1)) assert.deepEqual(dataset, datasets[0]);
  });
  await c.check('VCIEnsureBatchSdJwtDisclosureSaltsAreDistinct', () => {
    const salts = decoded.flatMap((d) => d.disclosures.map((x) => x.salt));
    assert.equal(new Set(salts).size, salts.length);
  });
  const bound: string[] = [];
  await c.check('VCIExtractBatchSdJwtBindingKeys', async () => {
    for (const payload of payloads) bound.push(await thumbprintOf(payload.cnf.jwk));
  });
  await c.check('VCIEnsureBatchBindingKeysMatchSentProofKeys', async () => {
    const sent = await Promise.all(call.proofKeys.map((k) => thumbprintOf(k)));
    for (const key of bound) assert.ok(sent.includes(key));
  });
  await c.check('VCIEnsureBatchBindingKeysAreDistinct', () =>
    assert.equal(new Set(bound).size, bound.length),
  );
  await c.check('VCIEnsureBatchTimeClaimsNotLinkable', () => {
    const now = seconds();
    for (const claim of ['iat', 'nbf', 'exp']) {
      const values = payloads.map((p) => p[claim]).filter((v) => typeof v === 'number') as number[];
      if (values.length < 2) continue;
      const distinct = [...new Set(values)];
      if (distinct.every((v) => v % 3600 === 0)) continue;
      const spread = Math.max(...distinct) - Math.min(...distinct);
      if (spread > 120) continue;
      const issuance = claim !== 'exp';
      assert.ok(
        issuance && distinct.every((v) => Math.abs(now - v) > 120),
        `${claim} is a precise time shared by the batch: ${distinct.join(', ')}`,
      );
    }
  });
  const refs = payloads.map((p) => p.status?.status_list).filter(Boolean) as { idx: number; uri: string }[];
  await c.check('VCIEnsureBatchStatusReferencesAreDistinct', () =>
    assert.equal(new Set(refs.map((r) => `${r.uri}#${r.idx}`)).size, refs.length),
  );
  await c.check('VCIEnsureBatchStatusListIndicesAreUnpredictable', () => {
    const byList = Map.groupBy(refs, (r) => r.uri);
    for (const list of byList.values()) {
      const sorted = [...new Set(list.map((r) => r.idx))].sort((a, b) => a - b);
      if (sorted.length < 3) continue;
      const stride = sorted[1]! - sorted[0]!;
      assert.ok(
        !sorted.every((v, i) => i === 0 || v - sorted[i - 1]! === stride),
        `indices ${sorted.join(', ')} step by ${stride}`,
      );
    }
  });
  await c.check('VCIWarnBatchStatusListUrisProvideHerdPrivacy', () => {
    if (refs.length >= 3) assert.ok(new Set(refs.map((r) => r.uri)).size < refs.length);
  });
}

// ---------------------------------------------------------------- repeated requests, mdoc

/**
 * A further credential request with the same access token, which the suite expects to succeed
 * (EnsureHttpStatusCodeIsAnyOf 200, 202). Coffer issues each configuration once per grant, so
 * such a request that passed the token, DPoP, proof (and encryption) checks is refused with
 * credential_request_denied: recorded as Coffer's choice, as the FAPI modules record it.
 */
async function repeatedRequest(run: VciRun, call: CredentialCall, onSuccess?: () => Promise<void>) {
  if (call.response.status === 200 || call.response.status === 202) {
    if (onSuccess) await onSuccess();
    else await run.verifyCredentialResponse(call);
    return;
  }
  await run.c.choice(
    'EnsureHttpStatusCodeIsAnyOf',
    'OpenID4VCI 1.0 §14.3 (Multiple Accesses to the Credential Endpoint)',
    "Coffer issues each configuration of a grant once (an offer's claims are deleted once issued; a wallet-initiated grant is one issuance); a further request with the same access token that passes the token, DPoP and proof checks is answered 400 credential_request_denied, unencrypted (the issuer 'MAY also decide to no longer accept the Access Token'); the wallet gets more copies by batch issuance",
    () => {
      assert.equal(call.response.status, 400, call.response.text);
      assert.equal(call.response.body?.error, 'credential_request_denied');
      assert.equal(mediaTypeOf(call.response.headers), 'application/json');
    },
  );
}

/** credential_format mdoc with wallet-initiated issuance: refused at PAR (as in the FAPI modules). */
async function mdocIsIssuerInitiatedOnly(run: VciRun) {
  const { fapi } = run;
  const request = await fapi.createAuthorizationRequest(run.client1);
  request.params['scope'] = 'membership_mdoc';
  const par = await fapi.callParEndpoint(request);
  await run.c.choice(
    'CheckPAREndpointResponse201WithNoError',
    'OpenID4VCI 1.0 §3.3.3 and §5.1.2 (wallet-initiated issuance by scope)',
    "The HAIP plan's modules run wallet-initiated. Coffer issues wallet-initiated only from_profile configurations (the claims come from the person's profile), which mso_mdoc configurations cannot be (a profile has no mdoc namespace), so with credential_format mdoc the PAR is refused (invalid_request); mso_mdoc issuance follows an offer (issuer-initiated), as the plain plan's happy flow runs it",
    () => {
      assert.equal(par.status, 400, par.text);
      assert.equal(par.body?.error, 'invalid_request');
    },
  );
  run.c.variant('mso_mdoc: wallet-initiated issuance refused (see the choice)');
}

// ---------------------------------------------------------------- the modules

/**
 * The 21 VCI modules of the issuer plans, for a plan of the given shape. The HAIP plan runs the
 * authorization code grant (wallet-initiated, client attestation, DPoP); the plain plan the
 * pre-authorized code grant of a tenant's offer (DPoP, no client authentication).
 */
export function vciIssuerModules(shape: PlanShape): Record<string, ModuleImplementation<IssuerWorld>> {
  const errorModule =
    (variation: Parameters<VciRun['requestCredential']>[2], error: string, variant = plain(shape)) =>
    async (c: Conditions, world: IssuerWorld) => {
      // With credential_format mdoc too, where the plan issues mso_mdoc (on offers).
      const worlds = [world, ...(shape.mdocConfigurationId ? [world.asking(shape.mdocConfigurationId)] : [])];
      for (const each of worlds) {
        const run = await new VciRun(c, each, variant).configure();
        const tokens = await run.obtainTokens(run.client1);
        const call = await run.requestCredential(run.client1, tokens, variation);
        await run.verifyCredentialErrorResponse(call, error);
      }
    };

  return {
    'oid4vci-1_0-issuer-metadata-test': (c, world) => metadataTest(reportedOnce(c), world, false),
    'oid4vci-1_0-issuer-metadata-test-signed': (c, world) => metadataTest(reportedOnce(c), world, true),

    'oid4vci-1_0-issuer-happy-flow': async (c, world) => {
      const run = await new VciRun(c, world, plain(shape)).configure();
      await run.happyFlow(run.client1, { randomFields: true });
      // The encrypted variant: a credential request and answer as JWEs, then the one with zip=DEF.
      const sealed = await new VciRun(c, world, encrypted(shape)).configure();
      const { tokens } = await sealed.happyFlow(sealed.client1, { randomFields: true });
      const compressed = await sealed.requestCredential(sealed.client1, tokens, {
        zip: true,
        randomFields: true,
      });
      await sealed.c.choice(
        'VCICheckCredentialResponseCompression',
        'OpenID4VCI 1.0 §8.2 and §12.2.4 (zip; zip_values_supported: if absent, compression is not supported)',
        "Coffer compresses no Credential Response (its metadata has no zip_values_supported), so a request asking for zip DEF is refused with invalid_encryption_parameters, unencrypted, rather than answered uncompressed against the wallet's parameters",
        () => {
          assert.equal(sealed.metadata.credential_response_encryption.zip_values_supported, undefined);
          assert.equal(compressed.response.status, 400, compressed.response.text);
          assert.equal(compressed.response.body?.error, 'invalid_encryption_parameters');
          assert.equal(mediaTypeOf(compressed.response.headers), 'application/json');
        },
      );
      if (shape.grant === 'pre_authorized_code') {
        // An issuer may defer (§9): an offer whose claims the tenant supplies only after the
        // wallet asked is answered 202 with a transaction_id, then at the Deferred Credential
        // Endpoint — plain and encrypted (verifyEffectiveCredentialResponse's deferred branch).
        for (const variant of [plain(shape), encrypted(shape)]) {
          const later = await new VciRun(c, world, variant).configure();
          later.c.variant('deferred issuance (the offer has no claims until the wallet asks)');
          await later.happyFlow(later.client1, { deferred: true });
        }
      }
      if (shape.mdocConfigurationId) {
        const mdoc = await new VciRun(c, world.asking(shape.mdocConfigurationId), plain(shape)).configure();
        await mdoc.happyFlow(mdoc.client1);
      } else {
        await mdocIsIssuerInitiatedOnly(run);
      }
    },

    'oid4vci-1_0-issuer-happy-flow-additional-requests': async (c, world) => {
      const run = await new VciRun(c, world, plain(shape)).configure();
      const tokens = await run.obtainTokens(run.client1);
      await run.c.check('ExtractTLSTestValuesFromResourceConfiguration', () =>
        assert.ok(new URL(run.fapi.server.credentialEndpoint).host),
      );
      await tlsIsTheDeployments(run.c, run.fapi.server.credentialEndpoint);
      const first = await run.requestCredential(run.client1, tokens);
      await run.verifyCredentialResponse(first);
      await run.sendNotification(run.client1, tokens, first);
      // performAdditionalResourceEndpointTests: the same access token, a fresh nonce and proof.
      await run.c.check('AddIpV6FapiCustomerIpAddressToResourceEndpointRequest', () => assert.ok(true));
      await run.c.check('SetUtf8JsonAcceptHeadersForResourceEndpointRequest', () => assert.ok(true));
      const ipv6Utf8 = {
        'x-fapi-customer-ip-address': '2001:db8::1020',
        accept: 'application/json; charset=utf-8',
        'accept-charset': 'utf-8',
      };
      await repeatedRequest(run, await run.requestCredential(run.client1, tokens, { headers: ipv6Utf8 }));
      await run.c.check('SetPermissiveAcceptHeaderForResourceEndpointRequest', () => assert.ok(true));
      const permissive = { accept: '*/*' };
      await repeatedRequest(run, await run.requestCredential(run.client1, tokens, { headers: permissive }));
      await run.c.check('ClearAcceptHeaderForResourceEndpointRequest', () => assert.ok(true));
      // What the module is after — the credential endpoint takes the FAPI headers and Accept
      // variations — shown on a grant of its own for each, where Coffer does issue.
      for (const headers of [ipv6Utf8, permissive]) {
        const fresh = await run.obtainTokens(run.client1);
        const call = await run.requestCredential(run.client1, fresh, { headers });
        await run.c.check('EnsureHttpStatusCodeIsAnyOf', () =>
          cond.ensureHttpStatus(call.response, [200, 202]),
        );
        await run.verifyCredentialResponse(call);
      }
    },

    'oid4vci-1_0-issuer-happy-flow-multiple-clients': async (c, world) => {
      const run = await new VciRun(c, world, plain(shape)).configure({ secondClient: true });
      const one = await run.happyFlow(run.client1);
      const client2 = run.client2!;
      const two = await run.happyFlow(client2);
      await run.c.check('VCIEnsureCredentialTimeClaimsNotLinkable', () => {
        const a = decodeJwt(one.credentials[0]!.split('~')[0]!).payload;
        const b = decodeJwt(two.credentials[0]!.split('~')[0]!).payload;
        for (const claim of ['iat', 'nbf', 'exp']) {
          const delta = (b[claim] as number) - (a[claim] as number);
          assert.ok(!(delta > 0 && delta <= 7), `${claim} advanced by the real time between the issuances`);
        }
      });
      // switchToClient1AndTryClient2AccessToken: client 1's DPoP key with client 2's token.
      const stolen = await run.requestCredential(run.client1, { ...two.tokens, dpopKey: run.client1.dpop() });
      await run.c.check('EnsureHttpStatusCodeIs4xx', () => cond.ensureHttpStatusCodeIs4xx(stolen.response));
    },

    'oid4vci-1_0-issuer-happy-flow-skip-notification': async (c, world) => {
      const run = await new VciRun(c, world, plain(shape)).configure();
      await run.happyFlow(run.client1, { notify: false });
    },

    'oid4vci-1_0-issuer-batch-issuance': async (c, world) => {
      const run = await new VciRun(c, world.asking(shape.batchConfigurationId), plain(shape)).configure();
      let batchSize = 0;
      await run.c.check('VCIValidateBatchCredentialIssuanceMetadata', () => {
        batchSize = run.metadata.batch_credential_issuance?.batch_size;
        assert.ok(Number.isInteger(batchSize) && batchSize >= 2, 'no batch_size of 2 or more');
      });
      const tokens = await run.obtainTokens(run.client1);
      await run.c.check('VCIPrepareBatchProofKeys', () => assert.ok(batchSize >= 2));
      const call = await run.requestCredential(run.client1, tokens, {
        proofKeyCount: Math.min(batchSize, 20),
      });
      const credentials = await run.verifyCredentialResponse(call);
      await batchChecks(run, call, credentials, batchSize);
      await run.sendNotification(run.client1, tokens, call);
    },

    'oid4vci-1_0-issuer-fail-invalid-nonce': errorModule({ randomNonce: true }, 'invalid_nonce'),
    'oid4vci-1_0-issuer-fail-invalid-jwt-proof-signature': errorModule(
      { invalidProofSignature: true },
      'invalid_proof',
    ),
    'oid4vci-1_0-issuer-fail-invalid-key-attestation-signature':
      shape.grant === 'authorization_code'
        ? errorModule({ invalidKeyAttestationSignature: true }, 'invalid_proof')
        : {
            notApplicable: {
              clause: 'OpenID4VCI 1.0 §12.2.4 and Appendix D (key_attestations_required is OPTIONAL)',
              why: "Coffer's plain issuer asks for no key attestation (its proof types have no key_attestations_required), so the suite's module skips; Coffer requires and checks key attestations as a HAIP issuer, where this module runs",
            },
            run: async (c, world) => {
              const run = await new VciRun(reportedOnce(c), world, plain(shape)).configure();
              await c.check('VCIResolveCredentialProofTypeToUse', () =>
                assert.equal(
                  run.fapi.server.configuration.proof_types_supported.jwt.key_attestations_required,
                  undefined,
                ),
              );
            },
          },
    'oid4vci-1_0-issuer-fail-invalid-client-attestation-signature': attestationAtPar(
      shape,
      async (run, client) => {
        await run.c.check('VCIInvalidateClientAttestationSignature', () => {
          client.attestation = flip(client.attestation);
        });
      },
    ),
    'oid4vci-1_0-issuer-fail-invalid-client-attestation-pop-signature': attestationAtPar(
      shape,
      async (run, client) => {
        const headers = client.clientAttestationHeaders.bind(client);
        await run.c.check('AddClientAttestationClientAuthWithInvalidPopSignature', () => {
          client.clientAttestationHeaders = async (audience) => {
            const made = await headers(audience);
            return { ...made, 'oauth-client-attestation-pop': flip(made['oauth-client-attestation-pop']!) };
          };
        });
      },
    ),
    'oid4vci-1_0-issuer-fail-client-attestation-exp-in-past': attestationAtPar(shape, async (run, client) => {
      await run.c.check('CreateClientAttestationJwtWithExpInPast', () =>
        attestationWith(client, (claims) => {
          claims['exp'] = seconds() - 600;
        }),
      );
    }),
    'oid4vci-1_0-issuer-fail-client-attestation-no-sub': attestationAtPar(shape, async (run, client) => {
      await run.c.check('CreateClientAttestationJwtWithoutSub', () =>
        attestationWith(client, (claims) => {
          delete claims['sub'];
        }),
      );
    }),
    'oid4vci-1_0-issuer-fail-client-attestation-pop-wrong-aud': attestationAtPar(
      shape,
      async (run, client) => {
        const headers = client.clientAttestationHeaders.bind(client);
        await run.c.check('AddClientAttestationClientAuthWithWrongAudPop', () => {
          client.clientAttestationHeaders = () => headers(`https://wrong-${randomString(4)}.example`);
        });
      },
    ),
    'oid4vci-1_0-issuer-fail-mismatched-client-attestation-pop-key': attestationAtPar(
      shape,
      async (run, client) => {
        await run.c.check('ReplaceClientInstanceKeyWithNewKey', () => {
          client.instanceKey = newSuiteKey();
        });
      },
    ),
    'oid4vci-1_0-issuer-fail-missing-proof': errorModule({ withoutProofs: true }, 'invalid_proof'),
    'oid4vci-1_0-issuer-fail-unsupported-encryption-algorithm': errorModule(
      { unsupportedEncryptionAlg: true },
      'invalid_encryption_parameters',
      encrypted(shape),
    ),
    'oid4vci-1_0-issuer-fail-unknown-credential-configuration': async (c, world) => {
      for (const variant of [plain(shape), encrypted(shape)]) {
        const run = await new VciRun(c, world, variant).configure();
        const tokens = await run.obtainTokens(run.client1);
        const call = await run.requestCredential(run.client1, tokens, {
          configurationId: `unknown:${randomString(8)}`,
        });
        await run.verifyCredentialErrorResponse(call, 'unknown_credential_configuration');
      }
    },
    'oid4vci-1_0-issuer-fail-unknown-credential-identifier': errorModule(
      { credentialIdentifier: `unknown:${randomString(8)}` },
      'unknown_credential_identifier',
    ),
    'oid4vci-1_0-issuer-fail-on-access-token-in-query': async (c, world) => {
      const run = await new VciRun(c, world, plain(shape)).configure();
      const tokens = await run.obtainTokens(run.client1);
      const call = await run.requestCredential(run.client1, tokens);
      await run.verifyCredentialResponse(call);
      await run.sendNotification(run.client1, tokens, call);
      await run.c.check('DisallowAccessTokenInQuery', async () => {
        const url = new URL(run.fapi.server.credentialEndpoint);
        url.searchParams.set('access_token', tokens.accessToken);
        const answer = await exchange(run.fetch, url.href, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ credential_configuration_id: world.configurationId }),
        });
        assert.ok(answer.status < 200 || answer.status >= 300, `HTTP ${answer.status}`);
      });
    },
  };
}

/**
 * The modules split in two, for two plan files with a world each (the log-ins of one file stay
 * under the authorization server's LOGIN_RATE_LIMIT per address and minute): the flows, and
 * the refusals (`fail-*`).
 */
export function vciIssuerModulesPart(
  shape: PlanShape,
  part: 'flows' | 'failures',
): Record<string, ModuleImplementation<IssuerWorld>> {
  return Object.fromEntries(
    Object.entries(vciIssuerModules(shape)).filter(
      ([name]) => name.includes('-fail-') === (part === 'failures'),
    ),
  );
}
