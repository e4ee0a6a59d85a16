import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createDocumentLoader } from '../../../src/formats/ldp-vc/contexts/document-loader.ts';

/** The W3C bbs-2023 test vectors, read from ../shared/vectors (never copied into the project). */
export const VECTORS = path.resolve(import.meta.dirname, '../../../../shared/vectors');

// biome-ignore lint/suspicious/noExplicitAny: vectors are arbitrary JSON
export function readVector(file: string): any {
  return JSON.parse(readFileSync(path.join(VECTORS, 'w3c-vc-di-bbs', file), 'utf8'));
}

export const CITIZENSHIP_V4RC1 = 'https://w3id.org/citizenship/v4rc1';

/** Bundled contexts plus the citizenship context the enhanced example needs, as if registered. */
export function vectorJsonLd() {
  const citizenship = JSON.parse(
    readFileSync(path.join(VECTORS, 'contexts/citizenship-v4rc1.jsonld'), 'utf8'),
  );
  return {
    documentLoader: createDocumentLoader(async (url) =>
      url === CITIZENSHIP_V4RC1 ? citizenship : undefined,
    ),
  };
}

export const vectorPublicKey = () => Buffer.from(readVector('BBSKeyMaterial.json').publicKeyHex, 'hex');

/** The presentation header of the derived vectors: bytes 0x11 0x33 0x77 0xaa. */
export function vectorPresentationHeader(file = 'derivedDisclosureData.json'): Uint8Array {
  const header = readVector(file).presentationHeader as Record<string, number>;
  return Uint8Array.from(Object.keys(header).map((i) => header[i]!));
}
