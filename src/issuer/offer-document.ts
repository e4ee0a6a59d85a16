import { createHash, createHmac, type KeyObject, randomInt } from 'node:crypto';

export const PRE_AUTHORIZED_GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';

/**
 * The pre-authorized code of an offer: an HMAC of its id, so the offer fetched by reference can
 * carry it while the database keeps only its hash.
 */
export const preAuthorizedCodeOf = (key: KeyObject, offerId: string) =>
  createHmac('sha256', key).update(`pre-authorized-code:${offerId}`).digest('base64url');

export const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');

/** A transaction code of `length` characters: digits, or letters and digits easy to read aloud. */
export function newTxCode(length: number, mode: 'numeric' | 'text'): string {
  const alphabet = mode === 'numeric' ? '0123456789' : 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  return Array.from({ length }, () => alphabet[randomInt(alphabet.length)]).join('');
}

/** A transaction code is checked against a hash bound to its offer. */
export const txCodeHash = (offerId: string, txCode: string) => sha256(`tx_code:${offerId}:${txCode}`);

export interface OfferGrant {
  kind: 'pre-authorized_code' | 'authorization_code';
  preAuthorizedCode?: string;
  txCode?: { length: number; input_mode: 'numeric' | 'text'; description?: string } | undefined;
  issuerState?: string;
}

/** The Credential Offer (§4.1.1) as a wallet reads it. */
export function credentialOfferOf(issuerId: string, configurationIds: string[], grant: OfferGrant) {
  const grants =
    grant.kind === 'pre-authorized_code'
      ? {
          [PRE_AUTHORIZED_GRANT]: {
            'pre-authorized_code': grant.preAuthorizedCode,
            ...(grant.txCode ? { tx_code: grant.txCode } : {}),
          },
        }
      : { authorization_code: { issuer_state: grant.issuerState } };
  return { credential_issuer: issuerId, credential_configuration_ids: configurationIds, grants };
}
