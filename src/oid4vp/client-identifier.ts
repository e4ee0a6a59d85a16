import { isEntityIdentifier } from '../trust/federation/entity-statement.ts';
import { invalidRequest } from './oid4vp-errors.ts';

/**
 * Client identifier prefixes (§5.9.3). Every one the specification defines is supported but
 * `origin` (reserved for the DC API); `openid_federation` needs FEDERATION_TRUST_ANCHORS. An id
 * without a prefix names a verifier registered with `coffer client create --verifier`.
 */
export type ClientIdentifier =
  | { prefix: 'pre-registered'; clientId: string; registeredId: number }
  | { prefix: 'x509_hash'; clientId: string; hash: string }
  | { prefix: 'x509_san_dns'; clientId: string; dnsName: string }
  | { prefix: 'verifier_attestation'; clientId: string; subject: string }
  | { prefix: 'decentralized_identifier'; clientId: string; did: string }
  | { prefix: 'redirect_uri'; clientId: string; uri: string }
  | { prefix: 'openid_federation'; clientId: string; entityId: string };

/** What wallet metadata announces (§10, `client_id_prefixes_supported`). */
export const CLIENT_ID_PREFIXES = [
  'pre-registered',
  'x509_hash',
  'x509_san_dns',
  'verifier_attestation',
  'decentralized_identifier',
  'redirect_uri',
  'openid_federation',
] as const;

/** DID methods a verifier may identify with: two resolved locally, did:web fetched. */
export const VERIFIER_DID_METHODS = ['did:key:', 'did:jwk:', 'did:web:'];

/** Prefixes the specification defines (or defined in drafts) that Coffer refuses rather than looks up. */
const UNSUPPORTED = new Set(['origin', 'https', 'did', 'entity_id', 'x509_san_uri']);

/** A DNS name as RFC 1035 §2.3.1 and RFC 5280 §4.2.1.6 allow it in a dNSName (no wildcard). */
const DNS_NAME =
  /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

export function parseClientIdentifier(clientId: unknown): ClientIdentifier {
  if (typeof clientId !== 'string' || clientId.length === 0) throw invalidRequest('client_id is required');
  if (clientId.length > 2048) throw invalidRequest('client_id is too long');
  const colon = clientId.indexOf(':');
  const prefix = colon < 0 ? undefined : clientId.slice(0, colon);
  const value = colon < 0 ? clientId : clientId.slice(colon + 1);
  switch (prefix) {
    case 'x509_hash':
      if (!/^[A-Za-z0-9_-]{43}$/.test(value)) {
        throw invalidRequest(
          'an x509_hash client_id is the base64url SHA-256 hash of the certificate (43 characters)',
        );
      }
      return { prefix, clientId, hash: value };
    case 'x509_san_dns':
      if (!DNS_NAME.test(value)) throw invalidRequest('an x509_san_dns client_id must be a DNS name');
      return { prefix, clientId, dnsName: value.toLowerCase() };
    case 'verifier_attestation':
      if (value.length === 0) throw invalidRequest('a verifier_attestation client_id names its subject');
      return { prefix, clientId, subject: value };
    case 'decentralized_identifier':
      if (!VERIFIER_DID_METHODS.some((method) => value.startsWith(method)) || value.includes('#')) {
        throw invalidRequest(
          'a decentralized_identifier client_id must be a did:key, did:jwk or did:web DID (no fragment)',
        );
      }
      return { prefix, clientId, did: value };
    case 'redirect_uri':
      return { prefix, clientId, uri: value };
    case 'openid_federation':
      if (!isEntityIdentifier(value))
        throw invalidRequest('an openid_federation client_id is an https Entity Identifier');
      return { prefix, clientId, entityId: value };
  }
  if (prefix !== undefined && UNSUPPORTED.has(prefix)) {
    throw invalidRequest(
      `the client identifier prefix ${prefix} is not supported; supported are ${CLIENT_ID_PREFIXES.join(', ')}`,
    );
  }
  // Coffer's registered clients are numbered.
  if (!/^[1-9]\d{0,9}$/.test(clientId) || Number(clientId) > 2147483647) {
    throw invalidRequest(`${clientId.slice(0, 100)} is not a verifier registered with this wallet`);
  }
  return { prefix: 'pre-registered', clientId, registeredId: Number(clientId) };
}
