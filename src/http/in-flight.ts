import type { FastifyInstance } from 'fastify';

/**
 * Counts requests being handled, so shutdown can let them finish before the database closes:
 * fastify's close stops new connections, but a handler already awaiting a query would
 * otherwise meet a closed database and answer 500.
 */
export function trackInFlight(app: FastifyInstance): { drain(timeoutMs: number): Promise<void> } {
  let inFlight = 0;
  app.addHook('onRequest', async () => {
    inFlight++;
  });
  app.addHook('onResponse', async () => {
    inFlight--;
  });
  app.addHook('onRequestAbort', (_request, done) => {
    inFlight--;
    done();
  });
  return {
    async drain(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    },
  };
}
