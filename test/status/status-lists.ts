import type { webcrypto } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { createHeaderAndPayload, StatusList } from '@sd-jwt/jwt-status-list';
import { SignJWT } from 'jose';
import { makeCertificate, privateKeyPem } from '../oid4vp/certificates.ts';

/**
 * An issuer's status list endpoint (a real HTTPS server on 127.0.0.1 with its own test CA) and
 * the lists it serves: Token Status Lists made with @sd-jwt/jwt-status-list, Bitstring Status
 * Lists gzipped here, both signed with jose.
 */

export interface Served {
  status?: number;
  /** Text, or bytes for a CWT list. */
  body: string | Uint8Array;
  headers?: Record<string, string>;
}

export interface ListServer {
  /** The server's origin, https://127.0.0.1:port. */
  origin: string;
  /** The TLS certificate to trust (PEM). */
  ca: string;
  /** Serves `response` at `path` from now on; returns the list's address. */
  serve(path: string, response: Served): string;
  fetches(path: string): number;
  /** The Accept header of the last request for `path`. */
  acceptOf(path: string): string | undefined;
  close(): Promise<void>;
}

export async function startListServer(): Promise<ListServer> {
  // A subject of its own: trusted beside another self-signed 127.0.0.1 certificate, the same
  // subject would make OpenSSL pick the wrong one as the issuer.
  const tls = await makeCertificate({ subject: 'CN=Status List Server', ipAddresses: ['127.0.0.1'] });
  const routes = new Map<string, Served>();
  const counts = new Map<string, number>();
  const accepts = new Map<string, string | undefined>();
  const server: Server = createServer(
    { key: await privateKeyPem(tls.keys.privateKey), cert: tls.pem },
    (request, response) => {
      const path = request.url ?? '';
      counts.set(path, (counts.get(path) ?? 0) + 1);
      accepts.set(path, request.headers.accept);
      const served = routes.get(path) ?? { status: 404, body: 'no such list' };
      response.writeHead(served.status ?? 200, served.headers ?? {});
      response.end(served.body);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    ca: tls.pem,
    serve(path, response) {
      routes.set(path, response);
      return `${origin}${path}`;
    },
    fetches: (path) => counts.get(path) ?? 0,
    acceptOf: (path) => accepts.get(path),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type SigningKey = webcrypto.CryptoKey | import('node:crypto').KeyObject;

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

export interface TokenListOptions {
  uri: string;
  statuses: number[];
  bits: 1 | 2 | 4 | 8;
  key: SigningKey;
  /** `sub`; the list's address by default. */
  sub?: string;
  ttl?: number;
  exp?: Date;
  iat?: Date;
}

/** A `statuslist+jwt` (draft-ietf-oauth-status-list), ES256. */
export async function tokenStatusListJwt(options: TokenListOptions): Promise<string> {
  const list = new StatusList(options.statuses, options.bits);
  const { header, payload } = createHeaderAndPayload(
    list,
    {
      sub: options.sub ?? options.uri,
      iat: seconds(options.iat ?? new Date()),
      ...(options.exp ? { exp: seconds(options.exp) } : {}),
      ...(options.ttl === undefined ? {} : { ttl: options.ttl }),
    },
    { alg: 'ES256', typ: 'statuslist+jwt' },
  );
  return new SignJWT(payload).setProtectedHeader(header).sign(options.key);
}

/** `encodedList`: multibase base64url of the gzipped bitstring, the given indexes set (index 0 = first byte's MSB). */
export function encodedBitstring(setIndexes: number[], bits = 131_072): string {
  const bytes = new Uint8Array(bits / 8);
  for (const index of setIndexes) bytes[index >> 3]! |= 0x80 >> (index & 7);
  return `u${gzipSync(bytes).toString('base64url')}`;
}

export interface BitstringListOptions {
  uri: string;
  issuer: string;
  purpose: string;
  setIndexes: number[];
  validUntil?: Date;
}

/** An unsigned BitstringStatusListCredential (VC Data Model 2.0). */
export function bitstringListCredential(options: BitstringListOptions): Record<string, unknown> {
  return {
    '@context': ['https://www.w3.org/ns/credentials/v2'],
    id: options.uri,
    type: ['VerifiableCredential', 'BitstringStatusListCredential'],
    issuer: options.issuer,
    validFrom: '2024-01-01T00:00:00Z',
    ...(options.validUntil ? { validUntil: options.validUntil.toISOString() } : {}),
    credentialSubject: {
      id: `${options.uri}#list`,
      type: 'BitstringStatusList',
      statusPurpose: options.purpose,
      encodedList: encodedBitstring(options.setIndexes),
    },
  };
}

/** The list as a VC-JWT: the credential itself as the payload (VC 2.0), or under `vc` (VC 1.1 style). */
export async function bitstringListJwt(
  options: BitstringListOptions & { key: SigningKey; underVc?: boolean },
): Promise<string> {
  const credential = bitstringListCredential(options);
  return new SignJWT(options.underVc ? { vc: credential } : credential)
    .setProtectedHeader({ alg: 'ES256', typ: options.underVc ? 'JWT' : 'vc+jwt' })
    .setIssuer(options.issuer)
    .setIssuedAt()
    .sign(options.key);
}

/** A status list entry for a W3C credential. */
export const bitstringEntry = (uri: string, index: number, purpose = 'revocation') => ({
  id: `${uri}#${index}`,
  type: 'BitstringStatusListEntry',
  statusPurpose: purpose,
  statusListIndex: String(index),
  statusListCredential: uri,
});
