import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { CofferError, invalidField } from '../errors.ts';
import { type ApiCaller, findCallerByApiToken } from './client-repository.ts';

declare module 'fastify' {
  interface FastifyRequest {
    apiCaller: ApiCaller | null;
  }
}

/** An onRequest hook that names the calling client from `x-api-token`, or answers 401 before the body is read. */
export function requireApiToken(db: Kysely<Database>) {
  return async (request: FastifyRequest): Promise<void> => {
    const token = request.headers['x-api-token'];
    if (typeof token !== 'string' || token.length === 0) {
      throw new CofferError('unauthorized', 'The x-api-token header is missing.');
    }
    // Tokens are fixed-length base64url; anything else cannot match, so spare the database.
    const caller = token.length <= 128 ? await findCallerByApiToken(db, token) : undefined;
    if (!caller) throw new CofferError('unauthorized', 'The API token is not valid.');
    request.apiCaller = caller;
  };
}

export function callerOf(request: FastifyRequest): ApiCaller {
  if (!request.apiCaller) throw new CofferError('unauthorized', 'The x-api-token header is missing.');
  return request.apiCaller;
}

/** The `x-api-subclient-id` header: absent, or a positive integer naming a sub-client. */
export function subClientScopeOf(request: FastifyRequest): number | undefined {
  const raw = request.headers['x-api-subclient-id'];
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > 2147483647) {
    throw invalidField('/headers/x-api-subclient-id', 'must be a sub-client id (a positive integer)');
  }
  return Number(raw);
}
