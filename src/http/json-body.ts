import type { FastifyInstance } from 'fastify';
import { CofferError } from '../errors.ts';

/** Deeper bodies are refused: nothing Coffer accepts nests this deep, and recursion must not overflow. */
export const MAX_JSON_DEPTH = 64;

/** The nesting depth of a parsed JSON value, counted without recursion. */
export function jsonDepth(value: unknown, limit = Number.POSITIVE_INFINITY): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > deepest) deepest = depth;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/**
 * JSON bodies through fastify's own parser (prototype poisoning refused), then refused when they
 * nest deeper than MAX_JSON_DEPTH: a 20,000-level claim would otherwise overflow the stack of the
 * recursive code that encodes, canonicalises or validates it.
 */
export function registerJsonBodies(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parse(request, body as string, (error: Error | null, value?: unknown) => {
      if (error) return done(error, undefined);
      if (jsonDepth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
        return done(
          new CofferError('invalid_request', `The request body nests deeper than ${MAX_JSON_DEPTH} levels.`),
          undefined,
        );
      }
      done(null, value);
    });
  });
}
