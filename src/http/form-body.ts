import type { FastifyInstance } from 'fastify';
import { CofferError } from '../errors.ts';

/**
 * Accepts `application/x-www-form-urlencoded` bodies in the calling plugin's routes only (OAuth
 * endpoints, a wallet's OpenID4VP answers), as a flat object; a parameter given twice is refused
 * rather than guessed at.
 */
export function acceptFormBodies(app: FastifyInstance): void {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, body, done) => {
      const params = new URLSearchParams(body as string);
      const result: Record<string, string> = {};
      for (const [key, value] of params) {
        if (key in result)
          return done(new CofferError('invalid_request', `The parameter ${key} is given more than once.`));
        result[key] = value;
      }
      done(null, result);
    },
  );
}
