import { randomBytes, randomUUID } from 'node:crypto';
import {
  createDiscloseCryptosuite,
  createSignCryptosuite,
  createVerifyCryptosuite,
} from '@digitalbazaar/bbs-2023-cryptosuite';
import * as Bls12381Multikey from '@digitalbazaar/bls12-381-multikey';
import { DataIntegrityProof } from '@digitalbazaar/data-integrity';
import dataIntegrityContext from '@digitalbazaar/data-integrity-context';
import { CachedResolver } from '@digitalbazaar/did-io';
import { driver as didKeyDriver } from '@digitalbazaar/did-method-key';
import * as Ed25519Multikey from '@digitalbazaar/ed25519-multikey';
import { cryptosuite as eddsaRdfc2022 } from '@digitalbazaar/eddsa-rdfc-2022-cryptosuite';
import multikeyContext from '@digitalbazaar/multikey-context';
import { securityLoader } from '@digitalbazaar/security-document-loader';
import * as vc from '@digitalbazaar/vc';

/**
 * The stock Digital Bazaar stack as an independent issuer and verifier: credentials are signed
 * and derived proofs verified by code Coffer does not share, as DESIGN.md asks.
 */

/** A claims context of the kind an issuer publishes; Coffer must have it registered. */
export const PERSON_CONTEXT_URL = 'https://issuer.example/contexts/person/v1';
export const PERSON_CONTEXT = {
  '@context': {
    '@protected': true,
    PersonCredential: 'https://issuer.example/vocab#PersonCredential',
    first_name: 'https://issuer.example/vocab#first_name',
    last_name: 'https://issuer.example/vocab#last_name',
    date_of_birth: 'https://issuer.example/vocab#date_of_birth',
    location: 'https://issuer.example/vocab#location',
    ...Object.fromEntries(
      Array.from({ length: 60 }, (_, i) => [`claim_${i}`, `https://issuer.example/vocab#claim_${i}`]),
    ),
  },
};

/**
 * The stock loader: contexts bundled with the stack, Data Integrity, Multikey, the claims context,
 * and did:key for BLS12-381 keys (issuers) and Ed25519 keys (holders signing presentations).
 */
export function stockDocumentLoader(extra: Record<string, object> = {}) {
  const loader = securityLoader();
  for (const [url, document] of [...dataIntegrityContext.contexts, ...multikeyContext.contexts]) {
    loader.addStatic(url, document);
  }
  loader.addStatic(PERSON_CONTEXT_URL, PERSON_CONTEXT);
  for (const [url, document] of Object.entries(extra)) loader.addStatic(url, document);
  const didKey = didKeyDriver();
  // The driver picks a key type by the multibase's first characters. A BLS12-381 G2 key's
  // did:key starts zUC7 except when its first bytes are small (0x80 0x00…, about one key in 50),
  // where base58 makes it zUC6: both are the same key type.
  didKey.use({ multibaseMultikeyHeader: 'zUC7', fromMultibase: Bls12381Multikey.from });
  didKey.use({ multibaseMultikeyHeader: 'zUC6', fromMultibase: Bls12381Multikey.from });
  didKey.use({ multibaseMultikeyHeader: 'z6Mk', fromMultibase: Ed25519Multikey.from });
  const resolver = new CachedResolver();
  resolver.use(didKey);
  loader.setDidResolver(resolver);
  const load = loader.build();
  // Untagged, so that jsonld.js's process-wide context cache never hands the server under test
  // a context that only this stock issuer knows.
  return async (url: string) => {
    const { tag: _tag, ...document } = await load(url);
    return document;
  };
}

export interface StockIssuer {
  did: string;
  verificationMethod: string;
  publicKey: Uint8Array;
  issue(credential: object, mandatoryPointers?: string[]): Promise<Record<string, unknown>>;
}

export async function createStockIssuer(contexts: Record<string, object> = {}): Promise<StockIssuer> {
  const keyPair = await Bls12381Multikey.generateBbsKeyPair({
    algorithm: Bls12381Multikey.ALGORITHMS.BBS_BLS12381_SHA256,
  });
  const did = `did:key:${keyPair.publicKeyMultibase}`;
  keyPair.controller = did;
  keyPair.id = `${did}#${keyPair.publicKeyMultibase}`;
  const documentLoader = stockDocumentLoader(contexts);
  return {
    did,
    verificationMethod: keyPair.id,
    publicKey: keyPair.publicKey,
    async issue(credential, mandatoryPointers = ['/issuer']) {
      const suite = new DataIntegrityProof({
        signer: keyPair.signer(),
        cryptosuite: createSignCryptosuite({ mandatoryPointers }),
      });
      return vc.issue({ credential: structuredClone(credential), suite, documentLoader });
    },
  };
}

/** A person credential with the given claims, for the subject DID. */
export function personCredential(
  issuer: string,
  subject: string,
  claims: Record<string, unknown> = {
    first_name: 'Ada',
    last_name: 'Lovelace',
    date_of_birth: '1815-12-10',
    location: 'London',
  },
  extra: Record<string, unknown> = {},
) {
  return {
    '@context': ['https://www.w3.org/ns/credentials/v2', PERSON_CONTEXT_URL],
    id: `urn:uuid:${randomUUID()}`,
    type: ['VerifiableCredential', 'PersonCredential'],
    issuer,
    validFrom: '2024-01-01T00:00:00Z',
    credentialSubject: { id: subject, ...claims },
    ...extra,
  };
}

/** The stock verifier's verdict on a derived credential (vc.verifyCredential with bbs-2023). */
export async function verifyWithStock(derived: object, presentationHeader: Uint8Array) {
  const suite = new DataIntegrityProof({
    cryptosuite: createVerifyCryptosuite({ expectedPresentationHeader: presentationHeader }),
  });
  return vc.verifyCredential({ credential: derived, suite, documentLoader: stockDocumentLoader() });
}

/**
 * The stock verifier's verdict on a derived credential as the proof endpoint returns it: without
 * the endpoint's `revealedPointers` and `revealedIndices` annotations, which are not signed.
 */
export async function verifyPresentedWithStock(
  presented: { proof: Record<string, unknown> },
  presentationHeader: Uint8Array,
) {
  const { revealedPointers: _pointers, revealedIndices: _indices, ...proof } = presented.proof;
  return verifyWithStock({ ...presented, proof }, presentationHeader);
}

/** A derived credential made by the stock stack, as a holder outside Coffer would. */
export async function deriveWithStock(
  signed: object,
  selectivePointers: string[],
  presentationHeader: Uint8Array,
  documentLoader = stockDocumentLoader(),
) {
  const suite = new DataIntegrityProof({
    cryptosuite: createDiscloseCryptosuite({ selectivePointers, presentationHeader }),
  });
  return vc.derive({ verifiableCredential: signed, suite, documentLoader });
}

/** A holder outside Coffer: an Ed25519 did:key, its key pair made again from the seed with the DID as controller. */
export interface StockHolder {
  did: string;
  key: Awaited<ReturnType<typeof Ed25519Multikey.generate>>;
}

export async function createStockHolder(): Promise<StockHolder> {
  const seed = randomBytes(32);
  const { publicKeyMultibase } = await Ed25519Multikey.generate({ seed });
  const did = `did:key:${publicKeyMultibase}`;
  return { did, key: await Ed25519Multikey.generate({ seed, controller: did }) };
}

/**
 * A VP of one credential claiming `holder`, signed by `signer` with eddsa-rdfc-2022 through
 * @digitalbazaar/vc's signPresentation (challenge = the request's nonce, domain = its client id).
 */
export async function signPresentationWithStock(
  credential: object,
  holder: string,
  signer: StockHolder['key'],
  binding: { challenge: string; domain: string },
  // biome-ignore lint/suspicious/noExplicitAny: presentations are arbitrary JSON-LD
): Promise<any> {
  const presentation = {
    '@context': ['https://www.w3.org/ns/credentials/v2'],
    type: ['VerifiablePresentation'],
    holder,
    verifiableCredential: [credential],
  };
  return vc.signPresentation({
    presentation,
    suite: new DataIntegrityProof({ signer: signer.signer(), cryptosuite: eddsaRdfc2022 }),
    challenge: binding.challenge,
    domain: binding.domain,
    documentLoader: stockDocumentLoader(),
  });
}
