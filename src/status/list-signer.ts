import type { KeyObject } from 'node:crypto';

/**
 * The issuer's ES256 key and its certificate chain, leaf first, as `x5c` carries it (base64 DER):
 * what signs its JOSE and COSE status lists, so that a holder or verifier checks a list with the
 * very key and chain that signed the credential.
 */
export interface ListSigner {
  privateKey: KeyObject;
  x5c: string[];
}
