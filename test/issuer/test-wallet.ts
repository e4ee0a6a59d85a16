import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type CallbackContext,
  clientAuthenticationAnonymous,
  type Jwk,
  Oauth2ClientErrorResponseError,
} from '@openid4vc/oauth2';
import {
  type CredentialOfferObject,
  type IssuerMetadataResult,
  Openid4vciClient,
  Openid4vciRetrieveCredentialsError,
  Openid4vciSendNotificationError,
} from '@openid4vc/openid4vci';
import { CompactSign, exportJWK, generateKeyPair, type JWK } from 'jose';
import { createOutboundClient } from '../../src/http/outbound.ts';
import { coffer } from '../helpers/cli.ts';
import type { DatabaseKind } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { type Certified, makeCertificate, privateKeyPem } from '../oid4vp/certificates.ts';
import { startTlsFront, type TlsFront } from '../verifier/tls-front.ts';

/**
 * A wallet made of other people's code: the client side of @openid4vc/openid4vci and
 * @openid4vc/oauth2, given jose for signing, node:crypto for hashing and randomness, and the
 * TLS front's fetch. The test glue only holds its keys and reads the libraries' errors.
 */

/** A wallet key: ES256 over P-256, made by jose. */
export interface WalletKey {
  jwk: JWK;
  privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
}

export async function newWalletKey(): Promise<WalletKey> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  return { jwk: await exportJWK(publicKey), privateKey };
}

const sameKey = (a: JWK, b: Record<string, unknown>) =>
  a.x === b['x'] && a.y === b['y'] && a.crv === b['crv'];

const HASHES = { 'sha-256': 'sha256', 'sha-384': 'sha384', 'sha-512': 'sha512' } as const;

export class TestWallet {
  readonly keys: WalletKey[] = [];
  readonly client: Openid4vciClient;

  constructor(fetch: typeof globalThis.fetch) {
    const callbacks: Omit<CallbackContext, 'verifyJwt' | 'decryptJwe' | 'encryptJwe'> = {
      fetch,
      hash: (data, algorithm) => createHash(HASHES[algorithm]).update(data).digest(),
      generateRandom: (length) => randomBytes(length),
      clientAuthentication: clientAuthenticationAnonymous(),
      signJwt: async (signer, { header, payload }) => {
        if (signer.method !== 'jwk')
          throw new Error(`the test wallet signs with jwk keys, not ${signer.method}`);
        const key = this.keys.find((k) => sameKey(k.jwk, signer.publicJwk));
        if (!key) throw new Error('no key of this wallet');
        const jwt = await new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
          .setProtectedHeader(header as { alg: string })
          .sign(key.privateKey);
        return { jwt, signerJwk: key.jwk as Jwk };
      },
    };
    this.client = new Openid4vciClient({ callbacks });
  }

  async newKey(): Promise<WalletKey> {
    const key = await newWalletKey();
    this.keys.push(key);
    return key;
  }

  /** Scans an offer link: the offer (fetched by reference) and the issuer's metadata. */
  async scan(offerLink: string): Promise<{ offer: CredentialOfferObject; metadata: IssuerMetadataResult }> {
    const offer = await this.client.resolveCredentialOffer(offerLink);
    const metadata = await this.client.resolveIssuerMetadata(offer.credential_issuer);
    return { offer, metadata };
  }

  async accessToken(
    offer: CredentialOfferObject,
    metadata: IssuerMetadataResult,
    txCode?: string,
  ): Promise<string> {
    const { accessTokenResponse } = await this.client.retrievePreAuthorizedCodeAccessTokenFromOffer({
      credentialOffer: offer,
      issuerMetadata: metadata,
      ...(txCode === undefined ? {} : { txCode }),
    });
    return accessTokenResponse.access_token;
  }

  async nonce(metadata: IssuerMetadataResult): Promise<string> {
    return (await this.client.requestNonce({ issuerMetadata: metadata })).c_nonce;
  }

  /** A `jwt` key proof made by the library (typ openid4vci-proof+jwt, aud the issuer). */
  async proof(metadata: IssuerMetadataResult, configurationId: string, key: WalletKey, nonce: string) {
    const { jwt } = await this.client.createCredentialRequestJwtProof({
      issuerMetadata: metadata,
      credentialConfigurationId: configurationId,
      signer: { method: 'jwk', alg: 'ES256', publicJwk: key.jwk as Jwk },
      nonce,
      issuedAt: new Date(),
    });
    return jwt;
  }

  /**
   * The Deferred Credential Endpoint (§9) for a transaction_id. openid4vci 0.4.6 refuses a
   * deferred answer carrying both `credentials` and `notification_id` (its check is inverted:
   * §9.2 allows notification_id exactly when credentials are there), so such a 200 answer is
   * taken from the response the library kept.
   */
  async deferred(
    metadata: IssuerMetadataResult,
    accessToken: string,
    transactionId: string,
  ): Promise<{ credentials?: { credential: unknown }[]; notification_id?: string }> {
    try {
      const { deferredCredentialResponse } = await this.client.retrieveDeferredCredentials({
        issuerMetadata: metadata,
        accessToken,
        transactionId,
      });
      return deferredCredentialResponse as never;
    } catch (error) {
      const kept = error instanceof Openid4vciRetrieveCredentialsError ? error.response : undefined;
      const invalid = (kept as { deferredCredentialResponseResult?: { success: boolean } } | undefined)
        ?.deferredCredentialResponseResult;
      if (kept?.response.status === 200 && invalid?.success === false) {
        const body = (await kept.response.clone().json()) as Record<string, unknown>;
        if (Array.isArray(body['credentials']) && typeof body['notification_id'] === 'string') return body;
      }
      throw error;
    }
  }

  async credentials(
    metadata: IssuerMetadataResult,
    accessToken: string,
    configurationId: string,
    proofs: string[],
  ) {
    const { credentialResponse } = await this.client.retrieveCredentials({
      issuerMetadata: metadata,
      accessToken,
      credentialConfigurationId: configurationId,
      proofs: { jwt: proofs },
    });
    return credentialResponse;
  }

  /**
   * The whole pre-authorized flow for the offer's first configuration: scan, token, nonce, one
   * proof per key (fresh keys), credential request.
   */
  async receive(offerLink: string, options: { txCode?: string; copies?: number } = {}) {
    const { offer, metadata } = await this.scan(offerLink);
    const configurationId = offer.credential_configuration_ids[0]!;
    const accessToken = await this.accessToken(offer, metadata, options.txCode);
    const nonce = await this.nonce(metadata);
    const keys = await Promise.all(Array.from({ length: options.copies ?? 1 }, () => this.newKey()));
    const proofs = await Promise.all(keys.map((key) => this.proof(metadata, configurationId, key, nonce)));
    const response = await this.credentials(metadata, accessToken, configurationId, proofs);
    return {
      offer,
      metadata,
      configurationId,
      accessToken,
      keys,
      response,
      credentials: (response.credentials ?? []).map((c) => (c as { credential: unknown }).credential),
    };
  }

  async notify(
    metadata: IssuerMetadataResult,
    accessToken: string,
    notificationId: string,
    event: 'credential_accepted' | 'credential_failure' | 'credential_deleted',
  ) {
    return this.client.sendNotification({
      issuerMetadata: metadata,
      accessToken,
      notification: { notificationId, event },
    });
  }
}

/** What an issuer's refusal said, whichever library call it came to: HTTP status and error code. */
export async function refusalOf(call: Promise<unknown>): Promise<{ status: number; error: string }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof Oauth2ClientErrorResponseError) {
      return { status: error.response.status, error: error.errorResponse.error };
    }
    // Credential, deferred credential and notification errors: the response the library kept.
    if (
      error instanceof Openid4vciRetrieveCredentialsError ||
      error instanceof Openid4vciSendNotificationError
    ) {
      const response = error.response.response;
      const body = (await response
        .clone()
        .json()
        .catch(() => ({}))) as { error?: string };
      return { status: response.status, error: body.error ?? '' };
    }
    throw error;
  }
  throw new Error('the issuer did not refuse');
}

/**
 * A Coffer server behind TLS with one tenant made an issuer, its ES256 key certified by a CA of
 * the test's own (@peculiar/x509), so that verifiers outside Coffer have a trust anchor.
 */
export interface InteropIssuer {
  server: TestServer;
  front: TlsFront;
  clientId: number;
  token: string;
  issuerId: string;
  ca: Certified;
  leaf: Certified;
  wallet: TestWallet;
  api(method: string, p: string, body?: unknown): ReturnType<TestServer['request']>;
  /** Creates an offer (201 expected) and gives its data. */
  offer(body: Record<string, unknown>): Promise<OfferData>;
  close(): Promise<void>;
}

export interface OfferData {
  id: string;
  credential_offer_uri: string;
  offer_link: string;
  tx_code?: string;
}

export async function startInteropIssuer(
  kind: DatabaseKind,
  options: { trust?: string[]; env?: Record<string, string>; issuerClock?: () => Date } = {},
): Promise<InteropIssuer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'coffer-issuer-interop-'));
  const ca = await makeCertificate({ subject: 'C=GB, CN=Test Issuer CA', ca: true });
  // It names PUBLIC_URL's host, as the SD-JWT VCs' iss (a wallet ties the two).
  const leaf = await makeCertificate({
    subject: 'C=GB, O=University, CN=University Issuer',
    issuer: ca,
    ipAddresses: ['127.0.0.1'],
  });
  await writeFile(path.join(dir, 'key.pem'), await privateKeyPem(leaf.keys.privateKey));
  await writeFile(path.join(dir, 'chain.pem'), leaf.pem);
  const front = await startTlsFront();
  const server = await startTestServer(
    kind,
    { ALLOW_PRIVATE_TARGETS: 'true', PUBLIC_URL: front.url, ...options.env },
    {
      ...(options.trust
        ? { outbound: createOutboundClient({ allowPrivateTargets: true, ca: options.trust }) }
        : {}),
      ...(options.issuerClock ? { issuerClock: options.issuerClock } : {}),
    },
  );
  front.target = server.url;
  const { clientId, token } = await server.createMaster('University');
  const enabled = await coffer(
    server,
    'issuer',
    'enable',
    '--client',
    String(clientId),
    '--key',
    path.join(dir, 'key.pem'),
    '--chain',
    path.join(dir, 'chain.pem'),
    '--json',
  );
  if (enabled.code !== 0) throw new Error(`issuer enable failed: ${enabled.stderr}`);
  const { credential_issuer: issuerId } = JSON.parse(enabled.stdout) as { credential_issuer: string };
  const api: InteropIssuer['api'] = (method, p, body) =>
    server.request(method, p, {
      headers: { 'x-api-token': token },
      ...(body === undefined ? {} : { body }),
    });
  return {
    server,
    front,
    clientId,
    token,
    issuerId,
    ca,
    leaf,
    wallet: new TestWallet(front.fetch),
    api,
    async offer(body) {
      const created = await api('POST', '/v1/issuer/offers', body);
      if (created.status !== 201) throw new Error(`offer refused: ${created.status} ${created.text}`);
      return created.body.data as OfferData;
    },
    async close() {
      await server.close();
      await front.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The leaf of a JWS's x5c (the JWS or only its signing input), after checking it was issued by the CA (the verifier's trust anchor). */
export function x5cLeafOf(jws: string, ca: Certified): X509Certificate {
  const header = JSON.parse(Buffer.from(jws.split('.')[0]!, 'base64url').toString()) as { x5c?: string[] };
  const [first] = header.x5c ?? [];
  if (!first) throw new Error('no x5c');
  const leaf = new X509Certificate(Buffer.from(first, 'base64'));
  if (!leaf.verify(new X509Certificate(ca.pem).publicKey)) throw new Error('x5c does not chain to the CA');
  return leaf;
}
