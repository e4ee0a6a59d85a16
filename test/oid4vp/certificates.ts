import 'reflect-metadata';
import { createHash, type webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

/**
 * Keys and X.509 certificates for the test verifier, made with @peculiar/x509 (code Coffer does
 * not use): a CA for VERIFIER_TRUST_ANCHORS, request-signing certificates for x509_hash, and the
 * TLS certificate of the verifier's HTTPS server.
 */

export type KeyPair = webcrypto.CryptoKeyPair;
export type Key = webcrypto.CryptoKey;

const ES256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const HOUR = 3600_000;

export interface Certified {
  keys: KeyPair;
  certificate: x509.X509Certificate;
  /** The DER certificate, base64 (as `x5c` carries it). */
  der: string;
  pem: string;
}

export const newKeyPair = () =>
  crypto.subtle.generateKey(ES256, true, ['sign', 'verify']) as Promise<KeyPair>;

function certified(keys: KeyPair, certificate: x509.X509Certificate): Certified {
  return {
    keys,
    certificate,
    der: Buffer.from(certificate.rawData).toString('base64'),
    pem: certificate.toString('pem'),
  };
}

export interface CertificateOptions {
  subject: string;
  /** Signed by this CA; self-signed otherwise. */
  issuer?: Certified;
  notBefore?: Date;
  notAfter?: Date;
  ca?: boolean;
  /** Subject alternative names, e.g. the IP address a TLS server answers on. */
  ipAddresses?: string[];
  /** dNSName subject alternative names (x509_san_dns verifiers, TLS for localhost). */
  dnsNames?: string[];
  /** uniformResourceIdentifier subject alternative names (an issuer named by its URL). */
  uris?: string[];
  /** Key usage bits; none (any usage) unless given. */
  keyUsage?: number;
  /**
   * Subject and authority key identifiers (RFC 5280 §4.2.1.1-2, SHA-1 of the public key), as
   * real issuer chains carry them; a self-signed certificate names its own key as authority.
   */
  keyIdentifiers?: boolean;
}

export const KeyUsage = x509.KeyUsageFlags;

export async function makeCertificate(options: CertificateOptions): Promise<Certified> {
  const keys = await newKeyPair();
  const keyIdentifiers = options.keyIdentifiers
    ? [
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
        await x509.AuthorityKeyIdentifierExtension.create((options.issuer?.keys ?? keys).publicKey),
      ]
    : [];
  const common = {
    serialNumber: Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString('hex'),
    notBefore: options.notBefore ?? new Date(Date.now() - HOUR),
    notAfter: options.notAfter ?? new Date(Date.now() + 24 * HOUR),
    signingAlgorithm: ES256,
    extensions: [
      new x509.BasicConstraintsExtension(options.ca === true, undefined, true),
      ...(options.ipAddresses || options.dnsNames || options.uris
        ? [
            new x509.SubjectAlternativeNameExtension([
              ...(options.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
              ...(options.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
              ...(options.uris ?? []).map((value) => ({ type: 'url' as const, value })),
            ]),
          ]
        : []),
      ...(options.keyUsage !== undefined ? [new x509.KeyUsagesExtension(options.keyUsage, true)] : []),
      ...keyIdentifiers,
    ],
  };
  const certificate = options.issuer
    ? await x509.X509CertificateGenerator.create({
        ...common,
        subject: options.subject,
        issuer: options.issuer.certificate.subject,
        publicKey: keys.publicKey,
        signingKey: options.issuer.keys.privateKey,
      })
    : await x509.X509CertificateGenerator.createSelfSigned({ ...common, name: options.subject, keys });
  return certified(keys, certificate);
}

/** The PKCS#8 PEM of a private key, for node:https. */
export async function privateKeyPem(key: Key): Promise<string> {
  const der = Buffer.from(await crypto.subtle.exportKey('pkcs8', key)).toString('base64');
  return `-----BEGIN PRIVATE KEY-----\n${der.match(/.{1,64}/g)!.join('\n')}\n-----END PRIVATE KEY-----\n`;
}

/** SHA-256 of the DER certificate as Node prints it (hex pairs, colons), for comparing with the consent. */
export const fingerprintOf = (cert: Certified) =>
  createHash('sha256')
    .update(Buffer.from(cert.der, 'base64'))
    .digest('hex')
    .toUpperCase()
    .match(/../g)!
    .join(':');

/**
 * The certificate's key identifier by RFC 5280 §4.2.1.2 method (1), worked out here from the key
 * (not read from any certificate): SHA-1 of the subjectPublicKey bits, which for an EC key are
 * the uncompressed point WebCrypto exports as `raw`. Base64url, as a DCQL `aki` value carries it.
 */
export async function keyIdentifierOf(cert: Certified): Promise<string> {
  const point = await crypto.subtle.exportKey('raw', cert.keys.publicKey);
  return createHash('sha1').update(Buffer.from(point)).digest('base64url');
}
