import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  CompactEncrypt,
  calculateJwkThumbprint,
  compactDecrypt,
  decodeJwt,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
} from 'jose';
import { type IssuerIdentity, makeIssuerIdentity } from '../../helpers/issuers/issuer-ca.ts';
import { issueMdoc, MDL_DOCTYPE } from '../../helpers/issuers/mdoc-issuer.ts';
import { issueSdJwtVc, PID_VCT } from '../../helpers/issuers/sd-jwt-issuer.ts';
import { makeCertificate, privateKeyPem } from '../../oid4vp/certificates.ts';

// biome-ignore lint/suspicious/noExplicitAny: the suite reads arbitrary JSON
type Json = any;

/**
 * The conformance suite's emulated Credential Issuer and its OAuth 2.0 Authorization Server
 * (vci10wallet/AbstractVCIWalletTest, and for the HAIP plan's FAPI2 client modules
 * fapi2spfinal/AbstractFAPI2SPFinalClientTest), on its own HTTPS server on 127.0.0.1 with its own
 * test CA. It behaves as the module in hand does (offers, grants, PAR, DPoP with or without
 * nonces, the attestation challenge, notifications, batches, and the FAPI2 client negative
 * answers) and records every request Coffer's wallet sends, so that each module's test can check
 * them as the suite's conditions do (conditions.ts). Shares no code with Coffer's src/.
 */

/** How the module in hand makes the emulated issuer behave. */
export interface SuiteBehaviour {
  /** HAIP plan: PAR, PKCE S256, DPoP, Wallet Attestation (attest_jwt_client_auth), key attestations, scope. */
  haip: boolean;
  /** Whether the AS and RS demand DPoP nonces (RFC 9449 §8–9); the no-dpop-nonce module turns it off. */
  dpopNonce: boolean;
  /** batch_credential_issuance.batch_size (the batch module: 10). */
  batchSize?: number;
  /** The batch module returns the credentials in the reverse order of the proofs. */
  reverseOrder?: boolean;
  /** notification_endpoint advertised and a notification_id in the credential response. */
  notifications: boolean;
  /** challenge_endpoint in the AS metadata (the client attestation challenge module). */
  challengeEndpoint: boolean;
  /**
   * The token response carries authorization_details with credential_identifiers when the
   * request had authorization_details, as the suite does; false leaves them out regardless.
   */
  authorizationDetailsInTokenResponse: boolean;
  /**
   * AuthorizationRequestType rar: the configuration has no `scope`, so the wallet asks with
   * authorization_details, and the token response (pre-authorized code included,
   * VCIInjectAuthorizationDetailsForPreAuthorizedCodeFlow) carries credential_identifiers.
   */
  rar?: boolean;
  /** VCI1FinalCredentialFormat: dc+sd-jwt (default) or mso_mdoc. */
  format?: 'dc+sd-jwt' | 'mso_mdoc';
  /** FAPI2 client negative modules. */
  discoveryIssuerMismatch?: boolean;
  authorizationResponse?: 'invalid-iss' | 'no-iss' | 'invalid-state' | 'no-state';
  tokenWithoutExpiresIn?: boolean;
  tokenTypeInvertedCase?: boolean;
  /** The RS's DPoP nonce error names the scheme in another case ("dPoP"). */
  rsDpopSchemeCase?: boolean;
  /** VCICredentialIssuanceMode deferred: 202 with a transaction_id, the credentials at the deferred endpoint. */
  deferred?: boolean;
  /** Credential response and request encryption required (VCICredentialEncryption=encrypted). */
  encryption?: boolean;
}

export const DEFAULT_BEHAVIOUR: SuiteBehaviour = {
  haip: false,
  dpopNonce: true,
  notifications: true,
  challengeEndpoint: false,
  authorizationDetailsInTokenResponse: true,
};

/** One request the wallet sent, as the suite's `incoming_request` holds it. */
export interface SeenRequest {
  endpoint: string;
  method: string;
  url: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: string;
  form: Record<string, string>;
  json: Json;
  /** The TLS version of the connection (EnsureIncomingTls13). */
  tls: string | null;
  /** What the issuer answered (status, body). */
  status: number;
  answer: Json;
  at: number;
}

export const CONFIGURATION_ID = 'eu.europa.ec.eudi.pid.1';
export const SCOPE = 'eu.europa.ec.eudi.pid.1';
/** VCICredentialConfigurations' mDL (VCI1FinalCredentialFormat mso_mdoc). */
export const MDL_CONFIGURATION_ID = 'org.iso.18013.5.1.mDL';
/** The configuration the module in hand offers, by its credential format. */
export const configurationIdOf = (behaviour: Pick<SuiteBehaviour, 'format'>) =>
  behaviour.format === 'mso_mdoc' ? MDL_CONFIGURATION_ID : CONFIGURATION_ID;
export const TX_CODE = '123456';

export interface SuiteIssuer {
  origin: string;
  credentialIssuer: string;
  tlsCaPem: string;
  identity: IssuerIdentity;
  requests: SeenRequest[];
  behaviour: SuiteBehaviour;
  /** The module starts with a fresh emulated issuer state and the behaviour it needs. */
  reset(behaviour: Partial<SuiteBehaviour>): void;
  /** A credential offer (by value or by reference), returned as the wallet's offer query. */
  createOffer(input: { grant: 'pre-authorized' | 'authorization_code'; byReference: boolean }): string;
  /** What the issuer has made: state for conditions. */
  state: IssuerState;
  asMetadata(): Json;
  issuerMetadata(): Json;
  encryptionJwk: JWK;
  close(): Promise<void>;
}

export interface IssuerState {
  issuerState: string | undefined;
  preAuthorizedCode: string | undefined;
  /** What the PAR endpoint took, by request_uri. */
  pushed: Map<string, { params: Record<string, string>; dpopJkt: string | undefined }>;
  codes: Map<
    string,
    { params: Record<string, string>; dpopJkt: string | undefined; used: boolean; createdAt: number }
  >;
  accessTokens: Map<string, { dpopJkt: string | undefined; credentialIdentifiers: string[] }>;
  cNonces: string[];
  /** The c_nonce a credential request must use (the last issued). */
  lastCNonce: string | undefined;
  asDpopNonce: string;
  rsDpopNonce: string;
  attestationChallenges: string[];
  notificationIds: string[];
  /** Holder keys of the credentials issued (cnf.jwk), in issuing order. */
  issuedKeys: JWK[];
  /** Deferred issuance: credentials waiting for their transaction_id (VCICreateDeferredCredentialResponse). */
  transactions: Map<string, Array<{ credential: string }>>;
  /** The authorization response the AS sent (to the redirect URI). */
  authorizationResponse: URL | undefined;
}

const freshState = (): IssuerState => ({
  issuerState: undefined,
  preAuthorizedCode: undefined,
  pushed: new Map(),
  codes: new Map(),
  accessTokens: new Map(),
  cNonces: [],
  lastCNonce: undefined,
  asDpopNonce: randomBytes(12).toString('base64url'),
  rsDpopNonce: randomBytes(12).toString('base64url'),
  attestationChallenges: [],
  notificationIds: [],
  issuedKeys: [],
  transactions: new Map(),
  authorizationResponse: undefined,
});

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

export async function startSuiteIssuer(): Promise<SuiteIssuer> {
  const tlsCa = await makeCertificate({ subject: `CN=Suite Issuer TLS CA ${randomUUID()}`, ca: true });
  const tls = await makeCertificate({ subject: 'CN=127.0.0.1', issuer: tlsCa, ipAddresses: ['127.0.0.1'] });
  // HAIP 6.1.1 (VCIEnsureCredentialSigningCertificateIsNotSelfSigned): the signer chains to a CA.
  const identity = await makeIssuerIdentity('Conformance Suite Issuer');
  const encryptionKeys = await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true });
  const encryptionJwk = {
    ...(await exportJWK(encryptionKeys.publicKey)),
    kid: 'suite-enc',
    alg: 'ECDH-ES',
    use: 'enc',
  } as JWK;

  const server: Server = createServer({ key: await privateKeyPem(tls.keys.privateKey), cert: tls.pem });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const base = '/test/a/coffer';
  const credentialIssuer = `${origin}${base}`;

  const requests: SeenRequest[] = [];
  let behaviour: SuiteBehaviour = { ...DEFAULT_BEHAVIOUR };
  let state = freshState();
  const offers = new Map<string, Json>();

  const asMetadata = () => ({
    // ChangeIssuerInServerConfigurationToBeInvalid: an issuer other than the metadata's URL.
    issuer: behaviour.discoveryIssuerMismatch ? `${credentialIssuer}/invalid` : credentialIssuer,
    authorization_endpoint: `${credentialIssuer}/authorize`,
    token_endpoint: `${credentialIssuer}/token`,
    pushed_authorization_request_endpoint: `${credentialIssuer}/par`,
    require_pushed_authorization_requests: behaviour.haip,
    response_types_supported: ['code'],
    grant_types_supported: behaviour.haip
      ? ['authorization_code']
      : ['authorization_code', 'urn:ietf:params:oauth:grant-type:pre-authorized_code'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    'pre-authorized_grant_anonymous_access_supported': !behaviour.haip,
    token_endpoint_auth_methods_supported: behaviour.haip ? ['attest_jwt_client_auth'] : ['none'],
    ...(behaviour.haip
      ? {
          dpop_signing_alg_values_supported: ['ES256'],
          client_attestation_signing_alg_values_supported: ['ES256'],
          client_attestation_pop_signing_alg_values_supported: ['ES256'],
        }
      : {}),
    ...(behaviour.rar ? { authorization_details_types_supported: ['openid_credential'] } : {}),
    ...(behaviour.challengeEndpoint ? { challenge_endpoint: `${credentialIssuer}/challenge` } : {}),
  });

  const proofTypes = () =>
    behaviour.haip
      ? { jwt: { proof_signing_alg_values_supported: ['ES256'], key_attestations_required: {} } }
      : { jwt: { proof_signing_alg_values_supported: ['ES256'] } };

  const issuerMetadata = () => ({
    credential_issuer: credentialIssuer,
    authorization_servers: [credentialIssuer],
    credential_endpoint: `${credentialIssuer}/credential`,
    nonce_endpoint: `${credentialIssuer}/nonce`,
    deferred_credential_endpoint: `${credentialIssuer}/deferred_credential`,
    ...(behaviour.notifications ? { notification_endpoint: `${credentialIssuer}/notification` } : {}),
    ...(behaviour.batchSize ? { batch_credential_issuance: { batch_size: behaviour.batchSize } } : {}),
    ...(behaviour.encryption
      ? {
          credential_response_encryption: {
            alg_values_supported: ['ECDH-ES'],
            enc_values_supported: ['A128GCM'],
            encryption_required: true,
          },
          credential_request_encryption: {
            jwks: { keys: [encryptionJwk] },
            enc_values_supported: ['A128GCM'],
            encryption_required: true,
          },
        }
      : {}),
    display: [{ name: 'OpenID Foundation Conformance Suite', locale: 'en' }],
    credential_configurations_supported: {
      [CONFIGURATION_ID]: {
        format: 'dc+sd-jwt',
        vct: PID_VCT,
        ...(behaviour.rar ? {} : { scope: SCOPE }),
        cryptographic_binding_methods_supported: ['jwk'],
        credential_signing_alg_values_supported: ['ES256'],
        proof_types_supported: proofTypes(),
        credential_metadata: { display: [{ name: 'Conformance PID', locale: 'en' }] },
      },
      [MDL_CONFIGURATION_ID]: {
        format: 'mso_mdoc',
        doctype: MDL_DOCTYPE,
        ...(behaviour.rar ? {} : { scope: MDL_CONFIGURATION_ID }),
        cryptographic_binding_methods_supported: ['cose_key'],
        credential_signing_alg_values_supported: [-7],
        proof_types_supported: proofTypes(),
        credential_metadata: { display: [{ name: 'Conformance mDL', locale: 'en' }] },
      },
    },
  });

  type Answer = { status: number; body: unknown; headers?: Record<string, string>; contentType?: string };
  const oauthError = (status: number, error: string, description: string, headers?: Record<string, string>) =>
    ({ status, body: { error, error_description: description }, ...(headers ? { headers } : {}) }) as Answer;

  /** The DPoP proof's key thumbprint, when a proof came (checked in detail by conditions.ts). */
  async function dpopJkt(req: IncomingMessage): Promise<string | undefined> {
    const proof = req.headers['dpop'];
    if (typeof proof !== 'string') return undefined;
    try {
      const header = JSON.parse(Buffer.from(proof.split('.')[0]!, 'base64url').toString('utf8'));
      return await calculateJwkThumbprint(header.jwk);
    } catch {
      return undefined;
    }
  }

  const dpopNonceOf = (req: IncomingMessage): string | undefined => {
    const proof = req.headers['dpop'];
    if (typeof proof !== 'string') return undefined;
    try {
      return decodeJwt(proof)['nonce'] as string | undefined;
    } catch {
      return undefined;
    }
  };

  /** AS endpoints: a DPoP proof without the current nonce gets use_dpop_nonce (RFC 9449 §8). */
  function asNonceError(req: IncomingMessage): Answer | undefined {
    if (!behaviour.haip || !behaviour.dpopNonce) return undefined;
    if (dpopNonceOf(req) === state.asDpopNonce) return undefined;
    return oauthError(400, 'use_dpop_nonce', 'Authorization server requires nonce in DPoP proof', {
      'DPoP-Nonce': state.asDpopNonce,
    });
  }

  const asNonceHeader = (): Record<string, string> =>
    behaviour.haip && behaviour.dpopNonce ? { 'DPoP-Nonce': state.asDpopNonce } : {};

  /** RS endpoints: the access token, and a DPoP nonce error (RFC 9449 §9) when the nonce is stale. */
  function resource(req: IncomingMessage): { token: string } | Answer {
    const authorization = req.headers.authorization ?? '';
    const [scheme, token] = authorization.split(' ');
    if (!token || !state.accessTokens.has(token))
      return oauthError(401, 'invalid_token', 'unknown access token');
    const bound = state.accessTokens.get(token)!;
    if (bound.dpopJkt && scheme?.toLowerCase() !== 'dpop')
      return oauthError(401, 'invalid_token', 'DPoP token');
    if (bound.dpopJkt && behaviour.dpopNonce && dpopNonceOf(req) !== state.rsDpopNonce) {
      // CreateResourceEndpointDpopErrorResponse, or ...AltSchemeCaseResponse for the case module.
      const scheme = behaviour.rsDpopSchemeCase ? 'dPoP' : 'DPoP';
      return {
        status: 401,
        body: null,
        headers: {
          'WWW-Authenticate': `${scheme} error="use_dpop_nonce", error_description="Resource server requires nonce in DPoP proof"`,
          'DPoP-Nonce': state.rsDpopNonce,
        },
      };
    }
    return { token };
  }

  const rsNonceHeader = (): Record<string, string> =>
    behaviour.haip && behaviour.dpopNonce ? { 'DPoP-Nonce': state.rsDpopNonce } : {};

  function authorizationRedirect(params: Record<string, string>): Answer {
    const code = randomBytes(24).toString('base64url');
    const redirect = new URL(params['redirect_uri']!);
    redirect.searchParams.set('code', code);
    const mode = behaviour.authorizationResponse;
    if (mode === 'invalid-state') redirect.searchParams.set('state', `${params['state'] ?? ''}1`);
    else if (mode !== 'no-state' && params['state'] !== undefined)
      redirect.searchParams.set('state', params['state']);
    if (mode === 'invalid-iss') redirect.searchParams.set('iss', 'https://www.example.com/');
    else if (mode !== 'no-iss') redirect.searchParams.set('iss', asMetadata().issuer);
    state.codes.set(code, { params, dpopJkt: undefined, used: false, createdAt: Date.now() });
    state.authorizationResponse = redirect;
    return { status: 302, body: null, headers: { location: redirect.toString() } };
  }

  async function credentialResponse(body: Json, token: string): Promise<Answer> {
    const proofs: string[] = Array.isArray(body?.proofs?.jwt) ? body.proofs.jwt : [];
    const keys: JWK[] = [];
    for (const proof of proofs) {
      try {
        const header = JSON.parse(Buffer.from(proof.split('.')[0]!, 'base64url').toString('utf8'));
        if (header.jwk) keys.push(header.jwk);
      } catch {
        // conditions.ts reports malformed proofs
      }
    }
    if (keys.length === 0) return oauthError(400, 'invalid_proof', 'no jwt proof with a jwk');
    const nonces = proofs.map((p) => {
      try {
        return decodeJwt(p)['nonce'];
      } catch {
        return undefined;
      }
    });
    if (!nonces.every((n) => typeof n === 'string' && state.cNonces.includes(n))) {
      return oauthError(400, 'invalid_nonce', 'the proof does not carry a c_nonce of this issuer');
    }
    const wanted = behaviour.batchSize ? keys : keys.slice(0, 1);
    const credentials: Array<{ credential: string }> = [];
    for (const jwk of wanted) {
      const holder = { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } as JWK;
      state.issuedKeys.push(holder);
      credentials.push({
        credential:
          behaviour.format === 'mso_mdoc'
            ? await issueMdoc(identity, { deviceJwk: holder as never })
            : await issueSdJwtVc(identity, { holderJwk: holder as never }),
      });
    }
    if (behaviour.reverseOrder) credentials.reverse();
    if (behaviour.deferred) {
      const transactionId = randomBytes(16).toString('base64url');
      state.transactions.set(transactionId, credentials);
      return { status: 202, body: { transaction_id: transactionId, interval: 1 }, headers: rsNonceHeader() };
    }
    const notificationId = randomUUID();
    if (behaviour.notifications) state.notificationIds.push(notificationId);
    void token;
    return {
      status: 200,
      body: { credentials, ...(behaviour.notifications ? { notification_id: notificationId } : {}) },
      headers: rsNonceHeader(),
    };
  }

  async function route(req: IncomingMessage, raw: string, url: URL, seen: SeenRequest): Promise<Answer> {
    const path = url.pathname;
    const form = seen.form;
    if (req.method === 'GET' && path === `/.well-known/openid-credential-issuer${base}`) {
      seen.endpoint = 'credential_issuer_metadata';
      return { status: 200, body: issuerMetadata() };
    }
    if (req.method === 'GET' && path === `/.well-known/oauth-authorization-server${base}`) {
      seen.endpoint = 'oauth_authorization_server_metadata';
      return { status: 200, body: asMetadata() };
    }
    if (path.startsWith('/.well-known/')) {
      seen.endpoint = 'unexpected_well_known';
      return { status: 404, body: { error: 'not_found' } };
    }
    if (!path.startsWith(`${base}/`)) return { status: 404, body: { error: 'not_found' } };
    const endpoint = path.slice(base.length + 1);
    seen.endpoint = endpoint.startsWith('offers/') ? 'credential_offer' : endpoint;
    switch (seen.endpoint) {
      case 'credential_offer': {
        const offer = offers.get(endpoint.slice('offers/'.length));
        return offer ? { status: 200, body: offer } : { status: 404, body: { error: 'not_found' } };
      }
      case 'challenge': {
        const challenge = randomBytes(16).toString('base64url');
        state.attestationChallenges.push(challenge);
        return {
          status: 200,
          body: { attestation_challenge: challenge },
          headers: { 'Cache-Control': 'no-store' },
        };
      }
      case 'par': {
        if (req.method !== 'POST') return oauthError(405, 'invalid_request', 'POST only');
        const nonceError = asNonceError(req);
        if (nonceError) return nonceError;
        if (form['request_uri']) return oauthError(400, 'invalid_request', 'request_uri in a PAR request');
        const requestUri = `urn:ietf:params:oauth:request_uri:${randomBytes(16).toString('base64url')}`;
        state.pushed.set(requestUri, { params: form, dpopJkt: await dpopJkt(req) });
        return { status: 201, body: { request_uri: requestUri, expires_in: 60 }, headers: asNonceHeader() };
      }
      case 'authorize': {
        const query = seen.query;
        let params = query;
        if (query['request_uri']) {
          const pushed = state.pushed.get(query['request_uri']);
          if (!pushed) return oauthError(400, 'invalid_request_uri', 'unknown request_uri');
          params = { ...pushed.params };
          const code = authorizationRedirect(params);
          const codeValue = new URL(code.headers!['location']!).searchParams.get('code')!;
          state.codes.get(codeValue)!.dpopJkt = pushed.dpopJkt;
          return code;
        }
        if (behaviour.haip) return oauthError(400, 'invalid_request', 'PAR is required');
        return authorizationRedirect(params);
      }
      case 'token': {
        if (req.method !== 'POST') return oauthError(405, 'invalid_request', 'POST only');
        if (behaviour.authorizationResponse) {
          // AbstractFAPI2SPFinalClientExpectNothingAfterAuthorizationResponse: a failure in itself.
          return oauthError(400, 'invalid_request', 'the client must not call the token endpoint');
        }
        const nonceError = asNonceError(req);
        if (nonceError) return nonceError;
        const jkt = await dpopJkt(req);
        const grantType = form['grant_type'];
        // VCIAddCredentialDataToAuthorizationDetailsForTokenEndpointResponse: credential_identifiers
        // (`<configuration id>:<uuid>`) only for a request that carried authorization_details (RAR);
        // a scope request, and the pre-authorized code in the scope variant, get none.
        let withDetails = false;
        if (grantType === 'urn:ietf:params:oauth:grant-type:pre-authorized_code') {
          if (form['pre-authorized_code'] !== state.preAuthorizedCode)
            return oauthError(400, 'invalid_grant', 'unknown pre-authorized code');
          if (form['tx_code'] !== TX_CODE) return oauthError(400, 'invalid_grant', 'wrong tx_code');
          withDetails = behaviour.rar === true;
        } else if (grantType === 'authorization_code') {
          const code = state.codes.get(form['code'] ?? '');
          if (!code || code.used) return oauthError(400, 'invalid_grant', 'unknown or used code');
          if (s256(form['code_verifier'] ?? '') !== code.params['code_challenge'])
            return oauthError(400, 'invalid_grant', 'PKCE');
          if (form['redirect_uri'] !== code.params['redirect_uri'])
            return oauthError(400, 'invalid_grant', 'redirect_uri');
          if (code.dpopJkt && code.dpopJkt !== jkt) return oauthError(400, 'invalid_grant', 'DPoP key');
          code.used = true;
          withDetails = code.params['authorization_details'] !== undefined;
        } else {
          return oauthError(400, 'unsupported_grant_type', String(grantType));
        }
        withDetails &&= behaviour.authorizationDetailsInTokenResponse;
        const credentialIdentifiers = withDetails ? [`${configurationIdOf(behaviour)}:${randomUUID()}`] : [];
        const accessToken = randomBytes(32).toString('base64url');
        const dpopBound = behaviour.haip && jkt !== undefined;
        state.accessTokens.set(accessToken, { dpopJkt: dpopBound ? jkt : undefined, credentialIdentifiers });
        const tokenType = dpopBound ? 'DPoP' : 'Bearer';
        // SetTokenResponseTokenTypeToInvertedCase: every letter's case swapped.
        const invert = (s: string) =>
          [...s].map((ch) => (ch === ch.toUpperCase() ? ch.toLowerCase() : ch.toUpperCase())).join('');
        return {
          status: 200,
          body: {
            access_token: accessToken,
            token_type: behaviour.tokenTypeInvertedCase ? invert(tokenType) : tokenType,
            ...(behaviour.tokenWithoutExpiresIn ? {} : { expires_in: 300 }),
            ...(withDetails
              ? {
                  authorization_details: [
                    {
                      type: 'openid_credential',
                      credential_configuration_id: configurationIdOf(behaviour),
                      credential_identifiers: credentialIdentifiers,
                    },
                  ],
                }
              : {}),
          },
          headers: { 'Cache-Control': 'no-store', ...asNonceHeader() },
        };
      }
      case 'nonce': {
        const cNonce = randomBytes(16).toString('base64url');
        state.cNonces.push(cNonce);
        state.lastCNonce = cNonce;
        return {
          status: 200,
          body: { c_nonce: cNonce },
          headers: { 'Cache-Control': 'no-store', ...rsNonceHeader() },
        };
      }
      case 'credential': {
        const checked = resource(req);
        if ('status' in checked) return checked;
        let body: Json;
        const encrypted = (req.headers['content-type'] ?? '').startsWith('application/jwt');
        if (encrypted) {
          const { plaintext } = await compactDecrypt(raw.trim(), encryptionKeys.privateKey);
          body = JSON.parse(new TextDecoder().decode(plaintext));
          seen.json = body;
        } else {
          body = seen.json;
        }
        if (behaviour.encryption && !encrypted)
          return oauthError(400, 'invalid_encryption_parameters', 'encrypt it');
        const answer = await credentialResponse(body, checked.token);
        const wanted = body?.credential_response_encryption;
        if (behaviour.encryption && wanted?.jwk && answer.status < 300) {
          const jwe = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(answer.body)))
            .setProtectedHeader({ alg: 'ECDH-ES', enc: wanted.enc ?? 'A128GCM' })
            .encrypt(await importJWK(wanted.jwk, 'ECDH-ES'));
          return { ...answer, body: jwe, contentType: 'application/jwt' };
        }
        return answer;
      }
      case 'deferred_credential': {
        const checked = resource(req);
        if ('status' in checked) return checked;
        const encrypted = (req.headers['content-type'] ?? '').startsWith('application/jwt');
        let body: Json = seen.json;
        if (encrypted) {
          const { plaintext } = await compactDecrypt(raw.trim(), encryptionKeys.privateKey);
          body = JSON.parse(new TextDecoder().decode(plaintext));
          seen.json = body;
        }
        const credentials = state.transactions.get(body?.transaction_id);
        if (!credentials) return oauthError(400, 'invalid_transaction_id', 'unknown transaction_id');
        const notificationId = randomUUID();
        if (behaviour.notifications) state.notificationIds.push(notificationId);
        const answer: Answer = {
          status: 200,
          body: { credentials, ...(behaviour.notifications ? { notification_id: notificationId } : {}) },
          headers: rsNonceHeader(),
        };
        const wanted = body?.credential_response_encryption;
        if (behaviour.encryption && wanted?.jwk) {
          const jwe = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(answer.body)))
            .setProtectedHeader({ alg: 'ECDH-ES', enc: wanted.enc ?? 'A128GCM' })
            .encrypt(await importJWK(wanted.jwk, 'ECDH-ES'));
          return { ...answer, body: jwe, contentType: 'application/jwt' };
        }
        return answer;
      }
      case 'notification': {
        const checked = resource(req);
        if ('status' in checked) return checked;
        if (!state.notificationIds.includes(seen.json?.notification_id))
          return oauthError(400, 'invalid_notification_id', 'unknown notification_id');
        return { status: 204, body: null, headers: rsNonceHeader() };
      }
      default:
        return { status: 404, body: { error: 'not_found' } };
    }
  }

  server.on('request', (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', origin);
      const contentType = req.headers['content-type'] ?? '';
      let json: Json;
      if (contentType.startsWith('application/json')) {
        try {
          json = JSON.parse(raw);
        } catch {
          json = undefined;
        }
      }
      const seen: SeenRequest = {
        endpoint: 'unknown',
        method: req.method ?? 'GET',
        url: `${origin}${req.url}`,
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: Object.fromEntries(
          Object.entries(req.headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)]])),
        ),
        body: raw,
        form: contentType.startsWith('application/x-www-form-urlencoded')
          ? Object.fromEntries(new URLSearchParams(raw))
          : {},
        json,
        tls: (req.socket as import('node:tls').TLSSocket).getProtocol?.() ?? null,
        status: 0,
        answer: undefined,
        at: Date.now(),
      };
      requests.push(seen);
      let answer: Answer;
      try {
        answer = await route(req, raw, url, seen);
      } catch (error) {
        answer = oauthError(400, 'invalid_request', error instanceof Error ? error.message : String(error));
      }
      seen.status = answer.status;
      seen.answer = answer.body;
      const headers: Record<string, string> = { ...(answer.headers ?? {}) };
      if (answer.body !== null && answer.body !== undefined) {
        headers['content-type'] = answer.contentType ?? 'application/json';
      }
      res.writeHead(answer.status, headers);
      res.end(
        answer.body === null || answer.body === undefined
          ? undefined
          : typeof answer.body === 'string'
            ? answer.body
            : JSON.stringify(answer.body),
      );
    });
  });

  const suite: SuiteIssuer = {
    origin,
    credentialIssuer,
    tlsCaPem: tlsCa.pem,
    identity,
    requests,
    get behaviour() {
      return behaviour;
    },
    get state() {
      return state;
    },
    encryptionJwk,
    asMetadata,
    issuerMetadata,
    reset(next) {
      behaviour = { ...DEFAULT_BEHAVIOUR, ...next };
      state = freshState();
      requests.length = 0;
    },
    createOffer({ grant, byReference }) {
      const grants: Json = {};
      if (grant === 'pre-authorized') {
        state.preAuthorizedCode = randomBytes(24).toString('base64url');
        grants['urn:ietf:params:oauth:grant-type:pre-authorized_code'] = {
          'pre-authorized_code': state.preAuthorizedCode,
          tx_code: { length: 6, input_mode: 'numeric', description: 'Use 123456' },
        };
      } else {
        // VCIGenerateIssuerState
        state.issuerState = randomBytes(24).toString('base64url');
        grants['authorization_code'] = { issuer_state: state.issuerState };
      }
      const offer = {
        credential_issuer: credentialIssuer,
        credential_configuration_ids: [configurationIdOf(behaviour)],
        grants,
      };
      if (!byReference) return new URLSearchParams({ credential_offer: JSON.stringify(offer) }).toString();
      const id = randomUUID();
      offers.set(id, offer);
      return new URLSearchParams({ credential_offer_uri: `${credentialIssuer}/offers/${id}` }).toString();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return suite;
}
