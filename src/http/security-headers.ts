import type { FastifyInstance } from 'fastify';

/**
 * Headers every response carries. The API answers JSON only, so the strictest policy fits;
 * the pages that render HTML (/docs, interaction pages) set their own CSP.
 */
export function registerSecurityHeaders(app: FastifyInstance, production: boolean): void {
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    if (!reply.hasHeader('content-security-policy')) {
      reply.header('content-security-policy', "default-src 'none'; frame-ancestors 'none'");
    }
    reply.header('x-frame-options', 'DENY');
    if (production) reply.header('strict-transport-security', 'max-age=31536000');
    return payload;
  });
}
