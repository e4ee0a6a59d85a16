import type { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { pemCertificates } from '../keys/certificate-chain.ts';
import { ConfigError } from './config.ts';

/** Every PEM certificate of a file, in order; a file that holds none or an unreadable one is a ConfigError. */
export async function readCertificates(file: string, variable: string): Promise<X509Certificate[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError(variable, `cannot read ${file} (${(error as NodeJS.ErrnoException).code})`);
  }
  let certificates: X509Certificate[];
  try {
    certificates = pemCertificates(text);
  } catch {
    throw new ConfigError(variable, `${file} holds a certificate that cannot be read`);
  }
  if (certificates.length === 0) throw new ConfigError(variable, `${file} holds no PEM certificate`);
  return certificates;
}

/**
 * The CA certificates (PEM, any number) that a verifier's (VERIFIER_TRUST_ANCHORS) or a credential
 * issuer's (ISSUER_TRUST_ANCHORS) certificate may chain to.
 */
export async function loadTrustAnchors(
  file: string | undefined,
  variable: 'VERIFIER_TRUST_ANCHORS' | 'ISSUER_TRUST_ANCHORS' | 'WALLET_PROVIDER_TRUST_ANCHORS',
): Promise<X509Certificate[]> {
  return file ? readCertificates(file, variable) : [];
}
