import { randomBytes, verify } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { createVerifyCryptosuite } from '@digitalbazaar/bbs-2023-cryptosuite';
import { DataIntegrityProof } from '@digitalbazaar/data-integrity';
import * as vc from '@digitalbazaar/vc';
import { base64url, Holder, IssuerSigned } from '@owf/mdoc';
import { getListFromStatusListJWT } from '@sd-jwt/jwt-status-list';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { exportJWK, importX509, type JWK, jwtVerify } from 'jose';
import { deriveWithStock, stockDocumentLoader } from '../credentials/stock-issuer.ts';
import { testMdocContext } from '../helpers/issuers/mdoc-issuer.ts';
import { sha256 } from '../helpers/issuers/sd-jwt-issuer.ts';
import type { Certified } from '../oid4vp/certificates.ts';
import { x5cLeafOf } from './test-wallet.ts';

/**
 * Checks of issued credentials and status lists by code that is not Coffer's: @sd-jwt/*,
 * @owf/mdoc, jose, the Digital Bazaar stack, and a bitstring decoder written here.
 */

const es256 = (leaf: ReturnType<typeof x5cLeafOf>) => (data: string, signature: string) =>
  verify(
    'sha256',
    Buffer.from(data),
    { key: leaf.publicKey, dsaEncoding: 'ieee-p1363' },
    Buffer.from(signature, 'base64url'),
  );

/** @sd-jwt/sd-jwt-vc's verdict: signature by the x5c leaf (chained to the CA), status list too. */
export async function verifySdJwtVc(credential: string, ca: Certified, fetch: typeof globalThis.fetch) {
  const leaf = x5cLeafOf(credential.split('~')[0]!, ca);
  const instance = new SDJwtVcInstance({
    hasher: sha256,
    hashAlg: 'sha-256',
    verifier: es256(leaf),
    statusListFetcher: async (uri) => (await fetch(uri)).text(),
    statusVerifier: (data, signature) => es256(x5cLeafOf(data, ca))(data, signature),
  });
  return instance.verify(credential);
}

/** @owf/mdoc: issuerAuth to the CA, digests, validity; the device key as the MSO names it. */
export async function verifyMdoc(credential: string, ca: Certified) {
  await Holder.verifyIssuerSigned(
    {
      issuerSigned: credential,
      trustedCertificates: [new Uint8Array(Buffer.from(ca.der, 'base64'))],
      now: new Date(),
    },
    testMdocContext,
  );
  const issuerSigned = IssuerSigned.decode(base64url.decode(credential));
  const mso = issuerSigned.issuerAuth.mobileSecurityObject;
  const { kty, crv, x, y } = mso.deviceKeyInfo.deviceKey.jwk as Record<string, unknown>;
  const elements = new Map<string, Record<string, unknown>>();
  for (const [namespace, items] of issuerSigned.issuerNamespaces?.issuerNamespaces ?? []) {
    elements.set(
      namespace,
      Object.fromEntries(items.map((item) => [item.elementIdentifier, item.elementValue])),
    );
  }
  return { docType: mso.docType, deviceKey: { kty, crv, x, y }, elements };
}

/**
 * jose's jwtVerify of a VC-JWT with the key of its x5c leaf; `iss` is the did:jwk of that same
 * key (as VC-JWT readers resolve issuers), checked here too.
 */
export async function verifyVcJwt(credential: string, ca: Certified) {
  const leaf = x5cLeafOf(credential, ca);
  const key = await importX509(leaf.toString(), 'ES256');
  const verified = await jwtVerify(credential, key);
  const iss = String(verified.payload.iss);
  if (!iss.startsWith('did:jwk:')) throw new Error(`iss is not a did:jwk: ${iss}`);
  const named = JSON.parse(Buffer.from(iss.slice(8), 'base64url').toString());
  if (!sameKey(await exportJWK(key), named)) throw new Error('iss names another key than x5c');
  return verified;
}

/**
 * The stock Digital Bazaar stack on an ldp_vc: a derived proof disclosing `pointers`, then
 * @digitalbazaar/vc verifyCredential; its status check records the entry it was shown.
 */
export async function deriveAndVerifyLdpVc(credential: object, pointers: string[]) {
  const header = new Uint8Array(randomBytes(16));
  const derived = await deriveWithStock(credential, pointers, header);
  const statusEntries: unknown[] = [];
  const result = await vc.verifyCredential({
    credential: derived,
    suite: new DataIntegrityProof({
      cryptosuite: createVerifyCryptosuite({ expectedPresentationHeader: header }),
    }),
    documentLoader: stockDocumentLoader(),
    checkStatus: async ({ credential: c }: { credential: { credentialStatus: unknown } }) => {
      statusEntries.push(c.credentialStatus);
      return { verified: true };
    },
  });
  return { derived, result, statusEntries };
}

export const sameKey = (a: JWK, b: Record<string, unknown>) =>
  a.kty === b['kty'] && a.crv === b['crv'] && a.x === b['x'] && a.y === b['y'];

/** A Token Status List JWT, its signature checked with jose, read by @sd-jwt/jwt-status-list. */
export async function tokenStatusOf(listJwt: string, ca: Certified, index: number) {
  const leaf = x5cLeafOf(listJwt, ca);
  await jwtVerify(listJwt, await importX509(leaf.toString(), 'ES256'), { typ: 'statuslist+jwt' });
  return getListFromStatusListJWT(listJwt).getStatus(index);
}

/**
 * The bit at `index` of a Bitstring Status List credential (VC-JWT), decoded here: the
 * encodedList is multibase 'u' base64url of GZIP'd bytes, bit 0 the most significant of byte 0.
 */
export async function bitstringStatusOf(listJwt: string, ca: Certified, index: number) {
  const leaf = x5cLeafOf(listJwt, ca);
  const { payload } = await jwtVerify(listJwt, await importX509(leaf.toString(), 'ES256'));
  const subject = payload['credentialSubject'] as { type: string; encodedList: string };
  if (subject.type !== 'BitstringStatusList') throw new Error(`not a bitstring list: ${subject.type}`);
  if (!subject.encodedList.startsWith('u')) throw new Error('encodedList is not multibase base64url');
  const bytes = gunzipSync(Buffer.from(subject.encodedList.slice(1), 'base64url'));
  if (bytes.length < 16 * 1024) throw new Error('a bitstring list holds at least 131,072 entries');
  return (bytes[index >> 3]! >> (7 - (index & 7))) & 1;
}
