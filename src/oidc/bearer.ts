import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { CofferError } from '../errors.ts';
import type { KeyRing } from '../keys/signing-keys.ts';
import { findUserById, type UserIdentity } from '../users/user-repository.ts';
import { isTokenRevoked } from './code-repository.ts';
import { currentDpopNonce, type DpopDeps, dpopHeaderOf, resourceChallenge, verifyDpopProof } from './dpop.ts';
import { type VerifiedAccessToken, verifyAccessToken } from './tokens.ts';

export interface BearerDeps {
  db: Kysely<Database>;
  keys: KeyRing;
  issuer: string;
  dpop: DpopDeps;
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

/** What a resource request presents: its Authorization and DPoP headers, method and URL. */
export interface PresentedToken {
  authorization: string | undefined;
  dpop: string | string[] | undefined;
  method: string;
  /** The path the request was made to, without its query. */
  path: string;
}

/** RFC 6750 §2.1 and RFC 9449 §7.1: `Bearer <token>` or `DPoP <token>`; schemes are case-insensitive. */
export function accessTokenOf(header: string | undefined): { scheme: 'bearer' | 'dpop'; token: string } {
  const match = header?.match(/^(Bearer|DPoP) +([A-Za-z0-9._~+/-]+=*) *$/i);
  if (!match)
    throw new CofferError('invalid_token', 'An access token is required (Authorization: Bearer <token>).');
  return { scheme: match[1]!.toLowerCase() === 'dpop' ? 'dpop' : 'bearer', token: match[2]! };
}

/**
 * Signature, issuer, type and expiry; for a DPoP-bound token (cnf.jkt) the DPoP scheme and a proof
 * by that key for this request; then revocation and the user's existence.
 */
export async function authenticateAccessToken(
  deps: BearerDeps,
  presented: PresentedToken,
): Promise<AuthenticatedUser> {
  const { scheme, token: raw } = accessTokenOf(presented.authorization);
  const token = await verifyAccessToken(deps.keys, deps.issuer, raw);
  if (token.jkt !== null) await checkProof(deps, presented, raw, scheme, token.jkt);
  else if (scheme === 'dpop')
    throw new CofferError('invalid_token', 'The access token is not DPoP-bound; send it as a Bearer token.');
  if (await isTokenRevoked(deps.db, token.jti))
    throw new CofferError('invalid_token', 'The access token has been revoked.');
  const user = /^\d+$/.test(token.subject) ? await findUserById(deps.db, Number(token.subject)) : undefined;
  if (!user) throw new CofferError('invalid_token', 'The access token names no user.');
  return { token, user };
}

async function checkProof(
  deps: BearerDeps,
  presented: PresentedToken,
  raw: string,
  scheme: 'bearer' | 'dpop',
  jkt: string,
): Promise<void> {
  try {
    if (scheme !== 'dpop')
      throw new CofferError('invalid_token', 'The access token is DPoP-bound; send it with the DPoP scheme.');
    const proof = dpopHeaderOf(presented.dpop);
    if (!proof)
      throw new CofferError('invalid_dpop_proof', 'A DPoP proof is required with this access token.');
    const verified = await verifyDpopProof(deps.dpop, proof, {
      method: presented.method,
      url: deps.issuer + presented.path,
      accessToken: raw,
    });
    if (verified.jkt !== jkt)
      throw new CofferError(
        'invalid_dpop_proof',
        'The DPoP proof is made with another key than the token is bound to.',
      );
  } catch (error) {
    if (error instanceof CofferError) throw resourceChallenge(error, deps.dpop);
    throw error;
  }
}

export function requireBearer(deps: BearerDeps) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    request.bearer = await authenticateAccessToken(deps, {
      authorization: request.headers.authorization,
      dpop: request.headers.dpop,
      method: request.method,
      path: request.url.split('?')[0]!,
    });
    // A DPoP client keeps up with nonce rotation from any answer (RFC 9449 §8.2).
    if (request.bearer.token.jkt !== null) reply.header('dpop-nonce', currentDpopNonce(deps.dpop));
  };
}

export function bearerOf(request: FastifyRequest): AuthenticatedUser {
  if (!request.bearer) throw new CofferError('invalid_token', 'An access token is required.');
  return request.bearer;
}
