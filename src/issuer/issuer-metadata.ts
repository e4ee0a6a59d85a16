import { signCompactJwsES256 } from '../keys/compact-jws.ts';
import type { CredentialConfiguration } from './configurations.ts';
import { configurationMetadata } from './configurations.ts';
import type { IssuerKeys } from './issuer-keys.ts';
import { encryptionMetadata } from './message-encryption.ts';

export const issuerEndpoints = (issuerId: string) => ({
  credential_endpoint: `${issuerId}/credential`,
  nonce_endpoint: `${issuerId}/nonce`,
  deferred_credential_endpoint: `${issuerId}/deferred-credential`,
  notification_endpoint: `${issuerId}/notification`,
});

/**
 * The issuer's batch_size (§12.2.4): the largest of its configurations'. It is issuer-wide, so a
 * wallet may send that many proofs for any configuration (the credential endpoint then issues
 * the copies that configuration allows).
 */
export const advertisedBatchSize = (configurations: Map<string, CredentialConfiguration>) =>
  Math.max(1, ...[...configurations.values()].map((c) => c.batch_size ?? 1));

/** Credential Issuer Metadata (§12.2.4) of one issuer. */
export function credentialIssuerMetadata(
  keys: IssuerKeys,
  configurations: Map<string, CredentialConfiguration>,
  options: { authorizationServer: string; name: string },
) {
  const batch = advertisedBatchSize(configurations);
  return {
    credential_issuer: keys.issuerId,
    authorization_servers: [options.authorizationServer],
    ...issuerEndpoints(keys.issuerId),
    ...encryptionMetadata(keys.encryption),
    ...(batch >= 2 ? { batch_credential_issuance: { batch_size: batch } } : {}),
    display: [{ name: options.name }],
    credential_configurations_supported: Object.fromEntries(
      [...configurations].map(([id, configuration]) => [
        id,
        configurationMetadata(configuration, { keyAttestations: keys.haip }),
      ]),
    ),
  };
}

/**
 * Signed metadata (§12.2.3): the same document as a JWT by the issuer's key, `x5c` its chain,
 * `sub` the issuer identifier, so a wallet ties the metadata to a certificate it trusts.
 */
export function signMetadata(
  keys: IssuerKeys,
  metadata: Record<string, unknown>,
  nowSeconds: number,
): string {
  return signCompactJwsES256(
    { typ: 'openidvci-issuer-metadata+jwt', x5c: keys.es256.x5c },
    { ...metadata, iss: keys.issuerId, sub: keys.issuerId, iat: nowSeconds, exp: nowSeconds + 86_400 },
    keys.es256.privateKey,
  );
}
