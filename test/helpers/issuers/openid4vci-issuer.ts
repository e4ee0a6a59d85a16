import { createHash, type JsonWebKey, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  type AuthorizationServerMetadata,
  authorizationCodeGrantIdentifier,
  type CallbackContext,
  clientAuthenticationNone,
  type HttpMethod,
  type Jwk,
  type JwtSigner,
  Oauth2AuthorizationServer,
  Oauth2ResourceServer,
  Oauth2ServerErrorResponseError,
  PkceCodeChallengeMethod,
  preAuthorizedCodeGrantIdentifier,
  SupportedAuthenticationScheme,
} from '@openid4vc/oauth2';
import { type IssuerMetadataResult, Openid4vciIssuer, Openid4vciVersion } from '@openid4vc/openid4vci';
import {
  CompactEncrypt,
  compactDecrypt,
  compactVerify,
  decodeJwt,
  exportJWK,
  generateKeyPair,
  importJWK,
  SignJWT,
} from 'jose';
import { base58btc } from 'multiformats/bases/base58';
import { makeCertificate, privateKeyPem } from '../../oid4vp/certificates.ts';
import { type IssuerIdentity, makeIssuerIdentity } from './issuer-ca.ts';
import { createJwtVcIssuer } from './jwt-vc-issuer.ts';
import { issueMdoc, MDL_DOCTYPE } from './mdoc-issuer.ts';
import { issueSdJwtVc, PID_VCT } from './sd-jwt-issuer.ts';

/**
 * An OpenID4VCI 1.0 credential issuer and its OAuth 2.0 authorization server for the tests, built
 * on the issuer side of @openid4vc/openid4vci and @openid4vc/oauth2 (metadata, offers, token
 * requests with pre-authorized code, tx_code, PKCE, PAR and DPoP, access tokens, nonces, credential
 * requests and their jwt proofs), on its own HTTPS server on 127.0.0.1 with its own test CA. It
 * shares no code with Coffer's src/. Credentials are made by the OpenWallet Foundation issuers of
 * the other test helpers (@sd-jwt/sd-jwt-vc, @owf/mdoc) and jose (VC-JWT).
 */

export interface TestIssuerOptions {
  /** Path of the credential issuer identifier (default /issuer): metadata at /.well-known/openid-credential-issuer/issuer. */
  path?: string;
  /** `require_pushed_authorization_requests`: the authorization endpoint takes only a PAR request_uri. */
  requirePar?: boolean;
  /** DPoP-bound tokens only (ES256), with a DPoP nonce demanded at the token endpoint (RFC 9449 §8). */
  requireDpop?: boolean;
  /** batch_credential_issuance.batch_size. */
  batchSize?: number;
  /** The credential endpoint answers 202 with a transaction; the deferred endpoint stays pending for this many polls. */
  deferred?: { pendingPolls: number; interval: number };
  /** proof_signing_alg_values_supported of pid-sd-jwt and mdl-mdoc (default ES256). */
  proofAlgorithms?: string[];
  logoUri?: string;
  /** Encrypted requests and responses required (ECDH-ES P-256, A128GCM), OpenID4VCI §10. */
  encryption?: boolean;
  /**
   * Signed metadata (§12.2.3) for a wallet that asks with Accept: application/jwt: signed by the
   * document signer (chains to the issuer CA) or by a self-signed certificate nobody trusts.
   */
  signedMetadata?: 'trusted' | 'untrusted';
}

export interface TestIssuerEvents {
  offerFetches: number;
  tokenRequests: Array<{
    grantType: string;
    ok: boolean;
    error?: string;
    dpop: boolean;
    txCodeGiven: boolean;
  }>;
  parRequests: number;
  authorizationRequests: Array<{
    viaPar: boolean;
    state: string | undefined;
    issuerState: string | undefined;
    codeChallengeMethod: string | undefined;
    redirectUri: string;
    clientId: string;
  }>;
  nonceRequests: number;
  credentialRequests: Array<{
    configurationId: string;
    proofs: number;
    ok: boolean;
    error?: string;
    dpop: boolean;
    /** The public JWK of each proof, or the DID its kid names. */
    holderKeys: Array<JsonWebKey | string>;
  }>;
  deferredPolls: number;
  /** Credential and deferred requests that came encrypted, and answers sent encrypted. */
  encryptedRequests: number;
  encryptedResponses: number;
  notifications: Array<{ notification_id: string; event: string }>;
  errors: string[];
}

export interface TestIssuer {
  credentialIssuer: string;
  tlsCaPem: string;
  identity: IssuerIdentity;
  createOffer(input: {
    configurationIds: string[];
    grant: 'pre-authorized' | 'authorization_code';
    txCode?: { value: string; length?: number; input_mode?: 'numeric' | 'text'; description?: string };
  }): Promise<{
    offer: Record<string, unknown>;
    offerUri: string;
    byValueQuery: string;
    byReferenceQuery: string;
    issuerState?: string;
    preAuthorizedCode?: string;
  }>;
  events: TestIssuerEvents;
  /** The holder keys bound into issued credentials, in order. */
  issuedHolderKeys: JsonWebKey[];
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

function didKeyJwk(didUrl: string): Jwk {
  const did = didUrl.split('#')[0]!;
  const bytes = base58btc.decode(did.slice('did:key:'.length));
  if (bytes[0] !== 0xed || bytes[1] !== 0x01) throw new Error('only Ed25519 did:key');
  return { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(bytes.slice(2)).toString('base64url') };
}

export async function startTestIssuer(options: TestIssuerOptions = {}): Promise<TestIssuer> {
  const tlsCa = await makeCertificate({ subject: 'CN=Test Issuer TLS CA', ca: true });
  const tls = await makeCertificate({ subject: 'CN=127.0.0.1', issuer: tlsCa, ipAddresses: ['127.0.0.1'] });
  const identity = await makeIssuerIdentity('Example Issuer');
  const untrusted = await makeCertificate({ subject: 'CN=Untrusted Metadata Signer, C=GB' });
  const jwtVcIssuer = await createJwtVcIssuer();
  const signing = await generateKeyPair('ES256', { extractable: true });
  const signingJwk = { ...(await exportJWK(signing.publicKey)), kid: 'as-1' } as Jwk;
  const encryptionKeys = await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true });
  const encryptionJwk = {
    ...(await exportJWK(encryptionKeys.publicKey)),
    kid: 'enc-1',
    alg: 'ECDH-ES',
    use: 'enc',
  } as Jwk;

  const events: TestIssuerEvents = {
    offerFetches: 0,
    tokenRequests: [],
    parRequests: 0,
    authorizationRequests: [],
    nonceRequests: 0,
    credentialRequests: [],
    deferredPolls: 0,
    encryptedRequests: 0,
    encryptedResponses: 0,
    notifications: [],
    errors: [],
  };
  const issuedHolderKeys: JsonWebKey[] = [];

  const server: Server = createServer({ key: await privateKeyPem(tls.keys.privateKey), cert: tls.pem });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const path = options.path ?? '/issuer';
  const credentialIssuer = `${origin}${path}`;

  const callbacks: Omit<CallbackContext, 'decryptJwe' | 'encryptJwe'> = {
    hash: (data, alg) => createHash(alg.replace('-', '')).update(data).digest(),
    generateRandom: (length) => randomBytes(length),
    clientAuthentication: clientAuthenticationNone({ clientId: 'test-issuer' }),
    // The resource server reads the authorization server's JWKS; it is this process's own.
    fetch: (async (input: string | URL | Request) =>
      String(input) === `${credentialIssuer}/jwks`
        ? Response.json({ keys: [signingJwk] }, { headers: { 'content-type': 'application/jwk-set+json' } })
        : new Response(null, { status: 404 })) as typeof fetch,
    signJwt: async (signer: JwtSigner, { header, payload }) => {
      if (signer.method === 'x5c') {
        const certified = [identity.signer, untrusted].find((c) => c.der === signer.x5c[0]);
        if (!certified) throw new Error('unknown certificate');
        const jwt = await new SignJWT(payload as Json)
          .setProtectedHeader(header as { alg: string })
          .sign(certified.keys.privateKey);
        return { jwt, signerJwk: (await exportJWK(certified.keys.publicKey)) as Jwk };
      }
      if (signer.method !== 'jwk' || signer.publicJwk.x !== signingJwk.x)
        throw new Error('unknown signing key');
      const jwt = await new SignJWT(payload as Json)
        .setProtectedHeader(header as { alg: string })
        .sign(signing.privateKey);
      return { jwt, signerJwk: signingJwk };
    },
    verifyJwt: async (signer, { compact }) => {
      const jwk =
        signer.method === 'jwk'
          ? signer.publicJwk
          : signer.method === 'did'
            ? didKeyJwk(signer.didUrl)
            : undefined;
      if (!jwk) return { verified: false };
      try {
        await compactVerify(compact, await importJWK(jwk as Json, signer.alg));
        return { verified: true, signerJwk: jwk };
      } catch {
        return { verified: false };
      }
    },
  };
  const issuer = new Openid4vciIssuer({ callbacks });
  const authorizationServer = new Oauth2AuthorizationServer({ callbacks });
  const resourceServer = new Oauth2ResourceServer({ callbacks });

  const proofTypes = (algorithms: string[]) => ({ jwt: { proof_signing_alg_values_supported: algorithms } });
  const display = (name: string) => ({
    display: [{ name, locale: 'en', description: `A ${name.toLowerCase()}` }],
  });
  const asMetadata: AuthorizationServerMetadata = authorizationServer.createAuthorizationServerMetadata({
    issuer: credentialIssuer,
    token_endpoint: `${credentialIssuer}/token`,
    authorization_endpoint: `${credentialIssuer}/authorize`,
    pushed_authorization_request_endpoint: `${credentialIssuer}/par`,
    require_pushed_authorization_requests: options.requirePar === true,
    jwks_uri: `${credentialIssuer}/jwks`,
    code_challenge_methods_supported: [PkceCodeChallengeMethod.S256],
    grant_types_supported: [authorizationCodeGrantIdentifier, preAuthorizedCodeGrantIdentifier],
    'pre-authorized_grant_anonymous_access_supported': true,
    authorization_response_iss_parameter_supported: true,
    ...(options.requireDpop ? { dpop_signing_alg_values_supported: ['ES256'] } : {}),
  });
  const credentialIssuerMetadata = issuer.createCredentialIssuerMetadata({
    credential_issuer: credentialIssuer,
    authorization_servers: [credentialIssuer],
    credential_endpoint: `${credentialIssuer}/credential`,
    nonce_endpoint: `${credentialIssuer}/nonce`,
    deferred_credential_endpoint: `${credentialIssuer}/deferred_credential`,
    notification_endpoint: `${credentialIssuer}/notification`,
    display: [
      {
        name: 'Example Issuer',
        locale: 'en',
        logo: { uri: options.logoUri ?? 'https://issuer.example/logo.png', alt_text: 'Example Issuer logo' },
      },
    ],
    ...(options.batchSize ? { batch_credential_issuance: { batch_size: options.batchSize } } : {}),
    ...(options.encryption
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
    credential_configurations_supported: {
      'pid-sd-jwt': {
        format: 'dc+sd-jwt',
        vct: PID_VCT,
        scope: 'pid',
        cryptographic_binding_methods_supported: ['jwk'],
        credential_signing_alg_values_supported: ['ES256'],
        proof_types_supported: proofTypes(options.proofAlgorithms ?? ['ES256']),
        credential_metadata: display('Personal ID'),
      },
      'mdl-mdoc': {
        format: 'mso_mdoc',
        doctype: MDL_DOCTYPE,
        scope: 'mdl',
        cryptographic_binding_methods_supported: ['cose_key'],
        credential_signing_alg_values_supported: [-7],
        proof_types_supported: proofTypes(options.proofAlgorithms ?? ['ES256']),
        credential_metadata: display('Driving licence'),
      },
      'degree-jwt-vc': {
        format: 'jwt_vc_json',
        credential_definition: { type: ['VerifiableCredential', 'UniversityDegreeCredential'] },
        scope: 'degree',
        cryptographic_binding_methods_supported: ['did:key'],
        credential_signing_alg_values_supported: ['ES256'],
        proof_types_supported: proofTypes(['EdDSA', 'ES256']),
        credential_metadata: display('University degree'),
      },
    },
  } as never);
  const issuerMetadata: IssuerMetadataResult = {
    credentialIssuer: credentialIssuerMetadata,
    authorizationServers: [asMetadata],
    originalDraftVersion: Openid4vciVersion.V1,
    knownCredentialConfigurations: issuer.getKnownCredentialConfigurationsSupported(credentialIssuerMetadata),
  };

  // State of the issuer: offers, codes, nonces, pending transactions.
  const offers = new Map<string, Json>();
  const preAuthorized = new Map<string, { txCode?: string; configurationIds: string[] }>();
  const issuerStates = new Map<string, string[]>();
  const pushed = new Map<string, Json>();
  const codes = new Map<string, { codeChallenge: string; redirectUri: string; configurationIds: string[] }>();
  const cNonces = new Set<string>();
  const dpopNonces = new Set<string>();
  const transactions = new Map<string, { polls: number; credentials: Array<{ credential: unknown }> }>();

  const requestLike = (req: import('node:http').IncomingMessage) => ({
    method: (req.method ?? 'GET') as HttpMethod,
    url: `${origin}${req.url}`,
    headers: new Headers(
      Object.entries(req.headers).flatMap(([k, v]) =>
        v === undefined ? [] : [[k, String(v)] as [string, string]],
      ),
    ),
  });

  async function issue(configurationId: string, holder: Jwk | string): Promise<unknown> {
    if (typeof holder === 'string') return jwtVcIssuer.issue({ subject: holder });
    const jwk = {
      kty: holder.kty,
      crv: holder.crv,
      x: holder.x,
      ...(holder.y ? { y: holder.y } : {}),
    } as JsonWebKey;
    issuedHolderKeys.push(jwk);
    return configurationId === 'mdl-mdoc'
      ? issueMdoc(identity, { deviceJwk: jwk })
      : issueSdJwtVc(identity, { holderJwk: jwk });
  }

  async function tokenEndpoint(req: import('node:http').IncomingMessage, form: Json) {
    const request = requestLike(req);
    const parsed = authorizationServer.parseAccessTokenRequest({ accessTokenRequest: form, request });
    const record = {
      grantType: String(form['grant_type']),
      ok: false,
      dpop: parsed.dpop !== undefined,
      txCodeGiven: typeof form['tx_code'] === 'string',
    } as TestIssuerEvents['tokenRequests'][number];
    events.tokenRequests.push(record);
    if (options.requireDpop) {
      const nonce = parsed.dpop?.jwt ? decodeJwt(parsed.dpop.jwt)['nonce'] : undefined;
      if (typeof nonce !== 'string' || !dpopNonces.has(nonce)) {
        const fresh = randomUUID();
        dpopNonces.add(fresh);
        record.error = 'use_dpop_nonce';
        return { status: 400, body: { error: 'use_dpop_nonce' }, headers: { 'dpop-nonce': fresh } };
      }
    }
    const dpop = { required: options.requireDpop === true, allowedSigningAlgs: ['ES256'], ...parsed.dpop };
    let configurationIds: string[];
    let subject: string;
    let verified: Awaited<ReturnType<typeof authorizationServer.verifyPreAuthorizedCodeAccessTokenRequest>>;
    if (parsed.grant.grantType === preAuthorizedCodeGrantIdentifier) {
      const offered = preAuthorized.get(parsed.grant.preAuthorizedCode);
      if (!offered)
        throw new Oauth2ServerErrorResponseError({
          error: 'invalid_grant',
          error_description: 'unknown code',
        });
      verified = await authorizationServer.verifyPreAuthorizedCodeAccessTokenRequest({
        authorizationServerMetadata: asMetadata,
        grant: parsed.grant,
        accessTokenRequest: parsed.accessTokenRequest,
        request,
        expectedPreAuthorizedCode: parsed.grant.preAuthorizedCode,
        ...(offered.txCode ? { expectedTxCode: offered.txCode } : {}),
        dpop,
      });
      preAuthorized.delete(parsed.grant.preAuthorizedCode);
      configurationIds = offered.configurationIds;
      subject = parsed.grant.preAuthorizedCode;
    } else if (parsed.grant.grantType === authorizationCodeGrantIdentifier) {
      const code = codes.get(parsed.grant.code);
      if (!code)
        throw new Oauth2ServerErrorResponseError({
          error: 'invalid_grant',
          error_description: 'unknown code',
        });
      codes.delete(parsed.grant.code);
      if (form['redirect_uri'] !== code.redirectUri) {
        throw new Oauth2ServerErrorResponseError({
          error: 'invalid_grant',
          error_description: 'redirect_uri differs',
        });
      }
      verified = await authorizationServer.verifyAuthorizationCodeAccessTokenRequest({
        authorizationServerMetadata: asMetadata,
        grant: parsed.grant,
        accessTokenRequest: parsed.accessTokenRequest,
        request,
        expectedCode: parsed.grant.code,
        pkce: {
          codeChallenge: code.codeChallenge,
          codeChallengeMethod: PkceCodeChallengeMethod.S256,
          ...(parsed.pkceCodeVerifier ? { codeVerifier: parsed.pkceCodeVerifier } : {}),
        },
        dpop,
      });
      configurationIds = code.configurationIds;
      subject = parsed.grant.code;
    } else {
      throw new Oauth2ServerErrorResponseError({ error: 'unsupported_grant_type' });
    }
    const body = await authorizationServer.createAccessTokenResponse({
      audience: credentialIssuer,
      authorizationServer: credentialIssuer,
      signer: { method: 'jwk', alg: 'ES256', publicJwk: signingJwk },
      subject,
      expiresInSeconds: 600,
      scope: configurationIds.join(' '),
      ...(verified.dpop ? { dpop: verified.dpop } : {}),
    });
    record.ok = true;
    return { status: 200, body };
  }

  async function authorizedResource(req: import('node:http').IncomingMessage) {
    const verified = await resourceServer.verifyResourceRequest({
      authorizationServers: [asMetadata],
      request: requestLike(req),
      resourceServer: credentialIssuer,
      allowedAuthenticationSchemes: options.requireDpop
        ? [SupportedAuthenticationScheme.DPoP]
        : [SupportedAuthenticationScheme.DPoP, SupportedAuthenticationScheme.Bearer],
    });
    return {
      dpop: verified.dpop !== undefined,
      configurationIds: String(verified.tokenPayload.scope ?? '').split(' '),
    };
  }

  async function credentialEndpoint(req: import('node:http').IncomingMessage, body: Json) {
    const { dpop, configurationIds } = await authorizedResource(req);
    const record = {
      configurationId: String(body['credential_configuration_id']),
      proofs: 0,
      ok: false,
      dpop,
      holderKeys: [],
    } as TestIssuerEvents['credentialRequests'][number];
    events.credentialRequests.push(record);
    const parsed = issuer.parseCredentialRequest({ issuerMetadata, credentialRequest: body });
    const configurationId = parsed.credentialConfigurationId;
    if (!configurationId || !configurationIds.includes(configurationId)) {
      throw new Oauth2ServerErrorResponseError({
        error: 'invalid_credential_request',
        error_description: 'not authorized for it',
      });
    }
    const jwts = parsed.proofs?.jwt ?? [];
    record.proofs = jwts.length;
    if (jwts.length === 0 || jwts.length > (options.batchSize ?? 1)) {
      throw new Oauth2ServerErrorResponseError({
        error: 'invalid_proof',
        error_description: `${jwts.length} proofs`,
      });
    }
    const holders: Array<Jwk | string> = [];
    for (const jwt of jwts) {
      const nonce = decodeJwt(jwt)['nonce'];
      if (typeof nonce !== 'string' || !cNonces.has(nonce)) {
        throw new Oauth2ServerErrorResponseError({
          error: 'invalid_nonce',
          error_description: 'unknown c_nonce',
        });
      }
      const proof = await issuer.verifyCredentialRequestJwtProof({
        issuerMetadata,
        jwt,
        expectedNonce: nonce,
      });
      holders.push(
        proof.signer.method === 'did'
          ? proof.signer.didUrl.split('#')[0]!
          : (proof.signer as { publicJwk: Jwk }).publicJwk,
      );
    }
    for (const nonce of jwts.map((jwt) => String(decodeJwt(jwt)['nonce']))) cNonces.delete(nonce);
    record.holderKeys = holders as Array<JsonWebKey | string>;
    const credentials = await Promise.all(
      holders.map(async (holder) => ({ credential: await issue(configurationId, holder) })),
    );
    record.ok = true;
    if (options.deferred) {
      const transactionId = randomUUID();
      transactions.set(transactionId, { polls: 0, credentials });
      return {
        status: 202,
        body: issuer.createCredentialResponse({
          credentialRequest: parsed,
          transactionId,
          interval: options.deferred.interval,
        }),
      };
    }
    return {
      status: 200,
      body: issuer.createCredentialResponse({
        credentialRequest: parsed,
        credentials: credentials as never,
        notificationId: randomUUID(),
      }),
    };
  }

  async function deferredEndpoint(req: import('node:http').IncomingMessage, body: Json) {
    await authorizedResource(req);
    events.deferredPolls++;
    const { transactionId } = issuer.parseDeferredCredentialRequest({
      deferredCredentialRequest: body,
    }) as unknown as { transactionId: string };
    const transaction = transactions.get(transactionId ?? String(body['transaction_id']));
    if (!transaction) throw new Oauth2ServerErrorResponseError({ error: 'invalid_transaction_id' });
    transaction.polls++;
    if (transaction.polls <= (options.deferred?.pendingPolls ?? 0)) {
      return {
        status: 202,
        body: issuer.createDeferredCredentialResponse({
          transactionId: String(body['transaction_id']),
          interval: options.deferred!.interval,
        }),
      };
    }
    transactions.delete(String(body['transaction_id']));
    // §9.2 allows notification_id beside credentials; the library's builder refuses it, so it is added here.
    return {
      status: 200,
      body: {
        ...issuer.createDeferredCredentialResponse({ credentials: transaction.credentials as never }),
        notification_id: randomUUID(),
      },
    };
  }

  async function authorizeEndpoint(url: URL) {
    let params: Json = Object.fromEntries(url.searchParams);
    const viaPar = typeof params['request_uri'] === 'string';
    if (viaPar) {
      const stored = pushed.get(String(params['request_uri']));
      pushed.delete(String(params['request_uri']));
      if (!stored) return { status: 400, body: { error: 'invalid_request_uri' } };
      params = stored;
    } else if (options.requirePar) {
      return { status: 400, body: { error: 'invalid_request', error_description: 'PAR is required' } };
    }
    events.authorizationRequests.push({
      viaPar,
      state: params['state'] as string | undefined,
      issuerState: params['issuer_state'] as string | undefined,
      codeChallengeMethod: params['code_challenge_method'] as string | undefined,
      redirectUri: String(params['redirect_uri']),
      clientId: String(params['client_id']),
    });
    if (
      params['code_challenge_method'] !== 'S256' ||
      typeof params['code_challenge'] !== 'string' ||
      !params['state']
    ) {
      return {
        status: 400,
        body: { error: 'invalid_request', error_description: 'PKCE S256 and state are required' },
      };
    }
    const configurationIds =
      issuerStates.get(String(params['issuer_state'])) ??
      String(params['scope'] ?? '')
        .split(' ')
        .map((s) => `${s === 'pid' ? 'pid-sd-jwt' : s === 'mdl' ? 'mdl-mdoc' : 'degree-jwt-vc'}`);
    const code = randomUUID();
    codes.set(code, {
      codeChallenge: String(params['code_challenge']),
      redirectUri: String(params['redirect_uri']),
      configurationIds,
    });
    // The person approves at once; the browser goes back to the wallet.
    const back = new URL(String(params['redirect_uri']));
    back.searchParams.set('code', code);
    back.searchParams.set('state', String(params['state']));
    back.searchParams.set('iss', credentialIssuer);
    return { status: 302, body: null, headers: { location: back.href } };
  }

  /**
   * A credential or deferred request: JSON, or with encryption a JWE to the issuer's key whose
   * answer goes back encrypted to the key in credential_response_encryption.
   */
  async function readEncrypted(req: import('node:http').IncomingMessage, raw: string): Promise<Json> {
    const encrypted = (req.headers['content-type'] ?? '').startsWith('application/jwt');
    if (options.encryption && !encrypted) {
      throw new Oauth2ServerErrorResponseError({
        error: 'invalid_encryption_parameters',
        error_description: 'encrypt the request',
      });
    }
    if (!encrypted) return raw ? (JSON.parse(raw) as Json) : {};
    events.encryptedRequests++;
    const { plaintext } = await compactDecrypt(raw.trim(), encryptionKeys.privateKey);
    const body = JSON.parse(new TextDecoder().decode(plaintext)) as Json;
    const wanted = body['credential_response_encryption'] as { jwk?: Json; enc?: string } | undefined;
    if (!wanted?.jwk || wanted.enc !== 'A128GCM') {
      throw new Oauth2ServerErrorResponseError({
        error: 'invalid_encryption_parameters',
        error_description: 'no response key',
      });
    }
    return body;
  }

  async function sealAnswer(body: Json, answer: { status: number; body: unknown }) {
    const wanted = body['credential_response_encryption'] as { jwk: Json; enc: string } | undefined;
    if (!options.encryption || !wanted) return answer;
    events.encryptedResponses++;
    const jwe = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(answer.body)))
      .setProtectedHeader({ alg: 'ECDH-ES', enc: wanted.enc })
      .encrypt(await importJWK(wanted.jwk, 'ECDH-ES'));
    return { status: answer.status, body: jwe, contentType: 'application/jwt' };
  }

  async function route(req: import('node:http').IncomingMessage, raw: string) {
    const url = new URL(req.url ?? '/', origin);
    const form = () => Object.fromEntries(new URLSearchParams(raw));
    const json = () => (raw ? (JSON.parse(raw) as Json) : {});
    const wellKnownPath = path === '/' ? '' : path;
    if (req.method === 'GET' && url.pathname === `/.well-known/openid-credential-issuer${wellKnownPath}`) {
      if (options.signedMetadata && (req.headers.accept ?? '').includes('application/jwt')) {
        const signer = options.signedMetadata === 'trusted' ? identity.signer : untrusted;
        const jwt = await issuer.createSignedCredentialIssuerMetadataJwt({
          credentialIssuerMetadata,
          signer: { method: 'x5c', x5c: [signer.der], alg: 'ES256' },
          issuer: credentialIssuer,
        });
        return { status: 200, body: jwt, contentType: 'application/jwt' };
      }
      return { status: 200, body: credentialIssuerMetadata };
    }
    if (req.method === 'GET' && url.pathname === `/.well-known/oauth-authorization-server${wellKnownPath}`) {
      return { status: 200, body: asMetadata };
    }
    if (req.method === 'GET' && url.pathname === `${path}/jwks`)
      return { status: 200, body: { keys: [signingJwk] } };
    if (req.method === 'GET' && url.pathname.startsWith(`${path}/offers/`)) {
      const offer = offers.get(url.pathname.slice(`${path}/offers/`.length));
      if (!offer) return { status: 404, body: { error: 'not_found' } };
      events.offerFetches++;
      return { status: 200, body: offer };
    }
    if (req.method === 'GET' && url.pathname === `${path}/authorize`) return authorizeEndpoint(url);
    if (req.method !== 'POST') return { status: 404, body: { error: 'not_found' } };
    switch (url.pathname) {
      case `${path}/par`: {
        events.parRequests++;
        const { authorizationRequest } = await authorizationServer.parsePushedAuthorizationRequest({
          authorizationRequest: form(),
          request: requestLike(req),
        });
        const requestUri = `urn:ietf:params:oauth:request_uri:${randomUUID()}`;
        pushed.set(requestUri, authorizationRequest as Json);
        return {
          status: 201,
          body: authorizationServer.createPushedAuthorizationResponse({ requestUri, expiresInSeconds: 60 })
            .pushedAuthorizationResponse,
        };
      }
      case `${path}/token`:
        return tokenEndpoint(req, form());
      case `${path}/nonce`: {
        events.nonceRequests++;
        const cNonce = randomUUID();
        cNonces.add(cNonce);
        return { status: 200, body: issuer.createNonceResponse({ cNonce, cNonceExpiresIn: 300 }) };
      }
      case `${path}/credential`: {
        const body = await readEncrypted(req, raw);
        return sealAnswer(body, await credentialEndpoint(req, withoutEncryption(body)));
      }
      case `${path}/deferred_credential`: {
        const body = await readEncrypted(req, raw);
        return sealAnswer(body, await deferredEndpoint(req, withoutEncryption(body)));
      }
      case `${path}/notification`: {
        await authorizedResource(req);
        const body = json();
        events.notifications.push({
          notification_id: String(body['notification_id']),
          event: String(body['event']),
        });
        return { status: 204, body: null };
      }
      default:
        return { status: 404, body: { error: 'not_found' } };
    }
  }

  const withoutEncryption = ({ credential_response_encryption: _e, ...rest }: Json) => rest;

  server.on('request', (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      let answer: { status: number; body: unknown; headers?: Record<string, string>; contentType?: string };
      try {
        answer = await route(req, Buffer.concat(chunks).toString('utf8'));
      } catch (error) {
        const oauth = error as { errorResponse?: Json; status?: number; message?: string };
        events.errors.push(`${req.method} ${req.url}: ${oauth.message ?? String(error)}`);
        const last = events.credentialRequests.at(-1);
        if (req.url?.endsWith('/credential') && last && !last.ok) last.error = oauth.message;
        const lastToken = events.tokenRequests.at(-1);
        if (req.url?.endsWith('/token') && lastToken && !lastToken.ok) lastToken.error = oauth.message;
        answer = oauth.errorResponse
          ? { status: 400, body: oauth.errorResponse }
          : (error as { constructor?: { name?: string } }).constructor?.name ===
              'Oauth2ResourceUnauthorizedError'
            ? { status: 401, body: { error: 'invalid_token' } }
            : {
                status: 400,
                body: { error: 'invalid_request', error_description: oauth.message?.slice(0, 200) },
              };
      }
      res.writeHead(answer.status, {
        ...(answer.body === null ? {} : { 'content-type': answer.contentType ?? 'application/json' }),
        ...answer.headers,
      });
      res.end(
        answer.body === null
          ? undefined
          : typeof answer.body === 'string'
            ? answer.body
            : JSON.stringify(answer.body),
      );
    });
  });

  return {
    credentialIssuer,
    tlsCaPem: tlsCa.pem,
    identity,
    events,
    issuedHolderKeys,
    async createOffer(input) {
      const id = randomUUID();
      const preAuthorizedCode =
        input.grant === 'pre-authorized' ? randomBytes(16).toString('base64url') : undefined;
      const issuerState = input.grant === 'authorization_code' ? randomUUID() : undefined;
      if (preAuthorizedCode) {
        preAuthorized.set(preAuthorizedCode, {
          configurationIds: input.configurationIds,
          ...(input.txCode ? { txCode: input.txCode.value } : {}),
        });
      }
      if (issuerState) issuerStates.set(issuerState, input.configurationIds);
      const { txCode } = input;
      const created = await issuer.createCredentialOffer({
        issuerMetadata,
        credentialConfigurationIds: input.configurationIds,
        grants: preAuthorizedCode
          ? {
              [preAuthorizedCodeGrantIdentifier]: {
                'pre-authorized_code': preAuthorizedCode,
                ...(txCode
                  ? {
                      tx_code: {
                        ...(txCode.length ? { length: txCode.length } : {}),
                        ...(txCode.input_mode ? { input_mode: txCode.input_mode } : {}),
                        ...(txCode.description ? { description: txCode.description } : {}),
                      },
                    }
                  : {}),
              },
            }
          : { [authorizationCodeGrantIdentifier]: { issuer_state: issuerState! } },
      });
      const offer = created.credentialOfferObject as Json;
      offers.set(id, offer);
      const offerUri = `${credentialIssuer}/offers/${id}`;
      return {
        offer,
        offerUri,
        byValueQuery: new URLSearchParams({ credential_offer: JSON.stringify(offer) }).toString(),
        byReferenceQuery: new URLSearchParams({ credential_offer_uri: offerUri }).toString(),
        ...(issuerState ? { issuerState } : {}),
        ...(preAuthorizedCode ? { preAuthorizedCode } : {}),
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
