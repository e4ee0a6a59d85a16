import { readFile } from 'node:fs/promises';
import type { JWK } from 'jose';
import { ConfigError } from './config.ts';

const VARIABLE = 'VERIFIER_ATTESTATION_ISSUERS';

/**
 * The public keys (a JWKS file) whose Verifier Attestation JWTs the wallet trusts. A key may
 * carry `iss`, a member of Coffer's own: then only attestations with that issuer are accepted
 * under it, so that one trusted issuer cannot speak for another.
 */
export async function loadVerifierAttestationIssuers(file: string | undefined): Promise<JWK[]> {
  if (!file) return [];
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(VARIABLE, code ? `cannot read ${file} (${code})` : `${file} is not JSON`);
  }
  const keys = (value as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0) {
    throw new ConfigError(VARIABLE, `${file} is not a JWKS with at least one key`);
  }
  for (const [i, key] of keys.entries()) {
    if (key === null || typeof key !== 'object' || typeof key.kty !== 'string') {
      throw new ConfigError(VARIABLE, `key ${i} of ${file} is not a JWK`);
    }
    if ('d' in key || 'p' in key || 'k' in key) {
      throw new ConfigError(VARIABLE, `key ${i} of ${file} is not a public key`);
    }
    if (key.iss !== undefined && typeof key.iss !== 'string') {
      throw new ConfigError(VARIABLE, `key ${i} of ${file} has an iss that is not a string`);
    }
  }
  return keys as JWK[];
}
