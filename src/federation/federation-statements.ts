import type { KeyObject } from 'node:crypto';
import { type JWK, SignJWT } from 'jose';

/**
 * The statements Coffer signs as a federation intermediate (OpenID Federation 1.0 §3): its own
 * Entity Configuration, each tenant entity's, and Subordinate Statements about its tenants. Plain
 * functions over claims; the keys are passed in.
 */
export const ENTITY_STATEMENT_MEDIA_TYPE = 'application/entity-statement+jwt';

/** How long a statement is valid: a day, so a superior's cache never outlives a key rotation's overlap. */
export const STATEMENT_TTL_SECONDS = 86_400;

export interface StatementSigner {
  kid: string;
  privateKey: KeyObject;
}

const seconds = (now: Date) => Math.floor(now.getTime() / 1000);

export function entityConfigurationClaims(input: {
  entityId: string;
  jwks: JWK[];
  authorityHints: string[];
  metadata: Record<string, Record<string, unknown>>;
  now: Date;
}) {
  const iat = seconds(input.now);
  return {
    iss: input.entityId,
    sub: input.entityId,
    iat,
    exp: iat + STATEMENT_TTL_SECONDS,
    jwks: { keys: input.jwks },
    ...(input.authorityHints.length ? { authority_hints: input.authorityHints } : {}),
    metadata: input.metadata,
  };
}

export function subordinateStatementClaims(input: {
  issuer: string;
  subject: string;
  jwks: JWK[];
  sourceEndpoint: string;
  now: Date;
}) {
  const iat = seconds(input.now);
  return {
    iss: input.issuer,
    sub: input.subject,
    iat,
    exp: iat + STATEMENT_TTL_SECONDS,
    jwks: { keys: input.jwks },
    source_endpoint: input.sourceEndpoint,
  };
}

export const signStatement = (
  claims: Record<string, unknown>,
  signer: StatementSigner,
  typ = 'entity-statement+jwt',
) => new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ, kid: signer.kid }).sign(signer.privateKey);
