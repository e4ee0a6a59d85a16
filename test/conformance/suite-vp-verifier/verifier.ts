import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import {
  type Certified,
  type Key,
  KeyUsage,
  makeCertificate,
  privateKeyPem,
} from '../../oid4vp/certificates.ts';

/**
 * The conformance suite's verifier (VP1FinalWallet*: AbstractVP1FinalWalletTest) against Coffer's
 * hosted wallet: an HTTPS server on 127.0.0.1 that hosts each run's request_uri and response_uri
 * as the suite does (`<base>/requesturi`, `<base>/responseuri`), and makes the suite's
 * authorization requests: client identifier prefixes x509_san_dns, x509_hash,
 * decentralized_identifier (signed request objects, `aud` https://self-issued.me/v2, no `exp` or
 * `iat`, as ConvertAuthorizationEndpointRequestToRequestObject makes them) and redirect_uri
 * (plain parameters, url_query). Nothing here is Coffer's code.
 */

export type CredentialFormat = 'sd_jwt_vc' | 'iso_mdl';
export type ClientIdPrefix =
  | 'x509_san_dns'
  | 'x509_hash'
  | 'redirect_uri'
  | 'decentralized_identifier'
  | 'pre_registered';
export type RequestMethod = 'request_uri_signed' | 'request_uri_unsigned' | 'url_query';
export type ResponseMode = 'direct_post' | 'direct_post.jwt';

export interface Variant {
  format: CredentialFormat;
  prefix: ClientIdPrefix;
  method: RequestMethod;
  mode: ResponseMode;
}

export const describeVariant = (v: Variant) =>
  `credential_format=${v.format} client_id_prefix=${v.prefix} request_method=${v.method} response_mode=${v.mode}`;

/** What the wallet sent to one of the suite's endpoints (the suite's `incoming_request`). */
export interface Incoming {
  method: string;
  headers: IncomingMessage['headers'];
  query: string;
  body: string;
  form: Record<string, string>;
}

export interface EncryptionKey {
  privateKey: Key;
  publicJwk: JWK;
}

/** One module run: the suite's environment for it. */
export interface Run {
  variant: Variant;
  /** The suite's base URL of this run (`base_url`). */
  base: string;
  /** `response_uri` as the suite made it (CreateDirectPostResponseUri). */
  responseUri: string;
  requestUri: string;
  /** `client.client_id` with its prefix. */
  clientId: string;
  nonce: string | undefined;
  state: string | undefined;
  /** `authorization_endpoint_request`. */
  request: Record<string, unknown>;
  /** The DCQL query sent (`dcql_query`). */
  dcql: { credentials: Record<string, unknown>[]; credential_sets?: unknown[] };
  /** The usable response encryption key, for direct_post.jwt. */
  encryption: EncryptionKey | null;
  /** Request object claims: a copy of the request made when the redirect is built. */
  requestObjectClaims: Record<string, unknown> | null;
  /** The query the browser takes to Coffer's authorization endpoint. */
  query: string;
  requestFetches: Incoming[];
  responsePosts: Incoming[];
  /** The suite's response to the response_uri POST: a redirect_uri with the code verifier in its fragment, or none. */
  returnRedirect: boolean;
  codeVerifier: string;
  redirectUri: string;
  /** Hooks of negative modules. */
  tamper: {
    /** InvalidateRequestObjectSignature: flip the signature. */
    invalidSignature?: boolean;
    /** AddMismatchedClientIdToRequestObject. */
    mismatchedClientId?: boolean;
    /** AddMismatchedIssToRequestObject. */
    mismatchedIss?: boolean;
  };
}

export interface FinishOptions {
  /** AddRequestUriMethodPostToRedirectUrl. */
  requestUriMethodPost?: boolean;
  /** BuildRequestObjectByReferenceRedirectToAuthorizationEndpointWithoutDuplicatesReorderedParams: request_uri first. */
  reorder?: boolean;
}

export interface SuiteVerifier {
  /** The TLS certificate Coffer's outbound client trusts. */
  tlsCertificatePem: string;
  /** VERIFIER_TRUST_ANCHORS for x509_san_dns. */
  anchorPem: string;
  newRun(variant: Variant, tweak?: (run: Run) => void): Promise<Run>;
  /** Builds the request and the redirect to the wallet once the module has adjusted `run.request`. */
  finish(run: Run, options?: FinishOptions): Promise<void>;
  close(): Promise<void>;
}

const random = (bytes = 16) => randomBytes(bytes).toString('base64url');

/** CreateRandomNonceValue / CreateRandomStateValue: (length−4) alphanumerics and "-._~". */
export function randomValue(length: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length - 4; i++) out += alphabet[bytes[i]! % alphabet.length];
  return `${out}-._~`;
}

/** CreateRandomCodeVerifier: 128 characters of the full unreserved set. */
function codeVerifier(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~';
  return [...randomBytes(128)].map((b) => alphabet[b % alphabet.length]).join('');
}

/** Nimbus JWSAlgorithm.Family.SIGNATURE, as AddVP1FinalSdJwtClientMetadataToAuthorizationRequest lists it. */
const SIGNATURE_ALGS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES256K',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
  'Ed448',
];

export const clientMetadataOf = (format: CredentialFormat) =>
  format === 'sd_jwt_vc'
    ? {
        vp_formats_supported: {
          'dc+sd-jwt': { 'sd-jwt_alg_values': SIGNATURE_ALGS, 'kb-jwt_alg_values': SIGNATURE_ALGS },
        },
      }
    : { vp_formats_supported: { mso_mdoc: { issuerauth_alg_values: [-7] } } };

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const x509Hash = (leaf: Certified) =>
  createHash('sha256').update(Buffer.from(leaf.der, 'base64')).digest('base64url');

export async function startSuiteVerifier(
  dcqlOf: (format: CredentialFormat) => Run['dcql'],
): Promise<SuiteVerifier> {
  const tls = await makeCertificate({
    subject: 'CN=127.0.0.1',
    ipAddresses: ['127.0.0.1'],
    dnsNames: ['localhost'],
  });
  const anchor = await makeCertificate({ subject: 'CN=Suite Verifier CA', ca: true });
  const sanDnsLeaf = await makeCertificate({
    subject: 'CN=localhost, O=Conformance Suite Verifier',
    issuer: anchor,
    dnsNames: ['localhost'],
    keyUsage: KeyUsage.digitalSignature,
  });
  const hashLeaf = await makeCertificate({ subject: 'CN=Conformance Suite Verifier' });
  const didKeys = await generateKeyPair('ES256', { extractable: true });
  const didJwk = await exportJWK(didKeys.publicKey);
  const did = `did:jwk:${Buffer.from(JSON.stringify({ crv: didJwk.crv, kty: didJwk.kty, x: didJwk.x, y: didJwk.y })).toString('base64url')}`;
  const runs = new Map<string, Run>();

  const server: Server = createServer(
    { key: await privateKeyPem(tls.keys.privateKey), cert: tls.pem },
    (request, response) => {
      const url = new URL(request.url ?? '/', 'https://127.0.0.1');
      const [, test, id, endpoint] = url.pathname.split('/');
      const run = test === 'test' ? runs.get(id ?? '') : undefined;
      const send = (status: number, type: string, body: string) => {
        response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
        response.end(body);
      };
      if (!run) return send(404, 'text/plain', 'unknown test');
      void (async () => {
        const body = await readBody(request);
        const incoming: Incoming = {
          method: request.method ?? '',
          headers: request.headers,
          query: url.search,
          body,
          form: Object.fromEntries(new URLSearchParams(body)),
        };
        if (endpoint === 'requesturi') {
          run.requestFetches.push(incoming);
          return send(200, 'application/oauth-authz-req+jwt', await sign(run, incoming.form['wallet_nonce']));
        }
        if (endpoint === 'responseuri' && url.pathname === new URL(run.responseUri).pathname) {
          run.responsePosts.push(incoming);
          // CreateEmptyDirectPostResponse, and AddRedirectUriToDirectPostResponse where the module returns one.
          return send(
            200,
            'application/json',
            JSON.stringify(
              run.returnRedirect ? { redirect_uri: `${run.redirectUri}#${run.codeVerifier}` } : {},
            ),
          );
        }
        send(404, 'text/plain', 'not found');
      })().catch((error: Error) => send(500, 'text/plain', error.message));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  /** The request object, signed at the request_uri fetch as the suite does (signRequestObject). */
  async function sign(run: Run, walletNonce?: string): Promise<string> {
    const claims: Record<string, unknown> = { ...run.requestObjectClaims };
    // AddReceivedWalletNonceToRequestObjectClaims (§5.10).
    if (walletNonce !== undefined) claims['wallet_nonce'] = walletNonce;
    let jwt: string;
    if (run.variant.method === 'request_uri_unsigned') {
      // SerializeRequestObjectWithNullAlgorithm: an unsecured JWT (alg none), for redirect_uri.
      const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      return `${encode({ alg: 'none' })}.${encode(claims)}.`;
    }
    if (run.variant.prefix === 'decentralized_identifier') {
      jwt = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', typ: 'oauth-authz-req+jwt', kid: `${did}#0` })
        .sign(didKeys.privateKey);
    } else {
      const leaf = run.variant.prefix === 'x509_san_dns' ? sanDnsLeaf : hashLeaf;
      // SignRequestObjectIncludeX5cHeader: the configured chain, which for x509_san_dns reaches the CA.
      jwt = await new SignJWT(claims)
        .setProtectedHeader({
          alg: 'ES256',
          typ: 'oauth-authz-req+jwt',
          x5c: run.variant.prefix === 'x509_san_dns' ? [leaf.der, anchor.der] : [leaf.der],
        })
        .sign(leaf.keys.privateKey);
    }
    if (run.tamper.invalidSignature) {
      // InvalidateRequestObjectSignature: the signature's bytes altered.
      const [header, payload, signature] = jwt.split('.');
      const bytes = Buffer.from(signature!, 'base64url');
      bytes[0] = bytes[0]! ^ 0xff;
      jwt = `${header}.${payload}.${bytes.toString('base64url')}`;
    }
    return jwt;
  }

  async function newRun(variant: Variant, tweak?: (run: Run) => void): Promise<Run> {
    const id = random(9);
    // x509_san_dns: SetClientIdToResponseUriHostnameIfUnset, so the suite is reached by that name.
    const host = variant.prefix === 'x509_san_dns' ? 'localhost' : '127.0.0.1';
    const base = `https://${host}:${port}/test/${id}`;
    const responseUri = `${base}/responseuri`;
    const clientId = {
      x509_san_dns: 'x509_san_dns:localhost',
      x509_hash: `x509_hash:${x509Hash(hashLeaf)}`,
      redirect_uri: `redirect_uri:${responseUri}`,
      decentralized_identifier: `decentralized_identifier:${did}`,
      // client.client_id as the tester configures it: the id the wallet registered the verifier under (set by the module).
      pre_registered: '',
    }[variant.prefix];
    let encryption: EncryptionKey | null = null;
    if (variant.mode === 'direct_post.jwt') {
      // CreateClientEncryptionKeyIfMissing: an EC P-256 key with use enc; alg ECDH-ES, enc A256GCM
      // (AddVP1FinalEncryptionParametersToClientMetadata's defaults for an EC key).
      const pair = await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true });
      encryption = {
        privateKey: pair.privateKey as Key,
        publicJwk: { ...(await exportJWK(pair.publicKey)), kid: random(8), use: 'enc', alg: 'ECDH-ES' },
      };
    }
    const nonce = randomValue(26);
    const state = randomValue(32);
    const dcql = dcqlOf(variant.format);
    const run: Run = {
      variant,
      base,
      responseUri,
      requestUri: `${base}/requesturi`,
      clientId,
      nonce,
      state,
      dcql,
      encryption,
      request: {},
      requestObjectClaims: null,
      query: '',
      requestFetches: [],
      responsePosts: [],
      // ISO 18013-7: the response_uri always answers with a redirect_uri for mdoc.
      returnRedirect: variant.format === 'iso_mdl',
      codeVerifier: codeVerifier(),
      redirectUri: `${base}/callback`,
      tamper: {},
    };
    runs.set(id, run);
    tweak?.(run);
    // CreateAuthorizationRequestSteps, in the suite's order.
    const request: Record<string, unknown> = { client_id: run.clientId };
    if (run.state !== undefined) request['state'] = run.state;
    request['response_uri'] = run.responseUri;
    request['dcql_query'] = run.dcql;
    if (run.nonce !== undefined) request['nonce'] = run.nonce;
    const metadata: Record<string, unknown> = clientMetadataOf(variant.format);
    if (run.encryption) {
      metadata['jwks'] = { keys: [run.encryption.publicJwk] };
      metadata['encrypted_response_enc_values_supported'] = ['A256GCM'];
    }
    request['client_metadata'] = metadata;
    request['response_type'] = 'vp_token';
    request['response_mode'] = variant.mode;
    run.request = request;
    return run;
  }

  async function finish(run: Run, options: FinishOptions = {}) {
    if (run.variant.method === 'url_query') {
      // BuildPlainRedirectToAuthorizationEndpoint: every parameter in the query, objects as JSON.
      run.query = new URLSearchParams(
        Object.entries(run.request).map(([k, v]): [string, string] => [
          k,
          typeof v === 'string' ? v : JSON.stringify(v),
        ]),
      ).toString();
      return;
    }
    const claims: Record<string, unknown> = structuredClone(run.request);
    if (run.tamper.mismatchedIss) claims['iss'] = `${run.clientId}-mismatched`;
    if (run.tamper.mismatchedClientId) claims['client_id'] = `${claims['client_id']}-mismatched`;
    // AddSelfIssuedMeV2AudToRequestObject: signed request objects only.
    if (run.variant.method === 'request_uri_signed') claims['aud'] = 'https://self-issued.me/v2';
    run.requestObjectClaims = claims;
    // BuildRequestObjectByReferenceRedirectToAuthorizationEndpointWithoutDuplicates: client_id and request_uri.
    const clientId: [string, string] = ['client_id', String(run.request['client_id'])];
    const requestUri: [string, string] = ['request_uri', run.requestUri];
    const query = new URLSearchParams(options.reorder ? [requestUri, clientId] : [clientId, requestUri]);
    if (options.requestUriMethodPost) query.set('request_uri_method', 'post');
    run.query = query.toString();
  }

  return {
    tlsCertificatePem: tls.pem,
    anchorPem: anchor.pem,
    newRun,
    finish,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
