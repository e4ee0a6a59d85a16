import { base58btc } from 'multiformats/bases/base58';

/** Multicodec `bls12_381-g2-pub` (0xeb) as an unsigned varint: the did:key prefix of BBS keys. */
const BLS12_381_G2_PREFIX = Uint8Array.of(0xeb, 0x01);

export interface IssuerKey {
  /** The DID that controls the key: the issuer, if the proof is genuine. */
  controller: string;
  /** The compressed G2 point (96 bytes) that BBS verifies with. */
  publicKey: Uint8Array;
}

/** Why a verification method names no key Coffer can use; the message is for the issuer. */
export class IssuerKeyError extends Error {
  override readonly name = 'IssuerKeyError';
}

/**
 * Resolves a bbs-2023 verification method locally: `did:key:zUC7…#zUC7…`, a BLS12-381 G2
 * public key (did:key method, §3.1.4 "Multikey"). No other DID method is resolved, so nothing
 * is ever fetched to check a credential.
 */
export function resolveIssuerKey(verificationMethod: unknown): IssuerKey {
  if (typeof verificationMethod !== 'string' || verificationMethod.length > 512) {
    throw new IssuerKeyError('the verification method must be a did:key URL');
  }
  const match = /^did:key:(z[1-9A-HJ-NP-Za-km-z]+)#(z[1-9A-HJ-NP-Za-km-z]+)$/.exec(verificationMethod);
  if (!match) {
    throw new IssuerKeyError(
      `the verification method ${verificationMethod} is not a did:key URL (did:key:z…#z…); only did:key issuers are resolved`,
    );
  }
  const [, multibase, fragment] = match;
  if (fragment !== multibase) {
    throw new IssuerKeyError(`the verification method ${verificationMethod} names no key of its did:key`);
  }
  let bytes: Uint8Array;
  try {
    bytes = base58btc.decode(multibase!);
  } catch {
    throw new IssuerKeyError(`the did:key in ${verificationMethod} is not valid base58btc`);
  }
  if (bytes.length !== 98 || bytes[0] !== BLS12_381_G2_PREFIX[0] || bytes[1] !== BLS12_381_G2_PREFIX[1]) {
    throw new IssuerKeyError(
      `the did:key in ${verificationMethod} is not a BLS12-381 G2 key, which bbs-2023 requires`,
    );
  }
  return { controller: `did:key:${multibase}`, publicKey: bytes.slice(2) };
}
