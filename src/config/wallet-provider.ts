import { createPrivateKey, createPublicKey, type KeyObject, type X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { validAt } from '../keys/certificate-chain.ts';
import { ConfigError } from './config.ts';
import { readCertificates } from './trust-anchors.ts';

/**
 * Coffer as its own wallet provider (OpenID4VCI Annexes D and E, HAIP §4.4): the key that signs
 * its Wallet Attestations and key attestations, and the certificate chain that names that key
 * (leaf first), which every attestation carries in `x5c`.
 */
export interface WalletProvider {
  privateKey: KeyObject;
  /** Always ES256: HAIP's algorithm, and the one the attestation's proof of possession reuses. */
  alg: 'ES256';
  /** The chain as `x5c` carries it: base64 DER, leaf first. */
  x5c: string[];
  leaf: X509Certificate;
}

async function readPrivateKey(file: string): Promise<KeyObject> {
  let pem: string;
  try {
    pem = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError(
      'WALLET_PROVIDER_KEY',
      `cannot read ${file} (${(error as NodeJS.ErrnoException).code})`,
    );
  }
  try {
    return createPrivateKey(pem);
  } catch {
    throw new ConfigError('WALLET_PROVIDER_KEY', `${file} holds no PEM private key`);
  }
}

const sameKey = (a: KeyObject, b: KeyObject) =>
  a.export({ format: 'der', type: 'spki' }).equals(b.export({ format: 'der', type: 'spki' }));

/**
 * Reads WALLET_PROVIDER_KEY and WALLET_PROVIDER_CHAIN, or gives null when they are not set. The
 * key must be P-256 and the public key of the chain's first certificate; an expired leaf is
 * refused at start, because every issuer would refuse its attestations.
 */
export async function loadWalletProvider(
  keyFile: string | undefined,
  chainFile: string | undefined,
  now: Date,
): Promise<WalletProvider | null> {
  if (!keyFile || !chainFile) return null;
  const privateKey = await readPrivateKey(keyFile);
  if (privateKey.asymmetricKeyType !== 'ec' || privateKey.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new ConfigError(
      'WALLET_PROVIDER_KEY',
      'must be a P-256 EC private key: HAIP 1.0 attestations are signed with ES256',
    );
  }
  const chain = await readCertificates(chainFile, 'WALLET_PROVIDER_CHAIN');
  const leaf = chain[0]!;
  if (!sameKey(leaf.publicKey, createPublicKey(privateKey))) {
    throw new ConfigError(
      'WALLET_PROVIDER_CHAIN',
      `its first certificate is not the certificate of the key in WALLET_PROVIDER_KEY (${keyFile})`,
    );
  }
  if (!validAt(leaf, now)) {
    throw new ConfigError(
      'WALLET_PROVIDER_CHAIN',
      `its first certificate is valid from ${leaf.validFrom} to ${leaf.validTo}, not now`,
    );
  }
  for (const [i, certificate] of chain.entries()) {
    const issuer = chain[i + 1];
    if (issuer && !(certificate.checkIssued(issuer) && certificate.verify(issuer.publicKey))) {
      throw new ConfigError(
        'WALLET_PROVIDER_CHAIN',
        `certificate ${i + 1} is not issued by certificate ${i + 2}: give the chain leaf first, each certificate followed by its issuer`,
      );
    }
  }
  return { privateKey, alg: 'ES256', x5c: chain.map((c) => c.raw.toString('base64')), leaf };
}
