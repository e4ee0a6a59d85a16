import { calculateJwkThumbprint, type JWK } from 'jose';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { CofferError, notFound } from '../errors.ts';
import { pemCertificates } from '../keys/certificate-chain.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';
import {
  ACTIVATION_DELAY_MS,
  entityKeyContext,
  federationKeyContext,
  federationKeysOf,
  newFederationKey,
  openKey,
  publicJwkOf,
} from './federation-keys.ts';
import {
  findEntityKey,
  findFederationSettings,
  findIssuerEntity,
  insertEntityKey,
  insertFederationKey,
  listFederationKeys,
  listIssuerEntities,
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
 * fetch endpoint vouches for its federation key — without the tenant running anything.
 */
export interface FederationDeps {
  db: Kysely<Database>;
  cipher: FieldCipher;
  publicUrl: string;
  now: () => Date;
}

const ISSUER_PATH = /^\/issuers\/([1-9]\d{0,9})$/;

export const issuerEntityId = (publicUrl: string, clientId: number) => `${publicUrl}/issuers/${clientId}`;

const notEnabled = () => notFound('The federation entity');

/** Coffer is a federation entity once `coffer federation enable` saved its settings (after its first key). */
async function requireEnabled(deps: FederationDeps) {
  const settings = await findFederationSettings(deps.db);
  if (!settings) throw notEnabled();
  return settings;
}

/** The settings and the keys, unsealed: only where a statement is signed or the keys published. */
async function cofferKeys(deps: FederationDeps) {
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

/** The key that signs an issuer's credentials, from its certificate: what a verifier matches. */
async function credentialKeyOf(chainPem: string): Promise<JWK> {
  const [leaf] = pemCertificates(chainPem);
  if (!leaf) throw new CofferError('server_error', 'The issuer has no certificate.');
  const jwk = leaf.publicKey.export({ format: 'jwk' }) as JWK;
  return { ...jwk, kid: await calculateJwkThumbprint(jwk), alg: 'ES256', use: 'sig' };
}

async function issuerEntity(deps: FederationDeps, clientId: number) {
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
        jwks: { keys: [await credentialKeyOf(issuer.chain_pem)] },
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
  const path = sub.startsWith(deps.publicUrl) ? sub.slice(deps.publicUrl.length) : '';
  const match = ISSUER_PATH.exec(path);
  if (!match) throw notFound(`${sub.slice(0, 200)} as a subordinate of this entity`);
  const clientId = Number(match[1]);
  await issuerEntity(deps, clientId);
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

/** GET /federation/list: the Entity Identifiers of Coffer's subordinates (§8.2). */
export async function subordinateList(deps: FederationDeps): Promise<string[]> {
  await requireEnabled(deps);
  return (await listIssuerEntities(deps.db)).map((row) => issuerEntityId(deps.publicUrl, row.client_id));
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
