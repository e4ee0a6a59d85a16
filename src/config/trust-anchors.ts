import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ConfigError } from '../config/config.ts';

/** The CA certificates (PEM, any number) that a verifier's certificate may chain to. */
export async function loadTrustAnchors(file: string | undefined): Promise<X509Certificate[]> {
  if (!file) return [];
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError(
      'VERIFIER_TRUST_ANCHORS',
      `cannot read ${file} (${(error as NodeJS.ErrnoException).code})`,
    );
  }
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0)
    throw new ConfigError('VERIFIER_TRUST_ANCHORS', `${file} holds no PEM certificate`);
  try {
    return blocks.map((pem) => new X509Certificate(pem));
  } catch {
    throw new ConfigError('VERIFIER_TRUST_ANCHORS', `${file} holds a certificate that cannot be read`);
  }
}
