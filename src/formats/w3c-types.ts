import type { JsonLdOptions } from '@digitalbazaar/di-sd-primitives';
import jsonld from 'jsonld';

/**
 * A W3C credential's types as IRIs (OpenID4VP B.1.1: `type_values` are compared after applying
 * the `@context`), with the bundled and registered contexts only. Empty when the contexts are
 * unknown: such a credential matches no `type_values`.
 */
export async function expandedTypes(
  document: Record<string, unknown>,
  jsonLd: JsonLdOptions,
): Promise<string[]> {
  try {
    const [node] = (await jsonld.expand(
      { '@context': document['@context'], type: document['type'] },
      { documentLoader: jsonLd.documentLoader },
    )) as Array<{ '@type'?: string[] }>;
    return node?.['@type'] ?? [];
  } catch {
    return [];
  }
}
