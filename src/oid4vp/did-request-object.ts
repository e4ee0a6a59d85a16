import type { JsonWebKey } from 'node:crypto';
import { importJWK, type JWK, type JWTPayload } from 'jose';
import { DidResolutionError, resolveDidKey } from '../formats/did-resolution.ts';
import { type OutboundClient, OutboundError } from '../http/outbound.ts';
import { Oid4vpError } from './oid4vp-errors.ts';
import { protectedHeaderOf, verifySignature } from './request-object.ts';

/**
 * `decentralized_identifier` (§5.9.3): the request is signed with the key of a verification
 * method of the client's DID, named by `kid` (a DID URL of that DID). did:key and did:jwk are
 * resolved locally; did:web's document is fetched under the outbound rules (HTTPS, no private
 * address, size and time limits).
 */
const refused = (why: string) => new Oid4vpError('invalid_client', why);

/** did:web:example.com%3A8443:users:alice → https://example.com:8443/users/alice/did.json (did:web §3.2.1). */
export function didWebDocumentUrl(did: string): string {
  const parts = did.slice('did:web:'.length).split(':');
  if (parts.some((part) => part.length === 0)) throw refused(`${did} is not a valid did:web`);
  let host: string;
  try {
    host = decodeURIComponent(parts[0]!);
  } catch {
    throw refused(`${did} is not a valid did:web`);
  }
  if (!/^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(host)) throw refused(`${did} does not name a host`);
  const path = parts.slice(1).map((part) => encodeURIComponent(decodeURIComponent(part)));
  return `https://${host}/${path.length ? `${path.join('/')}/did.json` : '.well-known/did.json'}`;
}

interface VerificationMethod {
  id?: unknown;
  publicKeyJwk?: unknown;
  publicKeyMultibase?: unknown;
}

function keyOfMethod(method: VerificationMethod): JsonWebKey {
  const jwk = method.publicKeyJwk;
  if (jwk !== null && typeof jwk === 'object') {
    if ('d' in jwk) throw refused('a verification method of the DID holds a private key');
    return jwk as JsonWebKey;
  }
  if (typeof method.publicKeyMultibase === 'string') {
    return resolveDidKey(`did:key:${method.publicKeyMultibase}`).jwk;
  }
  throw refused('the verification method holds no publicKeyJwk or publicKeyMultibase');
}

async function resolveDidWebMethod(did: string, kid: string, outbound: OutboundClient): Promise<JsonWebKey> {
  const url = didWebDocumentUrl(did);
  let text: string;
  try {
    const response = await outbound({
      method: 'GET',
      url,
      headers: { accept: 'application/did+json, application/json' },
    });
    if (response.status !== 200) throw refused(`the DID document at ${url} answered HTTP ${response.status}`);
    text = response.body;
  } catch (error) {
    if (error instanceof OutboundError) throw refused(`the DID document cannot be fetched: ${error.message}`);
    throw error;
  }
  let document: {
    id?: unknown;
    verificationMethod?: unknown;
    authentication?: unknown;
    assertionMethod?: unknown;
  };
  try {
    document = JSON.parse(text);
  } catch {
    throw refused(`the DID document at ${url} is not JSON`);
  }
  if (document === null || typeof document !== 'object' || document.id !== did) {
    throw refused(`the document at ${url} is not the DID document of ${did}`);
  }
  const methods = [document.verificationMethod, document.authentication, document.assertionMethod]
    .flatMap((list) => (Array.isArray(list) ? list : []))
    .filter((m): m is VerificationMethod => m !== null && typeof m === 'object');
  const method = methods.find((m) => typeof m.id === 'string' && (m.id === kid || `${did}${m.id}` === kid));
  if (!method) throw refused(`${kid} is not a verification method of ${did}`);
  return keyOfMethod(method);
}

export async function verifyDidRequestObject(
  jwt: string,
  did: string,
  options: { now: Date; outbound: OutboundClient },
): Promise<{ payload: JWTPayload }> {
  const header = protectedHeaderOf(jwt);
  const kid = header.kid;
  if (typeof kid !== 'string' || !kid.startsWith(`${did}#`)) {
    throw refused(`the request object's kid must be a DID URL of ${did} naming its signing key`);
  }
  let jwk: JsonWebKey;
  try {
    jwk = did.startsWith('did:web:')
      ? await resolveDidWebMethod(did, kid, options.outbound)
      : resolveDidKey(kid).jwk;
  } catch (error) {
    if (error instanceof DidResolutionError) throw refused(error.message);
    throw error;
  }
  let key: Awaited<ReturnType<typeof importJWK>>;
  try {
    key = await importJWK(jwk as JWK, header.alg);
  } catch {
    throw refused(`the key ${kid} cannot verify a ${header.alg} signature`);
  }
  return { payload: await verifySignature(jwt, key, header.alg, options.now) };
}
