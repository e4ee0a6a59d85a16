import { signCompactJwsES256 } from '../../keys/compact-jws.ts';
import {
  bitstringStatusEntry,
  type CredentialToIssue,
  holderDidOf,
  type IssuerSigningMaterial,
  prepareSigningMaterial,
  seconds,
  subjectClaimsOf,
} from '../credential-issuance.ts';

/**
 * Signs a VC-JWT (VC Data Model 1.1, JWT encoding §6.3.1: `jwt_vc_json`). `iss` is the did:jwk of
 * the issuer's ES256 key, not the https issuer identifier: VC-JWT readers, Coffer's wallet and
 * verifier among them, take the issuer as a DID whose key checks the signature; the x5c chain
 * still names the issuer's certificate for those that trust by X.509.
 */

/** A compact VC-JWT whose subject is the holder's DID (did:jwk of the proof key when given a key). */
export async function issueJwtVc(
  material: IssuerSigningMaterial,
  credential: CredentialToIssue,
  now: Date,
): Promise<string> {
  const claims = subjectClaimsOf(credential.claims);
  const prepared = prepareSigningMaterial(material);
  const subject = holderDidOf(credential.holder);
  const { validUntil, status } = credential;
  const payload = {
    iss: prepared.es256Did,
    sub: subject,
    iat: seconds(now),
    nbf: seconds(credential.validFrom),
    ...(validUntil ? { exp: seconds(validUntil) } : {}),
    jti: credential.id,
    vc: {
      '@context': ['https://www.w3.org/2018/credentials/v1'],
      id: credential.id,
      type: ['VerifiableCredential', credential.type],
      credentialSubject: { id: subject, ...claims },
      ...(status ? { credentialStatus: bitstringStatusEntry(status) } : {}),
    },
  };
  return signCompactJwsES256(
    { typ: 'JWT', kid: `${prepared.es256Did}#0`, x5c: prepared.es256.x5c },
    payload,
    prepared.es256Key,
  );
}
