// The stock Digital Bazaar stack ships no types; tests use it as the independent issuer and
// verifier, through its documented API.
declare module '@digitalbazaar/vc';
declare module '@digitalbazaar/bls12-381-multikey';
declare module '@digitalbazaar/bbs-2023-cryptosuite';
declare module '@digitalbazaar/security-document-loader';
declare module '@digitalbazaar/did-io';
declare module '@digitalbazaar/did-method-key';

// Coffer's own declaration of this module names only what src uses; the stock verifier also
// resolves did:key Ed25519 keys with `from`, and its holders are made with `generate`.
declare module '@digitalbazaar/ed25519-multikey' {
  export function from(key: object): Promise<Ed25519KeyPair>;
  export function generate(options?: {
    id?: string;
    controller?: string;
    seed?: Uint8Array;
  }): Promise<Ed25519KeyPair & { publicKeyMultibase: string }>;
}
