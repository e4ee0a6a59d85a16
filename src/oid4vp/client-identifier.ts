import { invalidRequest } from './oid4vp-errors.ts';

/**
 * Client identifier prefixes (§5.9): `x509_hash:` and `redirect_uri:` are supported; an id
 * without a prefix names a verifier registered with `coffer client create --verifier`.
 */
export type ClientIdentifier =
  | { prefix: 'pre-registered'; clientId: string; registeredId: number }
  | { prefix: 'x509_hash'; clientId: string; hash: string }
  | { prefix: 'redirect_uri'; clientId: string; uri: string };

/** Prefixes the specification defines that Coffer does not support; refused rather than looked up. */
const UNSUPPORTED = new Set([
  'openid_federation',
  'decentralized_identifier',
  'verifier_attestation',
  'x509_san_dns',
  'origin',
  'https',
  'did',
]);

export function parseClientIdentifier(clientId: unknown): ClientIdentifier {
  if (typeof clientId !== 'string' || clientId.length === 0) throw invalidRequest('client_id is required');
  if (clientId.length > 2048) throw invalidRequest('client_id is too long');
  const colon = clientId.indexOf(':');
  const prefix = colon < 0 ? undefined : clientId.slice(0, colon);
  const value = colon < 0 ? clientId : clientId.slice(colon + 1);
  if (prefix === 'x509_hash') {
    if (!/^[A-Za-z0-9_-]{43}$/.test(value)) {
      throw invalidRequest(
        'an x509_hash client_id is the base64url SHA-256 hash of the certificate (43 characters)',
      );
    }
    return { prefix, clientId, hash: value };
  }
  if (prefix === 'redirect_uri') return { prefix, clientId, uri: value };
  if (prefix !== undefined && UNSUPPORTED.has(prefix)) {
    throw invalidRequest(
      `the client identifier prefix ${prefix} is not supported; use x509_hash, redirect_uri or a registered client id`,
    );
  }
  // Coffer's registered clients are numbered.
  if (!/^[1-9]\d{0,9}$/.test(clientId) || Number(clientId) > 2147483647) {
    throw invalidRequest(`${clientId.slice(0, 100)} is not a verifier registered with this wallet`);
  }
  return { prefix: 'pre-registered', clientId, registeredId: Number(clientId) };
}
