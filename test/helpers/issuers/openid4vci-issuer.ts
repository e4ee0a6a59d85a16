import { createHash, type JsonWebKey, randomBytes, randomUUID, X509Certificate } from 'node:crypto';
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
  decodeProtectedHeader,
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
  /**
   * HAIP 1.0 §4: authorization code through PAR only, PKCE S256, DPoP and
   * `scope`; the wallet authenticates with a Wallet Attestation at PAR and token; key
   * attestations in every credential request.
   */
  haip?: HaipOptions;
}

export interface HaipOptions {
  /** PEM certificates of the wallet providers whose attestations this issuer trusts (its trust list). */
  walletProviders: string;
  /** `jwt` proofs carrying a key attestation (default), or one `attestation` proof. */
  proofType?: 'jwt' | 'attestation';
  /** key_attestations_required.key_storage: the attack resistance the issuer demands. */
  keyStorage?: string[];
}

/** What the issuer saw of one Wallet Attestation and its proof of possession. */
export interface SeenAttestation {
  endpoint: 'par' | 'token';
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  pop: Record<string, unknown>;
  /** The raw request, for replay tests. */
  request: { headers: Record<string, string>; body: string };
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
  /** HAIP mode: every Wallet Attestation accepted, and every key attestation (header, payload). */
  attestations: SeenAttestation[];
  keyAttestations: Array<{ header: Record<string, unknown>; payload: Record<string, unknown> }>;
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
  /** Moves the clock by which the issuer judges Wallet Attestations (expiry tests). */
  setAttestationClockSkew(seconds: number): void;
  /** An access token for these configurations, DPoP-bound to the key (tests of the credential endpoint alone). */
  mintAccessToken(configurationIds: string[], dpopJwk: JsonWebKey): Promise<string>;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

function didKeyJwk(didUrl: string): Jwk {
  const did = didUrl.split('#')[0]!;
  const bytes = base58btc.decode(did.slice('did:key:'.length));
  if (bytes[0] !== 0xed || bytes[1] !== 0x01) throw new Error('only Ed25519 did:key');
  return { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(bytes.slice(2)).toString('base64url') };
}

function certificatesOf(pem: string): X509Certificate[] {
  return (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map(
    (block) => new X509Certificate(block),
  );
}

/**
 * The leaf of an `x5c` chain when every certificate is valid now, each is signed by the next
 * (a CA), and the last is, or is signed by, a trusted wallet provider certificate.
 */
function walletProviderLeaf(
  x5c: string[],
  anchors: X509Certificate[],
  now: Date,
): X509Certificate | undefined {
  let chain: X509Certificate[];
  try {
    chain = x5c.map((der) => new X509Certificate(Buffer.from(der, 'base64')));
  } catch {
    return undefined;
  }
  const valid = (c: X509Certificate) => new Date(c.validFrom) <= now && now <= new Date(c.validTo);
  if (chain.length === 0 || !chain.every(valid)) return undefined;
  for (let i = 0; i + 1 < chain.length; i++) {
    if (
      !chain[i + 1]!.ca ||
      !chain[i]!.checkIssued(chain[i + 1]!) ||
      !chain[i]!.verify(chain[i + 1]!.publicKey)
    ) {
      return undefined;
    }
  }
  const last = chain.at(-1)!;
  const trusted = anchors.some(
    (anchor) =>
      valid(anchor) &&
      (anchor.raw.equals(last.raw) ||
        (anchor.ca && last.checkIssued(anchor) && last.verify(anchor.publicKey))),
  );
  return trusted ? chain[0] : undefined;
}

export async function startTestIssuer(options: TestIssuerOptions = {}): Promise<TestIssuer> {
  // A name of its own: a process that trusts several test issuers looks CAs up by name.
  const tlsCa = await makeCertificate({ subject: `CN=Test Issuer TLS CA ${randomUUID()}`, ca: true });
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
    attestations: [],
    keyAttestations: [],
    errors: [],
  };
  const haip = options.haip;
  const now = () => new Date();
  // Wallet Attestations are judged by a clock the tests can move, so that an attestation can
  // expire while the DPoP proofs beside it stay fresh.
  let attestationSkewSeconds = 0;
  const attestationNow = () => new Date(Date.now() + attestationSkewSeconds * 1000);
  const walletProviders = haip ? certificatesOf(haip.walletProviders) : [];
  const popJtis = new Set<string>();
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
      if (signer.method === 'x5c') {
        // Wallet Attestations and key attestations: the chain must reach a trusted wallet provider.
        const leaf = walletProviderLeaf(signer.x5c, walletProviders, now());
        if (!leaf) return { verified: false };
        try {
          await compactVerify(compact, leaf.publicKey, { algorithms: [signer.alg] });
          return { verified: true, signerJwk: leaf.publicKey.export({ format: 'jwk' }) as Jwk };
        } catch {
          return { verified: false };
        }
      }
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

  const keyAttestationsRequired = haip?.keyStorage ? { key_storage: haip.keyStorage } : {};
  const proofTypes = (algorithms: string[]) =>
    !haip
      ? { jwt: { proof_signing_alg_values_supported: algorithms } }
      : haip.proofType === 'attestation'
        ? {
            attestation: {
              proof_signing_alg_values_supported: ['ES256'],
              key_attestations_required: keyAttestationsRequired,
            },
          }
        : {
            jwt: {
              proof_signing_alg_values_supported: algorithms,
              key_attestations_required: keyAttestationsRequired,
            },
          };
  const display = (name: string) => ({
    display: [{ name, locale: 'en', description: `A ${name.toLowerCase()}` }],
  });
  const asMetadata: AuthorizationServerMetadata = authorizationServer.createAuthorizationServerMetadata({
    issuer: credentialIssuer,
    token_endpoint: `${credentialIssuer}/token`,
    authorization_endpoint: `${credentialIssuer}/authorize`,
    pushed_authorization_request_endpoint: `${credentialIssuer}/par`,
    require_pushed_authorization_requests: options.requirePar === true || haip !== undefined,
    jwks_uri: `${credentialIssuer}/jwks`,
    code_challenge_methods_supported: [PkceCodeChallengeMethod.S256],
    grant_types_supported: haip
      ? [authorizationCodeGrantIdentifier]
      : [authorizationCodeGrantIdentifier, preAuthorizedCodeGrantIdentifier],
    'pre-authorized_grant_anonymous_access_supported': !haip,
    authorization_response_iss_parameter_supported: true,
    ...(options.requireDpop || haip ? { dpop_signing_alg_values_supported: ['ES256'] } : {}),
    ...(haip ? { token_endpoint_auth_methods_supported: ['attest_jwt_client_auth'] } : {}),
  });
  const requireDpop = options.requireDpop === true || haip !== undefined;
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
  const codes = new Map<
    string,
    {
      codeChallenge: string;
      redirectUri: string;
      configurationIds: string[];
      /** HAIP: the client and DPoP key the pushed request was authenticated with. */
      clientId?: string;
      dpopJkt?: string;
    }
  >();
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

  /**
   * A Wallet Attestation the library verified (signature by a trusted provider, expiry, PoP
   * audience and signature): its PoP is taken once (RFC 9449-style replay protection), and
   * what it said is kept for the tests.
   */
  async function acceptAttestation(
    endpoint: SeenAttestation['endpoint'],
    req: import('node:http').IncomingMessage,
    raw: string,
    attestation: { clientAttestationJwt: string; clientAttestationPopJwt: string },
  ) {
    await authorizationServer.verifyClientAttestation({
      authorizationServer: asMetadata.issuer,
      ...attestation,
      now: attestationNow(),
    });
    const pop = decodeJwt(attestation.clientAttestationPopJwt);
    if (typeof pop.jti !== 'string' || popJtis.has(pop.jti)) {
      throw new Oauth2ServerErrorResponseError(
        { error: 'invalid_client', error_description: 'the client attestation PoP was used before' },
        { status: 401 },
      );
    }
    popJtis.add(pop.jti);
    events.attestations.push({
      endpoint,
      header: decodeProtectedHeader(attestation.clientAttestationJwt) as Record<string, unknown>,
      payload: decodeJwt(attestation.clientAttestationJwt) as Record<string, unknown>,
      pop: pop as Record<string, unknown>,
      request: {
        headers: Object.fromEntries(
          Object.entries(req.headers).flatMap(([k, v]) => (typeof v === 'string' ? [[k, v]] : [])),
        ),
        body: raw,
      },
    });
  }

  async function tokenEndpoint(req: import('node:http').IncomingMessage, form: Json, raw: string) {
    const request = requestLike(req);
    const parsed = authorizationServer.parseAccessTokenRequest({ accessTokenRequest: form, request });
    const record = {
      grantType: String(form['grant_type']),
      ok: false,
      dpop: parsed.dpop !== undefined,
      txCodeGiven: typeof form['tx_code'] === 'string',
    } as TestIssuerEvents['tokenRequests'][number];
    events.tokenRequests.push(record);
    if (requireDpop) {
      const nonce = parsed.dpop?.jwt ? decodeJwt(parsed.dpop.jwt)['nonce'] : undefined;
      if (typeof nonce !== 'string' || !dpopNonces.has(nonce)) {
        const fresh = randomUUID();
        dpopNonces.add(fresh);
        record.error = 'use_dpop_nonce';
        return { status: 400, body: { error: 'use_dpop_nonce' }, headers: { 'dpop-nonce': fresh } };
      }
    }
    const dpop = { required: requireDpop, allowedSigningAlgs: ['ES256'], ...parsed.dpop };
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
        dpop: { ...dpop, ...(code.dpopJkt ? { expectedJwkThumbprint: code.dpopJkt } : {}) },
        ...(haip
          ? {
              clientAttestation: {
                ...parsed.clientAttestation,
                required: true,
                ensureConfirmationKeyMatchesDpopKey: true,
                ...(code.clientId ? { expectedClientId: code.clientId } : {}),
              },
              now: now(),
            }
          : {}),
      });
      if (haip) await acceptAttestation('token', req, raw, parsed.clientAttestation!);
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
      allowedAuthenticationSchemes: requireDpop
        ? [SupportedAuthenticationScheme.DPoP]
        : [SupportedAuthenticationScheme.DPoP, SupportedAuthenticationScheme.Bearer],
    });
    return {
      dpop: verified.dpop !== undefined,
      configurationIds: String(verified.tokenPayload.scope ?? '').split(' '),
    };
  }

  const invalidProof = (description: string) =>
    new Oauth2ServerErrorResponseError({ error: 'invalid_proof', error_description: description });

  /** A c_nonce this issuer gave and nobody used yet. */
  function freshNonce(jwt: string): string {
    const nonce = decodeJwt(jwt)['nonce'];
    if (typeof nonce !== 'string' || !cNonces.has(nonce)) {
      throw new Oauth2ServerErrorResponseError({
        error: 'invalid_nonce',
        error_description: 'unknown c_nonce',
      });
    }
    return nonce;
  }

  /**
   * HAIP: the key attestation is OpenID4VCI 1.0's (`typ` key-attestation+jwt, `exp`), carries
   * the request's c_nonce, and meets the demanded key storage. Its signature and x5c chain were
   * checked by the library through verifyJwt above.
   */
  function checkKeyAttestation(jwt: string, nonce: string) {
    const header = decodeProtectedHeader(jwt) as Record<string, unknown>;
    const payload = decodeJwt(jwt) as Record<string, unknown>;
    events.keyAttestations.push({ header, payload });
    if (header['typ'] !== 'key-attestation+jwt')
      throw invalidProof(`key attestation typ ${String(header['typ'])}`);
    if (payload['nonce'] !== nonce) throw invalidProof('the key attestation does not carry the c_nonce');
    if (typeof payload['exp'] !== 'number') throw invalidProof('the key attestation has no exp');
    const storage = payload['key_storage'];
    if (
      haip?.keyStorage &&
      !(Array.isArray(storage) && storage.some((level) => haip.keyStorage!.includes(level)))
    ) {
      throw invalidProof('the key storage is not attested at a level this issuer accepts');
    }
  }

  /**
   * The holder keys of a credential request: one per jwt proof, each with a fresh c_nonce. In
   * HAIP mode every jwt proof carries the same key attestation, which names every proof's key
   * (the library checks each proof's key is among its attested_keys); or the request is one
   * `attestation` proof, whose attested keys are the holders.
   */
  async function holdersOf(
    proofs: Json | undefined,
    record: TestIssuerEvents['credentialRequests'][number],
  ): Promise<Array<Jwk | string>> {
    if (haip?.proofType === 'attestation') {
      const attestations = proofs?.['attestation'];
      if (!Array.isArray(attestations) || attestations.length !== 1) {
        throw invalidProof('one attestation proof is required');
      }
      const keyAttestationJwt = String(attestations[0]);
      const nonce = freshNonce(keyAttestationJwt);
      const verified = await issuer.verifyCredentialRequestAttestationProof({
        issuerMetadata,
        keyAttestationJwt,
        expectedNonce: nonce,
        now: now(),
      });
      checkKeyAttestation(keyAttestationJwt, nonce);
      cNonces.delete(nonce);
      record.proofs = 1;
      const keys = verified.payload.attested_keys as Jwk[];
      if (keys.length > (options.batchSize ?? 1)) throw invalidProof(`${keys.length} attested keys`);
      return keys;
    }
    const jwts = (proofs?.['jwt'] as string[] | undefined) ?? [];
    record.proofs = jwts.length;
    if (jwts.length === 0 || jwts.length > (options.batchSize ?? 1))
      throw invalidProof(`${jwts.length} proofs`);
    const holders: Array<Jwk | string> = [];
    const keyAttestations = new Set<string>();
    for (const jwt of jwts) {
      const nonce = freshNonce(jwt);
      const proof = await issuer.verifyCredentialRequestJwtProof({
        issuerMetadata,
        jwt,
        expectedNonce: nonce,
        ...(haip ? { now: now() } : {}),
      });
      if (haip) {
        const keyAttestation = proof.header['key_attestation'];
        if (typeof keyAttestation !== 'string') throw invalidProof('a key attestation is required');
        checkKeyAttestation(keyAttestation, nonce);
        keyAttestations.add(keyAttestation);
      }
      holders.push(
        proof.signer.method === 'did'
          ? proof.signer.didUrl.split('#')[0]!
          : (proof.signer as { publicJwk: Jwk }).publicJwk,
      );
    }
    if (keyAttestations.size > 1) throw invalidProof('HAIP: one key attestation for every key of the batch');
    for (const nonce of jwts.map((jwt) => String(decodeJwt(jwt)['nonce']))) cNonces.delete(nonce);
    return holders;
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
    const holders = await holdersOf(parsed.proofs as Json | undefined, record);
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
    } else if (options.requirePar || haip) {
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
      ...(viaPar ? { clientId: String(params['client_id']) } : {}),
      ...(typeof params['dpop_jkt'] === 'string' ? { dpopJkt: params['dpop_jkt'] } : {}),
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
        const parsedPar = await authorizationServer.parsePushedAuthorizationRequest({
          authorizationRequest: form(),
          request: requestLike(req),
        });
        const authorizationRequest = parsedPar.authorizationRequest as Json;
        if (haip) {
          const verified = await authorizationServer.verifyPushedAuthorizationRequest({
            authorizationServerMetadata: asMetadata,
            authorizationRequest: parsedPar.authorizationRequest,
            request: requestLike(req),
            dpop: { required: true, allowedSigningAlgs: ['ES256'], ...parsedPar.dpop },
            clientAttestation: {
              ...parsedPar.clientAttestation,
              required: true,
              ensureConfirmationKeyMatchesDpopKey: true,
            },
            now: now(),
          });
          await acceptAttestation('par', req, raw, parsedPar.clientAttestation!);
          if (
            typeof authorizationRequest['scope'] !== 'string' ||
            authorizationRequest['authorization_details']
          ) {
            throw new Oauth2ServerErrorResponseError({
              error: 'invalid_request',
              error_description: 'HAIP: the credential types come as scope',
            });
          }
          authorizationRequest['dpop_jkt'] = verified.dpop!.jwkThumbprint;
        }
        const requestUri = `urn:ietf:params:oauth:request_uri:${randomUUID()}`;
        pushed.set(requestUri, authorizationRequest);
        return {
          status: 201,
          body: authorizationServer.createPushedAuthorizationResponse({ requestUri, expiresInSeconds: 60 })
            .pushedAuthorizationResponse,
        };
      }
      case `${path}/token`:
        return tokenEndpoint(req, form(), raw);
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
          ? { status: oauth.status ?? 400, body: oauth.errorResponse }
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
    setAttestationClockSkew(seconds) {
      attestationSkewSeconds = seconds;
    },
    async mintAccessToken(configurationIds, dpopJwk) {
      const response = await authorizationServer.createAccessTokenResponse({
        audience: credentialIssuer,
        authorizationServer: credentialIssuer,
        signer: { method: 'jwk', alg: 'ES256', publicJwk: signingJwk },
        subject: randomUUID(),
        expiresInSeconds: 600,
        scope: configurationIds.join(' '),
        dpop: { jwk: dpopJwk as Jwk },
      });
      return response.access_token;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
