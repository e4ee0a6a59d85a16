import assert from 'node:assert/strict';
import { createHash, X509Certificate } from 'node:crypto';
import {
  calculateJwkThumbprint,
  compactVerify,
  decodeJwt,
  decodeProtectedHeader,
  importJWK,
  type JWK,
} from 'jose';
import type { Conditions } from '../harness.ts';
import type { SeenRequest, SuiteIssuer } from './issuer.ts';

// biome-ignore lint/suspicious/noExplicitAny: the suite reads arbitrary JSON
type Json = any;

/**
 * The suite's conditions over what the wallet sent the emulated issuer (issuer.ts), by their
 * class names in vci10wallet/condition, condition/as, condition/as/clientattestation and
 * condition/rs: each asserts what the Java condition checks of one request.
 */

const now = () => Math.floor(Date.now() / 1000);
const sha256b64 = (s: string) => createHash('sha256').update(s).digest('base64url');

/** The compact JWS's header and claims, as the suite parses them (a failure is the condition's). */
function parts(jwt: string): { header: Json; claims: Json } {
  assert.equal(typeof jwt, 'string', 'not a JWT');
  assert.equal(jwt.split('.').length, 3, 'not a compact JWS');
  return { header: decodeProtectedHeader(jwt), claims: decodeJwt(jwt) };
}

async function verifiedWith(jwt: string, jwk: JWK, alg: string) {
  await compactVerify(jwt, await importJWK(jwk, alg));
}

/** A public JWK has no private members (RFC 7517 §6.2.2 `d`). */
const assertPublic = (jwk: Json) => {
  assert.ok(jwk && typeof jwk === 'object', 'no jwk');
  for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'])
    assert.ok(!(member in jwk), `jwk carries ${member}`);
};

/**
 * An x5c chain (leaf first) that reaches the trusted root: each certificate signed by the next,
 * the last by the root (or the root itself), all valid now (ValidateKeyAttestationX5cCertificateChain,
 * ValidateClientAttestationSignature's chain check).
 */
export function assertChainToRoot(x5c: unknown, rootPem: string): X509Certificate {
  assert.ok(Array.isArray(x5c) && x5c.length > 0, 'no x5c');
  const certs = (x5c as string[]).map((der) => new X509Certificate(Buffer.from(der, 'base64')));
  const root = new X509Certificate(rootPem);
  const at = new Date();
  for (const cert of [...certs, root]) {
    assert.ok(
      new Date(cert.validFrom) <= at && at <= new Date(cert.validTo),
      `${cert.subject} not valid now`,
    );
  }
  for (let i = 0; i < certs.length - 1; i++) {
    assert.ok(certs[i]!.verify(certs[i + 1]!.publicKey), `${certs[i]!.subject} not signed by the next`);
  }
  const last = certs.at(-1)!;
  assert.ok(
    last.raw.equals(root.raw) || last.verify(root.publicKey),
    'the chain does not reach the trusted root',
  );
  return certs[0]!;
}

/** The requests of one endpoint. */
export const at = (suite: SuiteIssuer, endpoint: string) =>
  suite.requests.filter((r) => r.endpoint === endpoint);

/** Metadata requests: GET, at the well-known URL inserted before the issuer's path (§12.2.2, RFC 8414 §3.1). */
export async function checkMetadataRequests(c: Conditions, suite: SuiteIssuer): Promise<void> {
  const path = new URL(suite.credentialIssuer).pathname;
  const issuerRequests = at(suite, 'credential_issuer_metadata');
  await c.check('VCICheckIssuerMetadataRequestUrl', () => {
    assert.ok(issuerRequests.length > 0, 'the wallet did not fetch the Credential Issuer Metadata');
    for (const r of issuerRequests) assert.equal(r.path, `/.well-known/openid-credential-issuer${path}`);
    assert.equal(at(suite, 'unexpected_well_known').length, 0, 'a well-known URL of the wrong form');
  });
  const asRequests = at(suite, 'oauth_authorization_server_metadata');
  await c.check('VCICheckOAuthAuthorizationServerMetadataRequestUrl', () => {
    assert.ok(asRequests.length > 0, 'the wallet did not fetch the Authorization Server Metadata');
    for (const r of asRequests) assert.equal(r.path, `/.well-known/oauth-authorization-server${path}`);
  });
  await c.check('EnsureIncomingRequestMethodIsGet', () => {
    for (const r of [...issuerRequests, ...asRequests]) assert.equal(r.method, 'GET');
  });
}

export interface DpopExpectation {
  /** The access token a resource request's proof must hash (ath). */
  accessToken?: string;
  /** The nonce the server gave for this endpoint, if any. */
  nonce?: string | undefined;
  /** jti values seen so far (EnsureDpopProofJtiNotAlreadyUsed). */
  jtis: Set<string>;
}

/**
 * PerformDpopProof{Par,Token,Resource}RequestChecks on one request: ValidateDpopProofTokenRequest
 * or ValidateDpopProofResourceRequest, ValidateDpopProofIat, ValidateDpopProofNbf,
 * EnsureDpopProofJtiNotAlreadyUsed, the endpoint's nonce check, ValidateDpopProofSignature.
 */
export async function checkDpopProof(
  c: Conditions,
  request: SeenRequest,
  expectation: DpopExpectation,
  nonceCondition: string,
): Promise<string> {
  const proof = request.headers['dpop'];
  await c.check('ExtractDpopProofFromHeader', () =>
    assert.ok(proof, `no DPoP header at ${request.endpoint}`),
  );
  const { header, claims } = parts(proof!);
  const resource = expectation.accessToken !== undefined;
  await c.check(resource ? 'ValidateDpopProofResourceRequest' : 'ValidateDpopProofTokenRequest', () => {
    assert.equal(header.typ, 'dpop+jwt');
    assert.equal(header.alg, 'ES256');
    assertPublic(header.jwk);
    assert.equal(typeof claims.jti, 'string');
    assert.equal(claims.htm, request.method);
    const htu = new URL(request.url);
    htu.search = '';
    htu.hash = '';
    assert.equal(claims.htu, htu.toString());
    if (resource) assert.equal(claims.ath, sha256b64(expectation.accessToken!), 'ath');
  });
  await c.check('ValidateDpopProofIat', () => {
    assert.equal(typeof claims.iat, 'number');
    assert.ok(Math.abs(now() - claims.iat) <= 300, 'iat not within 5 minutes');
  });
  await c.check('ValidateDpopProofNbf', () => {
    if (claims.nbf !== undefined) assert.ok(claims.nbf <= now() + 5, 'nbf in the future');
  });
  await c.check('EnsureDpopProofJtiNotAlreadyUsed', () => {
    assert.ok(!expectation.jtis.has(claims.jti), 'jti reused');
    expectation.jtis.add(claims.jti);
  });
  await c.check(nonceCondition, () => {
    if (expectation.nonce !== undefined) assert.equal(claims.nonce, expectation.nonce);
  });
  await c.check('ValidateDpopProofSignature', () => verifiedWith(proof!, header.jwk, header.alg));
  return calculateJwkThumbprint(header.jwk);
}

export interface AttestationExpectation {
  rootPem: string;
  /** The wallet provider's identifier (Coffer's PUBLIC_URL). */
  issuer: string;
  clientId: string;
  asIssuer: string;
  /** PoP jti values seen (CheckForClientAttestationProofJwtReuse). */
  jtis: Set<string>;
  /** The challenges the challenge endpoint gave, if it is advertised. */
  challenges: string[] | undefined;
}

/**
 * ValidateClientAuthenticationWithClientAttestationJWT on one PAR or token request (OAuth 2.0
 * Attestation-Based Client Authentication, draft 07 §5–§8). Returns the attestation's cnf key.
 */
export async function checkClientAttestation(
  c: Conditions,
  request: SeenRequest,
  expected: AttestationExpectation,
): Promise<JWK> {
  const attestation = request.headers['oauth-client-attestation'];
  const pop = request.headers['oauth-client-attestation-pop'];
  await c.check('ExtractClientAttestationFromRequest', () => {
    assert.ok(attestation, 'no OAuth-Client-Attestation header');
    assert.ok(pop, 'no OAuth-Client-Attestation-PoP header');
  });
  const a = parts(attestation!);
  const p = parts(pop!);
  await c.check('ValidateClientAttestationSignature', async () => {
    assert.equal(a.header.typ, 'oauth-client-attestation+jwt');
    const leaf = assertChainToRoot(a.header.x5c, expected.rootPem);
    await compactVerify(attestation!, leaf.publicKey);
  });
  await c.check('ValidateClientAttestationCnfJwkFields', () => {
    const jwk = a.claims.cnf?.jwk;
    assertPublic(jwk);
    assert.equal(jwk.kty, 'EC');
    assert.ok(jwk.crv && jwk.x && jwk.y, 'incomplete EC key');
  });
  await c.check('ValidateClientAttestationKeyBindingSignature', async () => {
    assert.equal(p.header.typ, 'oauth-client-attestation-pop+jwt');
    await verifiedWith(pop!, a.claims.cnf.jwk, p.header.alg);
  });
  await c.check('CheckForClientAttestationProofJwtReuse', () => {
    assert.equal(typeof p.claims.jti, 'string', 'no jti');
    assert.ok(!expected.jtis.has(p.claims.jti), 'PoP jti reused');
    expected.jtis.add(p.claims.jti);
  });
  await c.check('ValidateClientAttestationIssuer', () => assert.equal(a.claims.iss, expected.issuer));
  await c.check('ValidateClientAttestationSubject', () => {
    assert.equal(a.claims.sub, p.claims.iss, 'attestation sub is not the PoP iss');
    assert.equal(a.claims.sub, expected.clientId);
  });
  await c.check('ValidateClientAttestationExpiration', () => {
    assert.equal(typeof a.claims.exp, 'number');
    assert.ok(a.claims.exp > now(), 'expired');
  });
  await c.check('ValidateClientAttestationIssuedAt', () => {
    if (a.claims.iat !== undefined) assert.ok(a.claims.iat <= now() + 5, 'iat in the future');
  });
  await c.check('ValidateClientAttestationNotBefore', () => {
    if (a.claims.nbf !== undefined) assert.ok(a.claims.nbf <= now() + 5, 'nbf in the future');
  });
  await c.check('ValidateClientAttestationProofJwtAudience', () =>
    assert.equal(p.claims.aud, expected.asIssuer),
  );
  await c.check('ValidateClientAttestationProofJwtChallenge', () => {
    if (expected.challenges === undefined) return;
    assert.ok(
      expected.challenges.length > 0,
      'the wallet did not fetch a challenge from the challenge_endpoint',
    );
    assert.ok(typeof p.claims.challenge === 'string', 'no challenge claim in the PoP');
    assert.ok(expected.challenges.includes(p.claims.challenge), 'the challenge is not one the server issued');
  });
  return a.claims.cnf.jwk;
}

/** The unsigned authorization request's parameters, as the PAR endpoint (or the authorization endpoint) took them. */
export async function checkAuthorizationRequest(
  c: Conditions,
  params: Record<string, string>,
  expected: { clientId: string; issuerState: string | undefined; scope: string; haip: boolean },
): Promise<void> {
  await c.check('EnsurePAREndpointRequestDoesNotContainRequestUriParameter', () =>
    assert.equal(params['request_uri'], undefined),
  );
  await c.check('EnsureResponseTypeIsCode', () => assert.equal(params['response_type'], 'code'));
  await c.check('EnsureMatchingClientId', () => assert.equal(params['client_id'], expected.clientId));
  await c.check('EnsureAuthorizationRequestContainsPkceCodeChallenge', () => {
    assert.ok(params['code_challenge'], 'no code_challenge');
    assert.match(params['code_challenge']!, /^[A-Za-z0-9_-]{43}$/);
  });
  await c.check('EnsurePkceCodeChallengeMethodIsS256', () =>
    assert.equal(params['code_challenge_method'], 'S256'),
  );
  await c.check('VCIVerifyIssuerStateInAuthorizationRequest', () => {
    if (expected.issuerState !== undefined) assert.equal(params['issuer_state'], expected.issuerState);
  });
  await c.check('ValidateRedirectUri', () => {
    assert.ok(params['redirect_uri'], 'no redirect_uri');
    new URL(params['redirect_uri']!);
  });
  await c.check('ExtractRequestedScopes', () => {
    // HAIP 1.0 §4.1 and the suite's scope-based flow: the configuration's scope.
    if (params['authorization_details'] === undefined || expected.haip) {
      assert.ok((params['scope'] ?? '').split(' ').includes(expected.scope), `scope ${params['scope']}`);
    }
  });
  if (params['authorization_details'] !== undefined) {
    await c.check('VCIValidateOpenidCredentialAuthorizationDetailsInIncomingRequest', () => {
      const details = JSON.parse(params['authorization_details']!);
      assert.ok(Array.isArray(details));
      for (const d of details) {
        assert.equal(d.type, 'openid_credential');
        assert.equal(typeof d.credential_configuration_id, 'string');
      }
    });
  }
}

/** The authorization endpoint after PAR: only client_id and request_uri (PAR §4, FAPI2 SP 5.3.3.2). */
export async function checkAuthorizationEndpointAfterPar(
  c: Conditions,
  request: SeenRequest,
  clientId: string,
) {
  await c.check('EnsureAuthorizationRequestDoesNotContainRequestWhenUsingPAR', () =>
    assert.equal(request.query['request'], undefined),
  );
  await c.check('EnsureAuthorizationRequestContainsOnlyExpectedParamsWhenUsingPAR', () => {
    assert.deepEqual(Object.keys(request.query).sort(), ['client_id', 'request_uri']);
    assert.equal(request.query['client_id'], clientId);
  });
}

export interface CredentialRequestExpectation {
  accessToken: string;
  credentialIssuer: string;
  /** The wallet's client_id, which the proof's iss names in the authorization code flow. */
  clientId: string | undefined;
  cNonces: string[];
  batchSize: number | undefined;
  /** The token response's credential_identifiers, when it had any. */
  credentialIdentifiers: string[] | undefined;
  /** The configuration offered. */
  configurationId: string;
  keyAttestationRoot: string | undefined;
}

/** The members a Credential Request may have (OpenID4VCI 1.0 §8.2; the suite's credential_request-1_0.json). */
const CREDENTIAL_REQUEST_MEMBERS = [
  'credential_identifier',
  'credential_configuration_id',
  'proofs',
  'credential_response_encryption',
];

/** The credential endpoint's conditions (AbstractVCIWalletTest.credentialEndpoint), on one request. */
export async function checkCredentialRequest(
  c: Conditions,
  request: SeenRequest,
  expected: CredentialRequestExpectation,
): Promise<JWK[]> {
  await c.check('EnsureIncomingRequestMethodIsPost', () => assert.equal(request.method, 'POST'));
  await c.check('VCIEnsureBearerAccessTokenNotInParams', () => {
    assert.equal(request.query['access_token'], undefined);
    assert.equal(request.form['access_token'], undefined);
  });
  await c.check('ExtractAccessTokenFromHeader', () => {
    const [, token] = (request.headers['authorization'] ?? '').split(' ');
    assert.equal(token, expected.accessToken);
  });
  const encrypted = (request.headers['content-type'] ?? '').startsWith('application/jwt');
  await c.check(
    encrypted
      ? 'VCIEnsureCredentialRequestUsesApplicationJwt'
      : 'VCIEnsureCredentialRequestUsesApplicationJson',
    () =>
      assert.match(
        request.headers['content-type'] ?? '',
        encrypted ? /^application\/jwt/ : /^application\/json/,
      ),
  );
  const body = request.json;
  await c.check('VCIValidateCredentialRequestStructure', () => {
    assert.ok(body && typeof body === 'object' && !Array.isArray(body), 'not a JSON object');
    const byId = body.credential_identifier !== undefined;
    const byConfig = body.credential_configuration_id !== undefined;
    assert.ok(byId !== byConfig, 'exactly one of credential_identifier and credential_configuration_id');
    assert.ok(!(body.proof !== undefined && body.proofs !== undefined), 'proof and proofs');
    assert.equal(body.proof, undefined, 'the 1.0 request has proofs, not proof');
  });
  await c.check('CheckForUnexpectedParametersInCredentialRequest', () => {
    const unexpected = Object.keys(body).filter((k) => !CREDENTIAL_REQUEST_MEMBERS.includes(k));
    assert.deepEqual(unexpected, []);
  });
  await c.check('VCIResolveRequestedCredentialConfigurationFromRequest', () => {
    if (body.credential_identifier !== undefined) {
      assert.ok(
        expected.credentialIdentifiers?.includes(body.credential_identifier),
        'unknown credential_identifier',
      );
    } else {
      // §8.2: credential_configuration_id only when the token response had no authorization_details.
      assert.equal(expected.credentialIdentifiers, undefined, 'credential_identifiers were given; use one');
      assert.equal(body.credential_configuration_id, expected.configurationId);
    }
  });
  const proofs: string[] = body.proofs?.jwt;
  await c.check('VCIExtractCredentialRequestProof', () => {
    assert.ok(body.proofs && typeof body.proofs === 'object', 'no proofs');
    assert.deepEqual(Object.keys(body.proofs), ['jwt']);
    assert.ok(Array.isArray(proofs) && proofs.length > 0, 'no jwt proofs');
  });
  if (expected.batchSize !== undefined) {
    await c.check('VCIEnsureProofCountWithinAdvertisedBatchSize', () =>
      assert.ok(
        proofs.length <= expected.batchSize!,
        `${proofs.length} proofs for batch_size ${expected.batchSize}`,
      ),
    );
  } else {
    await c.check('VCIEnsureProofCountWithinAdvertisedBatchSize', () =>
      assert.equal(proofs.length, 1, 'more than one proof without batch_credential_issuance'),
    );
  }
  const keys: JWK[] = [];
  for (const proof of proofs) {
    const { header, claims } = parts(proof);
    await c.check('VCIValidateCredentialRequestJwtProof', async () => {
      assert.equal(header.typ, 'openid4vci-proof+jwt');
      assert.equal(header.alg, 'ES256');
      assertPublic(header.jwk);
      assert.equal(header.kid, undefined, 'kid and jwk are mutually exclusive');
      assert.equal(header.jwk.kty, 'EC');
      assert.equal(header.jwk.crv, 'P-256');
      assert.ok(expected.cNonces.includes(claims.nonce), 'nonce is not a c_nonce of this issuer');
      assert.equal(typeof claims.iat, 'number');
      assert.ok(Math.abs(now() - claims.iat) <= 300, 'iat not within 5 minutes');
      const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
      assert.deepEqual(aud, [expected.credentialIssuer]);
      if (expected.clientId !== undefined && claims.iss !== undefined)
        assert.equal(claims.iss, expected.clientId);
      await verifiedWith(proof, header.jwk, 'ES256');
    });
    keys.push(header.jwk);
    if (expected.keyAttestationRoot !== undefined) await checkKeyAttestation(c, header, claims, expected);
  }
  await c.check('VCIEnsureProofKeysAreDistinct', async () => {
    const thumbprints = await Promise.all(keys.map((k) => calculateJwkThumbprint(k)));
    assert.equal(new Set(thumbprints).size, thumbprints.length, 'two proofs with one key');
  });
  return keys;
}

/** The key attestation in a jwt proof's header (Annex D.1, HAIP 1.0 §4.5.1), validateKeyAttestationJwt. */
async function checkKeyAttestation(
  c: Conditions,
  proofHeader: Json,
  proofClaims: Json,
  expected: CredentialRequestExpectation,
): Promise<void> {
  const jwt = proofHeader.key_attestation;
  await c.check('VCIValidateAttestedKeysInKeyAttestationFromJwtProof', () =>
    assert.equal(typeof jwt, 'string', 'key_attestations_required, and no key_attestation in the proof'),
  );
  const { header, claims } = parts(jwt);
  await c.check('EnsureKeyAttestationTypIsKeyAttestationJwt', () =>
    assert.equal(header.typ, 'key-attestation+jwt'),
  );
  await c.check('EnsureKeyAttestationAlgIsES256', () => assert.equal(header.alg, 'ES256'));
  await c.check('EnsureKeyAttestationHasX5cClaim', () =>
    assert.ok(Array.isArray(header.x5c) && header.x5c.length > 0),
  );
  let leaf: X509Certificate | undefined;
  await c.check('ValidateKeyAttestationX5cCertificateChain', () => {
    leaf = assertChainToRoot(header.x5c, expected.keyAttestationRoot!);
  });
  await c.check('VerifyKeyAttestationSignatureUsingConfigJwks', () => compactVerify(jwt, leaf!.publicKey));
  await c.check('ValidateKeyAttestationIat', () => {
    assert.equal(typeof claims.iat, 'number');
    assert.ok(claims.iat <= now() + 5 && claims.iat > now() - 3600, 'iat out of range');
  });
  await c.check('EnsureKeyAttestationExpIsPresentForJwtProof', () =>
    assert.equal(typeof claims.exp, 'number'),
  );
  await c.check('ValidateKeyAttestationExp', () => assert.ok(claims.exp > now(), 'expired'));
  await c.check('ValidateKeyAttestationNonce', () => {
    if (claims.nonce !== undefined) assert.equal(claims.nonce, proofClaims.nonce);
  });
  await c.check('VCIValidateAttestedKeysInKeyAttestationFromJwtProof', async () => {
    assert.ok(Array.isArray(claims.attested_keys) && claims.attested_keys.length > 0, 'no attested_keys');
    const want = await calculateJwkThumbprint(proofHeader.jwk);
    const have = await Promise.all(claims.attested_keys.map((k: JWK) => calculateJwkThumbprint(k)));
    assert.ok(have.includes(want), "the proof's key is not attested");
  });
}

/** The notification endpoint's conditions (OpenID4VCI 1.0 §11.1). */
export async function checkNotification(
  c: Conditions,
  request: SeenRequest,
  expected: { notificationIds: string[]; accessToken: string },
): Promise<void> {
  await c.check('EnsureIncomingRequestMethodIsPost', () => assert.equal(request.method, 'POST'));
  await c.check('VCIValidateNotificationRequest', () => {
    const body = request.json;
    assert.ok(body && typeof body === 'object', 'not a JSON object');
    assert.ok(expected.notificationIds.includes(body.notification_id), 'unknown notification_id');
    assert.ok(
      ['credential_accepted', 'credential_failure', 'credential_deleted'].includes(body.event),
      body.event,
    );
    if (body.event_description !== undefined) {
      assert.equal(typeof body.event_description, 'string');
      // ASCII printable, without '"' and '\' (§11.1).
      assert.match(body.event_description, /^[\x20\x21\x23-\x5B\x5D-\x7E]*$/);
    }
  });
  await c.check('VCICheckForUnknownFieldsInNotificationRequest', () => {
    const unknown = Object.keys(request.json).filter(
      (k) => !['notification_id', 'event', 'event_description'].includes(k),
    );
    assert.deepEqual(unknown, []);
  });
  await c.check('ExtractAccessTokenFromHeader', () => {
    const [, token] = (request.headers['authorization'] ?? '').split(' ');
    assert.equal(token, expected.accessToken);
  });
}
