import { calculateJwkThumbprint, type JWK } from 'jose';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { CofferError, notFound } from '../errors.ts';
import { pemCertificates } from '../keys/certificate-chain.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';
import { ALGORITHM_OF_CURVE } from '../keys/signing-certificate.ts';
import {
  ACTIVATION_DELAY_MS,
  encryptionKeyContext,
  entityKeyContext,
  federationKeyContext,
  federationKeysOf,
  newEncryptionKey,
  newFederationKey,
  openKey,
  publicEncryptionJwkOf,
  publicJwkOf,
} from './federation-keys.ts';
import {
  findEncryptionKey,
  findEntityKey,
  findFederationSettings,
  findIssuerEntity,
  findVerifierEntity,
  insertEncryptionKey,
  insertEntityKey,
  insertFederationKey,
  listFederationKeys,
  listIssuerEntities,
  listVerifierEntities,
  retireFederationKeys,
  saveFederationSettings,
} from './federation-repository.ts';
import {
  entityConfigurationClaims,
  signStatement,
  subordinateStatementClaims,
} from './federation-statements.ts';

/**
 * Coffer as its tenants' federation intermediate (OpenID Federation 1.0): `coffer federation
 * enable` makes Coffer an entity (its Entity Identifier is PUBLIC_URL) under the superiors it
 * names; every tenant issuer becomes an entity below Coffer — its Entity Configuration says
 * what it is (openid_credential_issuer, with the key that signs its credentials) and Coffer's
 * fetch endpoint vouches for its federation key — without the tenant running anything. Tenant
 * verifiers likewise (openid_credential_verifier: the key that signs their request objects and a
 * static key wallets encrypt their answers to).
 */
export interface FederationDeps {
  db: Kysely<Database>;
  cipher: FieldCipher;
  publicUrl: string;
  now: () => Date;
}

const ENTITY_PATH = /^\/(issuers|verifiers)\/([1-9]\d{0,9})$/;

export const issuerEntityId = (publicUrl: string, clientId: number) => `${publicUrl}/issuers/${clientId}`;
export const verifierEntityId = (publicUrl: string, clientId: number) => `${publicUrl}/verifiers/${clientId}`;

export type TenantEntityKind = 'issuers' | 'verifiers';

/** The tenant entity an Entity Identifier names, if it is one of this deployment's. */
export function tenantEntityOf(
  publicUrl: string,
  entityId: string,
): { kind: TenantEntityKind; clientId: number } | undefined {
  const path = entityId.startsWith(publicUrl) ? entityId.slice(publicUrl.length) : '';
  const match = ENTITY_PATH.exec(path);
  return match ? { kind: match[1] as TenantEntityKind, clientId: Number(match[2]) } : undefined;
}

const notEnabled = () => notFound('The federation entity');

/** Coffer is a federation entity once `coffer federation enable` saved its settings (after its first key). */
async function requireEnabled(deps: FederationDeps) {
  const settings = await findFederationSettings(deps.db);
  if (!settings) throw notEnabled();
  return settings;
}

/** The settings and the keys, unsealed: only where a statement is signed or the keys published. */
export async function cofferKeys(deps: FederationDeps) {
  const settings = await requireEnabled(deps);
  const keys = federationKeysOf(await listFederationKeys(deps.db), deps.cipher, deps.now());
  if (!keys) throw notEnabled();
  return { settings, ...keys };
}

/** GET /.well-known/openid-federation: Coffer's own Entity Configuration. */
export async function cofferEntityConfiguration(deps: FederationDeps): Promise<string> {
  const { settings, jwks, signer } = await cofferKeys(deps);
  const claims = entityConfigurationClaims({
    entityId: deps.publicUrl,
    jwks,
    authorityHints: JSON.parse(settings.authority_hints) as string[],
    metadata: {
      federation_entity: {
        organization_name: settings.organization_name,
        federation_fetch_endpoint: `${deps.publicUrl}/federation/fetch`,
        federation_list_endpoint: `${deps.publicUrl}/federation/list`,
        federation_resolve_endpoint: `${deps.publicUrl}/federation/resolve`,
      },
    },
    now: deps.now(),
  });
  return signStatement(claims, signer);
}

/** A tenant entity's federation key, made on first use (the first of two racing requests wins). */
async function entityKeyOf(deps: FederationDeps, clientId: number) {
  let row = await findEntityKey(deps.db, clientId);
  if (!row) {
    const made = await newFederationKey();
    await insertEntityKey(deps.db, {
      client_id: clientId,
      kid: made.kid,
      key_sealed: deps.cipher.encrypt(JSON.stringify(made.privateJwk), entityKeyContext(clientId)),
      created_at: deps.now().toISOString(),
    });
    row = (await findEntityKey(deps.db, clientId))!;
  }
  return openKey(deps.cipher, row.key_sealed, entityKeyContext(clientId), row.kid);
}

/**
 * The key of a certificate chain's leaf, named by its thumbprint: what signs an issuer's
 * credentials or a verifier's request objects, so what a peer matches.
 */
export async function leafKeyOf(chainPem: string): Promise<JWK> {
  const [leaf] = pemCertificates(chainPem);
  if (!leaf) throw new CofferError('server_error', 'The entity has no certificate.');
  const jwk = leaf.publicKey.export({ format: 'jwk' }) as JWK;
  const alg = ALGORITHM_OF_CURVE[jwk.crv ?? ''] ?? 'ES256';
  return { ...jwk, kid: await calculateJwkThumbprint(jwk), alg, use: 'sig' };
}

/**
 * A tenant verifier's static response encryption key, made on first use (the first of two racing
 * makers wins): wallets answering an `openid_federation:` request encrypt to it (OpenID4VP §5.9.3
 * has them ignore the request's client_metadata).
 */
export async function encryptionKeyOf(deps: FederationDeps, clientId: number) {
  let row = await findEncryptionKey(deps.db, clientId);
  if (!row) {
    const made = await newEncryptionKey();
    await insertEncryptionKey(deps.db, {
      client_id: clientId,
      kid: made.kid,
      key_sealed: deps.cipher.encrypt(JSON.stringify(made.privateJwk), encryptionKeyContext(clientId)),
      created_at: deps.now().toISOString(),
    });
    row = (await findEncryptionKey(deps.db, clientId))!;
  }
  const privateJwk = JSON.parse(deps.cipher.decrypt(row.key_sealed, encryptionKeyContext(clientId))) as JWK;
  return { privateJwk, publicJwk: publicEncryptionJwkOf(privateJwk, row.kid) };
}

export async function issuerEntity(deps: FederationDeps, clientId: number) {
  const issuer = await findIssuerEntity(deps.db, clientId);
  if (!issuer) throw notFound('The federation entity');
  return issuer;
}

/** GET /issuers/{id}/.well-known/openid-federation: a tenant issuer's Entity Configuration. */
export async function issuerEntityConfiguration(deps: FederationDeps, clientId: number): Promise<string> {
  await requireEnabled(deps);
  const issuer = await issuerEntity(deps, clientId);
  const key = await entityKeyOf(deps, clientId);
  const entityId = issuerEntityId(deps.publicUrl, clientId);
  const claims = entityConfigurationClaims({
    entityId,
    jwks: [key.publicJwk],
    authorityHints: [deps.publicUrl],
    metadata: {
      federation_entity: { organization_name: issuer.name },
      openid_credential_issuer: {
        credential_issuer: entityId,
        // Its authorization server takes a wallet's client_id without registration, which is what
        // automatic registration (OpenID Federation 1.0 §12.1) gives a federation's clients.
        client_registration_types_supported: ['automatic'],
        jwks: { keys: [await leafKeyOf(issuer.chain_pem)] },
      },
    },
    now: deps.now(),
  });
  return signStatement(claims, key);
}

export async function verifierEntity(deps: FederationDeps, clientId: number) {
  const verifier = await findVerifierEntity(deps.db, clientId);
  if (!verifier) throw notFound('The federation entity');
  return verifier;
}

/** Response encryption Coffer's verifier takes (the same as request-object.ts offers). */
const CONTENT_ENCRYPTION = ['A128GCM', 'A256GCM'];

/**
 * GET /verifiers/{id}/.well-known/openid-federation: a tenant verifier's Entity Configuration. Its
 * `jwks` lists the request-signing key and the static encryption key; `vp_formats_supported` is
 * what the verifier module verifies, handed in so this module does not import it.
 */
export async function verifierEntityConfiguration(
  deps: FederationDeps & { vpFormatsSupported: Record<string, unknown> },
  clientId: number,
): Promise<string> {
  await requireEnabled(deps);
  const verifier = await verifierEntity(deps, clientId);
  const key = await entityKeyOf(deps, clientId);
  const encryption = await encryptionKeyOf(deps, clientId);
  const claims = entityConfigurationClaims({
    entityId: verifierEntityId(deps.publicUrl, clientId),
    jwks: [key.publicJwk],
    authorityHints: [deps.publicUrl],
    metadata: {
      federation_entity: { organization_name: verifier.name },
      openid_credential_verifier: {
        client_name: verifier.name,
        // As an OpenID Federation RP (§5.1.2): wallets take it without registration.
        client_registration_types: ['automatic'],
        jwks: { keys: [await leafKeyOf(verifier.chain_pem), encryption.publicJwk] },
        vp_formats_supported: deps.vpFormatsSupported,
        encrypted_response_enc_values_supported: CONTENT_ENCRYPTION,
      },
    },
    now: deps.now(),
  });
  return signStatement(claims, key);
}

/** GET /federation/fetch?sub=: Coffer's Subordinate Statement about one of its tenant entities (§8.1). */
export async function subordinateStatement(deps: FederationDeps, sub: string | undefined): Promise<string> {
  await requireEnabled(deps);
  if (!sub) throw new CofferError('invalid_request', 'sub is required');
  const entity = tenantEntityOf(deps.publicUrl, sub);
  if (!entity) throw notFound(`${sub.slice(0, 200)} as a subordinate of this entity`);
  const { clientId } = entity;
  // Only an entity that exists gets a statement: its key is the tenant's, never another's.
  if (entity.kind === 'issuers') await issuerEntity(deps, clientId);
  else await verifierEntity(deps, clientId);
  const key = await entityKeyOf(deps, clientId);
  const { signer } = await cofferKeys(deps);
  return signStatement(
    subordinateStatementClaims({
      issuer: deps.publicUrl,
      subject: sub,
      jwks: [key.publicJwk],
      sourceEndpoint: `${deps.publicUrl}/federation/fetch`,
      now: deps.now(),
    }),
    signer,
  );
}

/** The entity types of Coffer's tenant entities: each also has federation_entity metadata. */
const TYPES_OF: Record<TenantEntityKind, string[]> = {
  issuers: ['openid_credential_issuer', 'federation_entity'],
  verifiers: ['openid_credential_verifier', 'federation_entity'],
};

/**
 * GET /federation/list: the Entity Identifiers of Coffer's subordinates (§8.2), those of the
 * given entity types only when `entity_type` is given. None is an intermediate.
 */
export async function subordinateList(
  deps: FederationDeps,
  filter: { entityTypes?: string[]; intermediate?: boolean } = {},
): Promise<string[]> {
  await requireEnabled(deps);
  if (filter.intermediate) return [];
  const wanted = (kind: TenantEntityKind) =>
    !filter.entityTypes?.length || TYPES_OF[kind].some((type) => filter.entityTypes!.includes(type));
  const issuers = wanted('issuers') ? await listIssuerEntities(deps.db) : [];
  const verifiers = wanted('verifiers') ? await listVerifierEntities(deps.db) : [];
  return [
    ...issuers.map((row) => issuerEntityId(deps.publicUrl, row.client_id)),
    ...verifiers.map((row) => verifierEntityId(deps.publicUrl, row.client_id)),
  ];
}

/**
 * What Coffer's verifier needs to make an `openid_federation:` request for a tenant: its Entity
 * Identifier and its static encryption key. Refused when Coffer is no federation entity.
 */
export async function federationVerifierOf(deps: FederationDeps, clientId: number) {
  if (!(await findFederationSettings(deps.db))) {
    throw new CofferError(
      'invalid_request',
      'openid_federation needs Coffer to be a federation entity; an operator enables it with `coffer federation enable`.',
      { details: [{ path: '/body/client_id_prefix', message: 'federation is not enabled' }] },
    );
  }
  await verifierEntity(deps, clientId);
  await entityKeyOf(deps, clientId);
  return {
    entityId: verifierEntityId(deps.publicUrl, clientId),
    encryption: await encryptionKeyOf(deps, clientId),
  };
}

/** `coffer federation enable`: a key when there is none, and the settings. */
export async function enableFederation(
  deps: FederationDeps,
  input: { authorityHints: string[]; organizationName: string },
) {
  const now = deps.now();
  if (!(await listFederationKeys(deps.db)).some((row) => row.retired_at === null)) await addKey(deps, now);
  await saveFederationSettings(deps.db, {
    authority_hints: JSON.stringify(input.authorityHints),
    organization_name: input.organizationName,
    updated_at: now.toISOString(),
  });
  const { jwks } = await cofferKeys(deps);
  return { entity_id: deps.publicUrl, authority_hints: input.authorityHints, jwks: { keys: jwks } };
}

async function addKey(deps: FederationDeps, now: Date) {
  const made = await newFederationKey();
  await insertFederationKey(deps.db, {
    kid: made.kid,
    key_sealed: deps.cipher.encrypt(JSON.stringify(made.privateJwk), federationKeyContext(made.kid)),
    created_at: now.toISOString(),
    retired_at: null,
  });
  return { kid: made.kid, publicJwk: publicJwkOf(made.privateJwk, made.kid) };
}

/**
 * `coffer federation keys rotate`: a new key, published at once and signing from a day later
 * (ACTIVATION_DELAY_MS), when the keys before it retire; they stay published for the overlap.
 */
export async function rotateFederationKeys(deps: FederationDeps) {
  await requireEnabled(deps);
  const now = deps.now();
  const added = await addKey(deps, now);
  const activeFrom = new Date(now.getTime() + ACTIVATION_DELAY_MS).toISOString();
  await retireFederationKeys(deps.db, added.kid, activeFrom);
  const { jwks } = await cofferKeys(deps);
  return { new_kid: added.kid, signing_from: activeFrom, jwks: { keys: jwks } };
}
