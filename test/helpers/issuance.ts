import assert from 'node:assert/strict';
import { generateKeyPairSync, type JsonWebKey, type KeyObject, X509Certificate } from 'node:crypto';
import { fastBbs } from '../../src/bbs/index.ts';
import type { CredentialCheck, FormatId, ParsedCredential } from '../../src/formats/credential-format.ts';
import {
  generateBbsKey,
  type IssuerSigningMaterial,
  prepareSigningMaterial,
} from '../../src/formats/credential-issuance.ts';
import { inProcessOperations } from '../../src/formats/ldp-vc/bbs-2023/operations.ts';
import { createDocumentLoader } from '../../src/formats/ldp-vc/contexts/document-loader.ts';
import { createFormatRegistry } from '../../src/formats/registry.ts';
import { generateHolderKey } from '../../src/keys/holder-key.ts';
import { chainOf, type IssuerIdentity, makeIssuerIdentity } from './issuers/issuer-ca.ts';

/**
 * An issuer's signing material for Coffer's issuance functions, over an X.509 identity made with
 * @peculiar/x509 (not Coffer's code), and Coffer's own wallet checks of what it issues.
 */

export interface TestIssuer {
  identity: IssuerIdentity;
  material: IssuerSigningMaterial;
  /** The CA certificate, as ISSUER_TRUST_ANCHORS would hold it. */
  caDer: Uint8Array;
}

export async function makeTestIssuer(options: { intermediate?: boolean } = {}): Promise<TestIssuer> {
  // Its certificate names the host of its issuer identifier, as SD-JWT VC readers require.
  const identity = await makeIssuerIdentity('Coffer Test Issuer', { ...options, host: 'coffer.example' });
  const privateJwk = (await crypto.subtle.exportKey('jwk', identity.signer.keys.privateKey)) as JsonWebKey;
  const material = prepareSigningMaterial({
    issuerId: 'https://coffer.example/issuers/client-1',
    es256: { privateJwk, x5c: chainOf(identity) },
    bbs: await generateBbsKey(),
  });
  return { identity, material, caDer: new Uint8Array(Buffer.from(identity.ca.der, 'base64')) };
}

/** A wallet's fresh P-256 key, as OpenID4VCI proofs name it. */
export function proofKey(): { privateKey: KeyObject; publicJwk: JsonWebKey } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateKey, publicJwk: publicKey.export({ format: 'jwk' }) };
}

/** Coffer's account DID: the W3C formats' subject when the hosted wallet receives them. */
export const accountDid = () => generateHolderKey().did;

const jsonLd = { documentLoader: createDocumentLoader(async () => undefined) };
export const cofferFormats = createFormatRegistry({
  operations: inProcessOperations({ bbs: fastBbs, jsonLd }),
  jsonLd,
});

const sameKey = (a: JsonWebKey, b: JsonWebKey) =>
  a.kty === b.kty && a.crv === b.crv && a.x === b.x && (a.y ?? null) === (b.y ?? null);

/**
 * What Coffer's hosted wallet does with a credential received by OpenID4VCI
 * (oid4vci/received-credentials.ts, checkedCopy): the store's parse with the issuer's CA trusted,
 * the holder binding (the proof key, or the account's DID for the W3C formats), then every
 * signature and digest.
 */
export async function receivedByCoffer(
  issuer: TestIssuer,
  format: FormatId,
  value: unknown,
  holder: { jwk: JsonWebKey } | { did: string },
): Promise<ParsedCredential & { check: CredentialCheck }> {
  const parsed = cofferFormats.get(format).parse(value, {
    now: new Date(),
    issuerTrustAnchors: [new X509Certificate(issuer.caDer)],
  });
  if ('jwk' in holder) {
    assert.equal(parsed.holder.kind, 'key');
    assert.ok(
      parsed.holder.kind === 'key' && sameKey(parsed.holder.jwk, holder.jwk),
      'bound to the proof key',
    );
  } else {
    assert.deepEqual(parsed.holder, { kind: 'did', did: holder.did });
  }
  return { ...parsed, check: await parsed.verify() };
}
