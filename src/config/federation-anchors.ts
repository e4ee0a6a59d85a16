import { readFile } from 'node:fs/promises';
import { isEntityIdentifier } from '../trust/federation/entity-statement.ts';
import type { TrustAnchor } from '../trust/federation/trust-chain.ts';
import { ConfigError } from './config.ts';

const VARIABLE = 'FEDERATION_TRUST_ANCHORS';

/**
 * FEDERATION_TRUST_ANCHORS: a JSON file `[{"entity_id": "https://…", "jwks": {"keys": […]}}]`,
 * the OpenID Federation trust anchors and their federation keys, configured here because an
 * anchor's own Entity Configuration is checked against them, never against what it sends.
 */
export async function loadFederationAnchors(file: string | undefined): Promise<TrustAnchor[]> {
  if (!file) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    const why =
      error instanceof SyntaxError
        ? 'is not JSON'
        : `cannot be read (${(error as NodeJS.ErrnoException).code})`;
    throw new ConfigError(VARIABLE, `${file} ${why}`);
  }
  if (!Array.isArray(parsed) || parsed.length === 0)
    throw new ConfigError(VARIABLE, `${file} must hold a non-empty array of {entity_id, jwks}`);
  return parsed.map((entry: unknown, index) => {
    const { entity_id: entityId, jwks } = (entry ?? {}) as { entity_id?: unknown; jwks?: { keys?: unknown } };
    if (!isEntityIdentifier(entityId))
      throw new ConfigError(VARIABLE, `entry ${index}: entity_id must be an https entity identifier`);
    const keys = jwks?.keys;
    if (!Array.isArray(keys) || keys.length === 0)
      throw new ConfigError(VARIABLE, `entry ${index}: jwks must hold the anchor's federation keys`);
    for (const key of keys) {
      if (key === null || typeof key !== 'object' || typeof key.kid !== 'string')
        throw new ConfigError(VARIABLE, `entry ${index}: every key needs a kid`);
      if ('d' in key || key.kty === 'oct')
        throw new ConfigError(VARIABLE, `entry ${index}: holds a private or symmetric key`);
    }
    return { entityId, jwks: { keys } };
  });
}
