// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect metadata
// polyfill; only the CLI loads this module, so the server's global Reflect stays untouched.
import 'reflect-metadata';
import { KeyObject, type webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

const ES256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 24 * 3600 * 1000;

/**
 * A development signing certificate: self-signed, P-256, digital signature only, with the
 * service's host as its dNSName, so that `x509_san_dns:<host>` and `x509_hash:` both name it.
 * Wallets trust it only if told to; production uses a certificate from the ecosystem's CA.
 */
export async function createDevelopmentCertificate(input: {
  name: string;
  dnsName: string;
  now: Date;
}): Promise<{ keyPem: string; chainPem: string }> {
  const keys = (await crypto.subtle.generateKey(ES256, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(crypto.getRandomValues(new Uint8Array(12))).toString('hex'),
    name: `CN=${input.name}, O=${input.name}`,
    notBefore: new Date(input.now.getTime() - DAY),
    notAfter: new Date(input.now.getTime() + 365 * DAY),
    keys,
    signingAlgorithm: ES256,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: input.dnsName }]),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const keyPem = KeyObject.from(keys.privateKey).export({ format: 'pem', type: 'pkcs8' }).toString();
  return { keyPem, chainPem: `${certificate.toString('pem')}\n` };
}
