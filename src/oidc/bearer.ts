import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { CofferError } from '../errors.ts';
import type { KeyRing } from '../keys/signing-keys.ts';
import { findUserById, type UserIdentity } from '../users/user-repository.ts';
import { isTokenRevoked } from './code-repository.ts';
import { type VerifiedAccessToken, verifyAccessToken } from './tokens.ts';

export interface BearerDeps {
  db: Kysely<Database>;
  keys: KeyRing;
  issuer: string;
}

export interface AuthenticatedUser {
  token: VerifiedAccessToken;
  user: UserIdentity;
}

declare module 'fastify' {
  interface FastifyRequest {
    bearer: AuthenticatedUser | null;
  }
}

/** RFC 6750 §2.1: `Authorization: Bearer <token>`; the scheme is case-insensitive. */
export function bearerTokenOf(header: string | undefined): string {
  const match = header?.match(/^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i);
  if (!match)
    throw new CofferError('invalid_token', 'An access token is required (Authorization: Bearer <token>).');
  return match[1]!;
}

/** Signature, issuer, type and expiry, then revocation and the user's existence. */
export async function authenticateBearer(
  deps: BearerDeps,
  header: string | undefined,
): Promise<AuthenticatedUser> {
  const token = await verifyAccessToken(deps.keys, deps.issuer, bearerTokenOf(header));
  if (await isTokenRevoked(deps.db, token.jti))
    throw new CofferError('invalid_token', 'The access token has been revoked.');
  const user = /^\d+$/.test(token.subject) ? await findUserById(deps.db, Number(token.subject)) : undefined;
  if (!user) throw new CofferError('invalid_token', 'The access token names no user.');
  return { token, user };
}

export function requireBearer(deps: BearerDeps) {
  return async (request: FastifyRequest): Promise<void> => {
    request.bearer = await authenticateBearer(deps, request.headers.authorization);
  };
}

export function bearerOf(request: FastifyRequest): AuthenticatedUser {
  if (!request.bearer) throw new CofferError('invalid_token', 'An access token is required.');
  return request.bearer;
}
