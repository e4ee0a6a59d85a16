import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  calculateX509HashClientIdPrefixValue,
  createOpenid4vpAuthorizationRequest,
  type Openid4vpAuthorizationRequest,
} from '@openid4vc/openid4vp';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { type Certified, type Key, makeCertificate, privateKeyPem } from './certificates.ts';
import { ENC, type EncryptionKey, type Received, readFragment, readResponse } from './verifier-responses.ts';

export type { EncryptionKey, Received } from './verifier-responses.ts';

/**
 * An OpenID4VP 1.0 verifier that shares no code with Coffer: request objects are made by
 * @openid4vc/openid4vp (JAR signed with an x5c certificate), responses parsed by it and decrypted
 * with jose, on its own HTTPS server on 127.0.0.1 that hosts request_uri and response_uri.
 */

/** The `aud` of request objects under static discovery (OpenID4VP §5.8). */
export const SELF_ISSUED_AUDIENCE = 'https://self-issued.me/v2';
/** Where the verifier asks the browser to come back to after a response (it is never fetched). */
export const VERIFIER_FRONTEND = 'https://verifier.example';
const REQUEST_OBJECT_TYPE = 'application/oauth-authz-req+jwt';

export const PERSON_TYPE = 'https://issuer.example/vocab#PersonCredential';

/** A DCQL Credential Query for a PersonCredential's subject claims (none: no `claims` at all). */
export function personQuery(id: string, claims: string[], extra: Record<string, unknown> = {}) {
  return {
    id,
    format: 'ldp_vc',
    meta: { type_values: [[PERSON_TYPE]] },
    ...(claims.length ? { claims: claims.map((claim) => ({ path: ['credentialSubject', claim] })) } : {}),
    ...extra,
  };
}

export const LDP_VC_FORMATS = {
  ldp_vc: { proof_type_values: ['DataIntegrityProof'], cryptosuite_values: ['bbs-2023', 'eddsa-rdfc-2022'] },
};

/** Who signs request objects: a certificate (chain) and the x509_hash client identifier it gives. */
export interface SigningIdentity {
  leaf: Certified;
  /** Further certificates for x5c, after the leaf. */
  chain: Certified[];
  clientId: string;
}

/** A verifier identified by a key rather than a certificate (verifier_attestation:, decentralized_identifier:). */
export interface KeySigner {
  clientId: string;
  privateKey: Key;
  publicJwk: JWK;
  /** How @openid4vc/openid4vp is told the request is signed: by a DID URL, a federation key, or a custom header. */
  jwtSigner:
    | { method: 'did'; didUrl: string; alg: string }
    | { method: 'federation'; kid: string; alg: string; trustChain?: [string, ...string[]] }
    | { method: 'custom'; alg: string };
  /** Header members added to the request object, e.g. the Verifier Attestation JWT in `jwt`. */
  header?: Record<string, unknown>;
}

export async function x509HashIdentity(leaf: Certified, chain: Certified[] = []): Promise<SigningIdentity> {
  const hash = await calculateX509HashClientIdPrefixValue({
    x509Certificate: leaf.der,
    hash: (data) => createHash('sha256').update(data).digest(),
  });
  return { leaf, chain, clientId: `x509_hash:${hash}` };
}

/** What the wallet sent to the request_uri. */
export interface RequestFetch {
  method: string;
  accept: string | undefined;
  contentType: string | undefined;
  form: Record<string, string>;
}

export interface Transaction {
  id: string;
  clientId: string;
  nonce: string;
  state: string;
  responseUri: string;
  requestUri: string;
  /** The authorization request parameters as the verifier meant them. */
  payload: Record<string, unknown>;
  /** The query to send to the wallet's authorization endpoint. */
  query: string;
  requestFetches: RequestFetch[];
  received: Received[];
  /** Signs a request object, with the wallet_nonce the wallet sent by POST if any. */
  requestObject(walletNonce?: string): Promise<string>;
  encryptionKey: EncryptionKey | null;
}

export interface RequestOptions {
  /** How the request travels: parameters in the query, a request object by value, or by reference. */
  by?: 'parameters' | 'value' | 'reference' | 'reference-post';
  identity?: SigningIdentity;
  /** Sign with a key identity instead of a certificate. */
  keySigner?: KeySigner;
  /** The host of request_uri and response_uri instead of 127.0.0.1 (e.g. localhost, for x509_san_dns). */
  host?: string;
  /** Identify as `redirect_uri:<response_uri>` (§5.9.3) instead of by certificate; unsigned only. */
  redirectUriPrefix?: boolean;
  /** Another client_id than the identity's, e.g. a pre-registered one (its keys registered with Coffer). */
  clientId?: string;
  /** The transaction id, so that its response URI can be registered before the request is made. */
  id?: string;
  /** The response encryption key, e.g. one registered with Coffer beforehand. */
  encryptionKey?: EncryptionKey;
  responseMode?: 'direct_post' | 'direct_post.jwt';
  dcql?: object;
  /** client_metadata.vp_formats_supported (ldp_vc only by default). */
  formats?: Record<string, unknown>;
  nonce?: string;
  /** Parameters added to (or replacing) the request, e.g. redirect_uri or transaction_data. */
  parameters?: Record<string, unknown>;
  /** Claims of the signed request object replacing what the library put there (exp, response_mode). */
  jwtClaims?: Record<string, unknown>;
  /** Header parameters replacing the library's (typ). */
  jwtHeader?: Record<string, unknown>;
  /** Signs with this key instead of the key of the x5c leaf. */
  signingKey?: Key;
  /** Keys listed before the verifier's own in client_metadata.jwks: ones the wallet should pass over. */
  encryptionKeysBefore?: JWK[];
  /** Answers a POST to request_uri without the wallet_nonce it carried. */
  ignoreWalletNonce?: boolean;
}

export interface RegisteredRequestOptions {
  /** The transaction id, so that its response URI can be registered before the request is made. */
  id?: string;
  dcql?: object;
  parameters?: Record<string, unknown>;
}

export interface Verifier {
  url: string;
  /** The PEM of the TLS certificate, for Coffer's outbound client. */
  tlsCertificatePem: string;
  identity: SigningIdentity;
  /** TCP connections the HTTPS server has accepted. */
  connections(): number;
  /** did:web:127.0.0.1%3A<port>: the DID whose document the server serves at /.well-known/did.json. */
  didWeb: string;
  /** The DID document served for didWeb (null: 404). */
  didDocument: Record<string, unknown> | null;
  /** Requests for the DID document so far. */
  didDocumentFetches(): number;
  createRequest(options?: RequestOptions): Promise<Transaction>;
  /** A pre-registered verifier's transaction: unsigned parameters, no client_metadata (§5.9). */
  createRegisteredRequest(
    clientId: string,
    responseMode: 'fragment' | 'direct_post',
    options?: RegisteredRequestOptions,
  ): Transaction;
  /** The response URI of the transaction with this id (to register it with Coffer first). */
  responseUriOf(id: string): string;
  /** Reads a response that came back in the redirect's fragment. */
  receiveFragment(transaction: Transaction, location: string): Received;
  close(): Promise<void>;
}

const random = (bytes = 16) => randomBytes(bytes).toString('base64url');

/** An ECDH-ES P-256 key for direct_post.jwt, with a kid (§5.1: every JWK in client_metadata has one). */
export async function newEncryptionKey(): Promise<EncryptionKey> {
  const { privateKey, publicKey } = await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true });
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid: random(8), alg: 'ECDH-ES', use: 'enc' };
  return { privateKey: privateKey as Key, publicJwk };
}

export const defaultDcql = () => ({ credentials: [personQuery('person', ['first_name'])] });

async function readBody(request: import('node:http').IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const formOf = (text: string) => Object.fromEntries(new URLSearchParams(text));

export async function startVerifier(): Promise<Verifier> {
  const tls = await makeCertificate({
    subject: 'CN=127.0.0.1',
    ipAddresses: ['127.0.0.1'],
    dnsNames: ['localhost'],
  });
  const leaf = await makeCertificate({ subject: 'CN=Test Verifier, O=Verifier Example' });
  const identity = await x509HashIdentity(leaf);
  const transactions = new Map<string, Transaction>();
  let connections = 0;
  let didDocumentFetches = 0;
  const state: { didDocument: Record<string, unknown> | null } = { didDocument: null };

  const server: Server = createServer(
    { key: await privateKeyPem(tls.keys.privateKey), cert: tls.pem },
    (request, response) => {
      const send = (status: number, type: string, body: string) => {
        response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
        response.end(body);
      };
      if (request.url === '/.well-known/did.json') {
        didDocumentFetches++;
        if (!state.didDocument) return send(404, 'text/plain', 'no DID document');
        return send(200, 'application/did+json', JSON.stringify(state.didDocument));
      }
      const [, kind, id] = (request.url ?? '').split('/');
      const transaction = transactions.get(id ?? '');
      if (!transaction) return send(404, 'text/plain', 'unknown transaction');
      void (async () => {
        const form = request.method === 'POST' ? formOf(await readBody(request)) : {};
        if (kind === 'request') {
          transaction.requestFetches.push({
            method: request.method ?? '',
            accept: request.headers.accept,
            contentType: request.headers['content-type'],
            form,
          });
          return send(200, REQUEST_OBJECT_TYPE, await transaction.requestObject(form['wallet_nonce']));
        }
        if (kind === 'response' && request.method === 'POST') {
          const received = await readResponse(transaction, form);
          transaction.received.push(received);
          if (received.refusal)
            return send(400, 'application/json', JSON.stringify({ error: 'invalid_request' }));
          // A fresh response code in the redirect URI defeats session fixation (§14.2).
          received.redirectUri = `${VERIFIER_FRONTEND}/done?tx=${transaction.id}#response_code=${random()}`;
          return send(200, 'application/json', JSON.stringify({ redirect_uri: received.redirectUri }));
        }
        send(405, 'text/plain', 'method not allowed');
      })().catch((error: Error) => send(500, 'text/plain', error.message));
    },
  );
  server.on('connection', () => {
    connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `https://127.0.0.1:${port}`;

  const newTransaction = (clientId: string, nonce: string, id = random(12), host = '127.0.0.1') => {
    const base = `https://${host}:${port}`;
    return {
      id,
      clientId,
      nonce,
      state: random(),
      responseUri: `${base}/response/${id}`,
      requestUri: `${base}/request/${id}`,
    };
  };

  async function createRequest(options: RequestOptions = {}): Promise<Transaction> {
    const by = options.by ?? 'reference';
    const signer = options.identity ?? identity;
    const responseMode = options.responseMode ?? 'direct_post.jwt';
    const keySigner = options.keySigner;
    const base = newTransaction(
      options.clientId ?? keySigner?.clientId ?? signer.clientId,
      options.nonce ?? random(),
      options.id,
      options.host,
    );
    if (options.redirectUriPrefix) base.clientId = `redirect_uri:${base.responseUri}`;
    const key =
      responseMode === 'direct_post.jwt' ? (options.encryptionKey ?? (await newEncryptionKey())) : null;
    const payload: Record<string, unknown> = {
      response_type: 'vp_token',
      client_id: base.clientId,
      response_mode: responseMode,
      response_uri: base.responseUri,
      nonce: base.nonce,
      state: base.state,
      dcql_query: options.dcql ?? defaultDcql(),
      client_metadata: {
        vp_formats_supported: options.formats ?? LDP_VC_FORMATS,
        ...(key ? { jwks: { keys: [key.publicJwk] }, encrypted_response_enc_values_supported: [ENC] } : {}),
      },
      ...options.parameters,
    };
    const create = (walletNonce?: string) =>
      createOpenid4vpAuthorizationRequest({
        authorizationRequestPayload: {
          ...payload,
          ...(walletNonce ? { wallet_nonce: walletNonce } : {}),
        } as Openid4vpAuthorizationRequest,
        ...(walletNonce ? { wallet: { expectedNonce: walletNonce } } : {}),
        ...(by === 'parameters'
          ? {}
          : {
              jar: {
                jwtSigner: keySigner
                  ? keySigner.jwtSigner
                  : {
                      method: 'x5c' as const,
                      alg: 'ES256',
                      x5c: [signer.leaf.der, ...signer.chain.map((c) => c.der)],
                    },
                expiresInSeconds: 300,
                // The library's default aud is the request_uri; Coffer is reached by static discovery.
                additionalJwtPayload: { aud: SELF_ISSUED_AUDIENCE },
                ...(by === 'value' ? {} : { requestUri: base.requestUri }),
              },
            }),
        callbacks: {
          signJwt: async (_signer, jwt) => ({
            jwt: await new SignJWT({ ...jwt.payload, ...options.jwtClaims })
              .setProtectedHeader({ ...jwt.header, ...keySigner?.header, ...options.jwtHeader } as never)
              .sign(options.signingKey ?? keySigner?.privateKey ?? signer.leaf.keys.privateKey),
            signerJwk: (keySigner?.publicJwk ?? (await exportJWK(signer.leaf.keys.publicKey))) as never,
          }),
          encryptJwe: () => {
            throw new Error('request objects are not encrypted here');
          },
        },
      });
    const created = await create();
    const query = new URL(created.authorizationRequest).searchParams;
    if (by === 'reference-post') query.set('request_uri_method', 'post');
    const transaction: Transaction = {
      ...base,
      payload,
      query: query.toString(),
      requestFetches: [],
      received: [],
      encryptionKey: key,
      requestObject: async (walletNonce) => {
        if (!walletNonce || options.ignoreWalletNonce) return created.jar!.authorizationRequestJwt;
        return (await create(walletNonce)).jar!.authorizationRequestJwt;
      },
    };
    transactions.set(base.id, transaction);
    return transaction;
  }

  function createRegisteredRequest(
    clientId: string,
    responseMode: 'fragment' | 'direct_post',
    options: RegisteredRequestOptions = {},
  ): Transaction {
    const base = newTransaction(clientId, random(), options.id);
    // Built by hand (both modes alike): the library (0.4.6) knows no response_mode fragment.
    const payload: Record<string, unknown> = {
      response_type: 'vp_token',
      response_mode: responseMode,
      client_id: clientId,
      ...(responseMode === 'fragment'
        ? { redirect_uri: `${VERIFIER_FRONTEND}/cb` }
        : { response_uri: base.responseUri }),
      nonce: base.nonce,
      state: base.state,
      dcql_query: options.dcql ?? defaultDcql(),
      ...options.parameters,
    };
    const query = new URLSearchParams(
      Object.entries(payload).map(([name, value]): [string, string] => [
        name,
        typeof value === 'string' ? value : JSON.stringify(value),
      ]),
    );
    const transaction: Transaction = {
      ...base,
      payload,
      query: query.toString(),
      requestFetches: [],
      received: [],
      encryptionKey: null,
      requestObject: () => Promise.reject(new Error('no request object')),
    };
    transactions.set(base.id, transaction);
    return transaction;
  }

  return {
    url,
    tlsCertificatePem: tls.pem,
    identity,
    connections: () => connections,
    didWeb: `did:web:127.0.0.1%3A${port}`,
    get didDocument() {
      return state.didDocument;
    },
    set didDocument(document) {
      state.didDocument = document;
    },
    didDocumentFetches: () => didDocumentFetches,
    responseUriOf: (id) => `${url}/response/${id}`,
    createRequest,
    createRegisteredRequest,
    receiveFragment: (transaction, location) => {
      const received = readFragment(transaction, location);
      transaction.received.push(received);
      return received;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
