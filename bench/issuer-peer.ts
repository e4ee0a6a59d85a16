/**
 * The bare issuer that the issuance benchmark (bench/issuer.ts) sets beside Coffer's (issue 31):
 * an OpenID4VCI 1.0 credential issuer built directly on the issuer side of
 * @openid4vc/openid4vci and @openid4vc/oauth2 (Openid4vciIssuer, Oauth2AuthorizationServer,
 * Oauth2ResourceServer), every piece of state in memory (offers, pre-authorized codes, c_nonces),
 * signing with the OpenWallet Foundation libraries the tests use (@sd-jwt/sd-jwt-vc, @owf/mdoc,
 * jose) and, for ldp_vc, the stock Digital Bazaar bbs-2023 stack. It runs as its own process, on
 * plain HTTP on 127.0.0.1, so that its CPU is measured apart from the load generator's; it prints
 * `listening <port>` when ready. It shares no code with Coffer's src/.
 *
 * Endpoints, as Coffer's: POST /offers (the tenant: configuration and claims, answers the offer
 * URI), GET /offers/{id}, POST /token (pre-authorized code), POST /nonce, POST /credential.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type CallbackContext,
  clientAuthenticationNone,
  type HttpMethod,
  type Jwk,
  type JwtSigner,
  Oauth2AuthorizationServer,
  Oauth2ErrorCodes,
  Oauth2ResourceServer,
  Oauth2ServerErrorResponseError,
  preAuthorizedCodeGrantIdentifier,
  SupportedAuthenticationScheme,
} from '@openid4vc/oauth2';
import { type IssuerMetadataResult, Openid4vciIssuer, Openid4vciVersion } from '@openid4vc/openid4vci';
import { compactVerify, decodeJwt, exportJWK, generateKeyPair, importJWK, SignJWT } from 'jose';
import { createStockIssuer, PERSON_CONTEXT, PERSON_CONTEXT_URL } from '../test/credentials/stock-issuer.ts';
import { makeIssuerIdentity } from '../test/helpers/issuers/issuer-ca.ts';
import { issueMdoc } from '../test/helpers/issuers/mdoc-issuer.ts';
import { issueSdJwtVc } from '../test/helpers/issuers/sd-jwt-issuer.ts';
import { PEER_DOCTYPE_NAME, PEER_ISSUER_ID, PEER_VCT } from './issuer-peer-names.ts';

// biome-ignore lint/suspicious/noExplicitAny: requests are arbitrary JSON
type Json = any;

const PEER_ISSUER = PEER_ISSUER_ID;
const PEER_DOCTYPE = PEER_DOCTYPE_NAME;

const identity = await makeIssuerIdentity('Bare Bench Issuer');
const stock = await createStockIssuer({ [PERSON_CONTEXT_URL]: PERSON_CONTEXT });
const signing = await generateKeyPair('ES256', { extractable: true });
const signingJwk = { ...(await exportJWK(signing.publicKey)), kid: 'as-1' } as Jwk;

const callbacks: Omit<CallbackContext, 'decryptJwe' | 'encryptJwe'> = {
  hash: (data, alg) => createHash(alg.replace('-', '')).update(data).digest(),
  generateRandom: (length) => randomBytes(length),
  clientAuthentication: clientAuthenticationNone({ clientId: 'bench-issuer' }),
  // The resource server reads the authorization server's JWKS: this process's own key.
  fetch: (async () => Response.json({ keys: [signingJwk] })) as unknown as typeof fetch,
  signJwt: async (_signer: JwtSigner, { header, payload }) => ({
    jwt: await new SignJWT(payload as Json)
      .setProtectedHeader(header as { alg: string })
      .sign(signing.privateKey),
    signerJwk: signingJwk,
  }),
  verifyJwt: async (signer, { compact }) => {
    if (signer.method !== 'jwk') return { verified: false };
    try {
      await compactVerify(compact, await importJWK(signer.publicJwk as Json, signer.alg));
      return { verified: true, signerJwk: signer.publicJwk };
    } catch {
      return { verified: false };
    }
  },
};
const issuer = new Openid4vciIssuer({ callbacks });
const authorizationServer = new Oauth2AuthorizationServer({ callbacks });
const resourceServer = new Oauth2ResourceServer({ callbacks });

const proofTypes = { jwt: { proof_signing_alg_values_supported: ['ES256'] } };
const asMetadata = authorizationServer.createAuthorizationServerMetadata({
  issuer: PEER_ISSUER,
  token_endpoint: `${PEER_ISSUER}/token`,
  jwks_uri: `${PEER_ISSUER}/jwks`,
  grant_types_supported: [preAuthorizedCodeGrantIdentifier],
  'pre-authorized_grant_anonymous_access_supported': true,
});
const credentialIssuerMetadata = issuer.createCredentialIssuerMetadata({
  credential_issuer: PEER_ISSUER,
  credential_endpoint: `${PEER_ISSUER}/credential`,
  nonce_endpoint: `${PEER_ISSUER}/nonce`,
  credential_configurations_supported: {
    'person-sd-jwt': {
      format: 'dc+sd-jwt',
      vct: PEER_VCT,
      cryptographic_binding_methods_supported: ['jwk'],
      credential_signing_alg_values_supported: ['ES256'],
      proof_types_supported: proofTypes,
    },
    'person-mdoc': {
      format: 'mso_mdoc',
      doctype: PEER_DOCTYPE,
      cryptographic_binding_methods_supported: ['cose_key'],
      credential_signing_alg_values_supported: [-7],
      proof_types_supported: proofTypes,
    },
    'person-ldp': {
      format: 'ldp_vc',
      credential_definition: {
        '@context': ['https://www.w3.org/ns/credentials/v2', PERSON_CONTEXT_URL],
        type: ['VerifiableCredential', 'PersonCredential'],
      },
      cryptographic_binding_methods_supported: ['did:jwk'],
      credential_signing_alg_values_supported: ['bbs-2023'],
      proof_types_supported: proofTypes,
    },
  },
} as never);
const issuerMetadata: IssuerMetadataResult = {
  credentialIssuer: credentialIssuerMetadata,
  authorizationServers: [asMetadata],
  originalDraftVersion: Openid4vciVersion.V1,
  knownCredentialConfigurations: issuer.getKnownCredentialConfigurationsSupported(credentialIssuerMetadata),
};

/** In-memory state: offers by id, pre-authorized codes, granted access, unused c_nonces. */
const offers = new Map<string, Json>();
const codes = new Map<string, { configurationId: string; claims: Json }>();
const grants = new Map<string, { configurationId: string; claims: Json }>();
const cNonces = new Set<string>();

const requestLike = (req: IncomingMessage) => ({
  method: (req.method ?? 'GET') as HttpMethod,
  url: `${PEER_ISSUER}${req.url}`,
  headers: new Headers(
    Object.entries(req.headers).flatMap(([k, v]) =>
      v === undefined ? [] : [[k, String(v)] as [string, string]],
    ),
  ),
});

async function sign(configurationId: string, claims: Json, holder: Jwk): Promise<unknown> {
  const jwk = { kty: holder.kty, crv: holder.crv, x: holder.x, y: holder.y } as Json;
  switch (configurationId) {
    case 'person-sd-jwt':
      return issueSdJwtVc(identity, {
        holderJwk: jwk,
        claims,
        disclosureFrame: { _sd: Object.keys(claims) },
        vct: PEER_VCT,
      });
    case 'person-mdoc':
      return issueMdoc(identity, { deviceJwk: jwk, doctype: PEER_DOCTYPE, namespaces: claims });
    default: {
      const did = `did:jwk:${Buffer.from(JSON.stringify(jwk)).toString('base64url')}`;
      return stock.issue(
        {
          '@context': ['https://www.w3.org/ns/credentials/v2', PERSON_CONTEXT_URL],
          id: `urn:uuid:${randomUUID()}`,
          type: ['VerifiableCredential', 'PersonCredential'],
          issuer: stock.did,
          validFrom: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          credentialSubject: { id: did, ...claims },
        },
        ['/issuer', '/type', '/validFrom'],
      );
    }
  }
}

async function route(req: IncomingMessage, raw: string): Promise<{ status: number; body: unknown }> {
  const url = new URL(req.url ?? '/', PEER_ISSUER);
  if (req.method === 'GET' && url.pathname.startsWith('/offers/')) {
    const offer = offers.get(url.pathname.slice('/offers/'.length));
    return offer ? { status: 200, body: offer } : { status: 404, body: { error: 'not_found' } };
  }
  switch (url.pathname) {
    case '/offers': {
      const { configuration_id: configurationId, claims } = JSON.parse(raw) as Json;
      const code = randomBytes(16).toString('base64url');
      codes.set(code, { configurationId, claims });
      const created = await issuer.createCredentialOffer({
        issuerMetadata,
        credentialConfigurationIds: [configurationId],
        grants: { [preAuthorizedCodeGrantIdentifier]: { 'pre-authorized_code': code } },
      });
      const id = randomUUID();
      offers.set(id, created.credentialOfferObject);
      return { status: 201, body: { id, credential_offer_uri: `${PEER_ISSUER}/offers/${id}` } };
    }
    case '/token': {
      const request = requestLike(req);
      const form = Object.fromEntries(new URLSearchParams(raw));
      const parsed = authorizationServer.parseAccessTokenRequest({ accessTokenRequest: form, request });
      if (parsed.grant.grantType !== preAuthorizedCodeGrantIdentifier)
        throw new Oauth2ServerErrorResponseError({ error: Oauth2ErrorCodes.UnsupportedGrantType });
      const offered = codes.get(parsed.grant.preAuthorizedCode);
      if (!offered) throw new Oauth2ServerErrorResponseError({ error: Oauth2ErrorCodes.InvalidGrant });
      await authorizationServer.verifyPreAuthorizedCodeAccessTokenRequest({
        authorizationServerMetadata: asMetadata,
        grant: parsed.grant,
        accessTokenRequest: parsed.accessTokenRequest,
        request,
        expectedPreAuthorizedCode: parsed.grant.preAuthorizedCode,
      });
      codes.delete(parsed.grant.preAuthorizedCode);
      const subject = randomUUID();
      grants.set(subject, offered);
      return {
        status: 200,
        body: await authorizationServer.createAccessTokenResponse({
          audience: PEER_ISSUER,
          authorizationServer: PEER_ISSUER,
          signer: { method: 'jwk', alg: 'ES256', publicJwk: signingJwk },
          subject,
          expiresInSeconds: 600,
        }),
      };
    }
    case '/nonce': {
      const cNonce = randomBytes(16).toString('base64url');
      cNonces.add(cNonce);
      return { status: 200, body: issuer.createNonceResponse({ cNonce, cNonceExpiresIn: 300 }) };
    }
    case '/credential': {
      const verified = await resourceServer.verifyResourceRequest({
        authorizationServers: [asMetadata],
        request: requestLike(req),
        resourceServer: PEER_ISSUER,
        allowedAuthenticationSchemes: [SupportedAuthenticationScheme.Bearer],
      });
      const grant = grants.get(String(verified.tokenPayload.sub));
      const parsed = issuer.parseCredentialRequest({ issuerMetadata, credentialRequest: JSON.parse(raw) });
      if (!grant || parsed.credentialConfigurationId !== grant.configurationId)
        throw new Oauth2ServerErrorResponseError({ error: 'invalid_credential_request' });
      const jwts = ((parsed.proofs as Json)?.jwt as string[] | undefined) ?? [];
      if (jwts.length !== 1) throw new Oauth2ServerErrorResponseError({ error: 'invalid_proof' });
      const nonce = decodeJwt(jwts[0]!)['nonce'];
      if (typeof nonce !== 'string' || !cNonces.delete(nonce))
        throw new Oauth2ServerErrorResponseError({ error: 'invalid_nonce' });
      const proof = await issuer.verifyCredentialRequestJwtProof({
        issuerMetadata,
        jwt: jwts[0]!,
        expectedNonce: nonce,
      });
      grants.delete(String(verified.tokenPayload.sub));
      const credential = await sign(
        grant.configurationId,
        grant.claims,
        (proof.signer as { publicJwk: Jwk }).publicJwk,
      );
      return {
        status: 200,
        body: issuer.createCredentialResponse({
          credentialRequest: parsed,
          credentials: [credential] as never,
        }),
      };
    }
  }
  return { status: 404, body: { error: 'not_found' } };
}

const server = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  let answer: { status: number; body: unknown };
  try {
    answer = await route(req, Buffer.concat(chunks).toString('utf8'));
  } catch (error) {
    answer =
      error instanceof Oauth2ServerErrorResponseError
        ? { status: error.status ?? 400, body: error.errorResponse }
        : { status: 500, body: { error: 'server_error', error_description: (error as Error).message } };
  }
  res.writeHead(answer.status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(answer.body));
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(`listening ${(server.address() as AddressInfo).port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
