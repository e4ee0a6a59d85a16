import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pemCertificates } from '../keys/certificate-chain.ts';
import type { TrustedListKind, TrustedListSource } from '../trust/trusted-lists/trusted-list.ts';
import { ConfigError } from './config.ts';

const VARIABLE = 'TRUSTED_LISTS';
const KINDS: TrustedListKind[] = ['etsi-119612', 'lote-119602'];

const readable = async (file: string, what: string): Promise<string> => {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError(
      VARIABLE,
      `${what} ${file} cannot be read (${(error as NodeJS.ErrnoException).code})`,
    );
  }
};

/**
 * TRUSTED_LISTS: a JSON file `[{"url": "https://…", "signers": "<PEM file>", "kind":
 * "etsi-119612" | "lote-119602"}]`. The signer certificates are configured here because a list's
 * signature is checked against them, never against the certificate it carries. A relative PEM
 * path is taken from the JSON file's folder.
 */
export async function loadTrustedLists(file: string | undefined): Promise<TrustedListSource[]> {
  if (!file) return [];
  let parsed: unknown;
  const text = await readable(file, 'the file');
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ConfigError(VARIABLE, `${file} is not JSON`);
  }
  if (!Array.isArray(parsed) || parsed.length === 0)
    throw new ConfigError(VARIABLE, `${file} must hold a non-empty array of {url, signers, kind}`);
  const sources: TrustedListSource[] = [];
  for (const [index, entry] of parsed.entries()) {
    const { url, signers, kind } = (entry ?? {}) as { url?: unknown; signers?: unknown; kind?: unknown };
    if (typeof url !== 'string' || !URL.canParse(url) || new URL(url).protocol !== 'https:')
      throw new ConfigError(VARIABLE, `entry ${index}: url must be an https URL`);
    if (sources.some((s) => s.url === url))
      throw new ConfigError(VARIABLE, `entry ${index}: ${url} is listed twice`);
    if (!KINDS.includes(kind as TrustedListKind))
      throw new ConfigError(VARIABLE, `entry ${index}: kind must be one of ${KINDS.join(', ')}`);
    if (typeof signers !== 'string' || !signers)
      throw new ConfigError(
        VARIABLE,
        `entry ${index}: signers must be the path of a PEM file of signer certificates`,
      );
    const pemFile = path.resolve(path.dirname(file), signers);
    let certificates: TrustedListSource['signers'];
    try {
      certificates = pemCertificates(await readable(pemFile, `entry ${index}: the signer file`));
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      throw new ConfigError(VARIABLE, `entry ${index}: ${pemFile} holds a certificate that cannot be read`);
    }
    if (certificates.length === 0)
      throw new ConfigError(VARIABLE, `entry ${index}: ${pemFile} holds no PEM certificate`);
    sources.push({ url, kind: kind as TrustedListKind, signers: certificates });
  }
  return sources;
}
