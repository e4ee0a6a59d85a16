// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect metadata
// polyfill; only the CLI loads this module, so the server's global Reflect stays untouched.
import 'reflect-metadata';
import { createHash, KeyObject, type webcrypto } from 'node:crypto';
import { access, writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as x509 from '@peculiar/x509';

const ES256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 24 * 3600 * 1000;

export interface DevelopmentWalletProvider {
  key: string;
  chain: string;
  subject: string;
  notAfter: string;
  /** SHA-256 of the self-signed root's DER: what an issuer's trust list would pin. */
  rootSha256: string;
}

const newKeys = () =>
  crypto.subtle.generateKey(ES256, true, ['sign', 'verify']) as Promise<webcrypto.CryptoKeyPair>;
const serial = () => Buffer.from(crypto.getRandomValues(new Uint8Array(12))).toString('hex');

/**
 * A development wallet provider: a self-signed root (CA, key usage certificate signing) and a
 * signing certificate under it (end entity, digital signature only), each with key
 * identifiers, P-256 throughout. Files are created, never overwritten: key.pem (PKCS #8, mode
 * 0600) and chain.pem (signing certificate, then the root). The root's private key is not kept.
 */
export async function createDevelopmentWalletProvider(
  dir: string,
  name: string,
  now: Date,
): Promise<DevelopmentWalletProvider> {
  const key = path.join(dir, 'key.pem');
  const chain = path.join(dir, 'chain.pem');
  for (const file of [key, chain]) {
    const exists = await access(file).then(
      () => true,
      () => false,
    );
    if (exists) throw new Error(`${file} exists already; give another --dir (nothing was written)`);
  }
  const rootKeys = await newKeys();
  const signerKeys = await newKeys();
  // Structured attributes, never a DN string: a name with a comma or a plus would otherwise add
  // attributes of its own choosing (the same rule as development-certificate.ts).
  const nameOf = (commonName: string) =>
    new x509.Name([{ CN: [{ utf8String: commonName }] }, { O: [{ utf8String: name }] }]);
  const rootName = nameOf(`${name} development wallet provider root`);
  const signerName = nameOf(`${name} development wallet provider`);
  const subject = signerName.toString();
  const root = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: rootName,
    notBefore: new Date(now.getTime() - DAY),
    notAfter: new Date(now.getTime() + 10 * 365 * DAY),
    keys: rootKeys,
    signingAlgorithm: ES256,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(rootKeys.publicKey),
    ],
  });
  const signer = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: signerName,
    issuer: rootName,
    notBefore: new Date(now.getTime() - DAY),
    notAfter: new Date(now.getTime() + 365 * DAY),
    publicKey: signerKeys.publicKey,
    signingKey: rootKeys.privateKey,
    signingAlgorithm: ES256,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(signerKeys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(rootKeys.publicKey),
    ],
  });
  const privateKey = KeyObject.from(signerKeys.privateKey).export({ format: 'pem', type: 'pkcs8' });
  await writeFile(key, privateKey, { flag: 'wx', mode: 0o600 });
  await writeFile(chain, `${signer.toString('pem')}\n${root.toString('pem')}\n`, { flag: 'wx' });
  return {
    key,
    chain,
    subject,
    notAfter: signer.notAfter.toISOString(),
    rootSha256: createHash('sha256').update(Buffer.from(root.rawData)).digest('hex'),
  };
}
