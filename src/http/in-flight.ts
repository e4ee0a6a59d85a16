import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * Counts requests whose handler has not yet produced a reply, so shutdown can let them finish
 * before the database closes: fastify's close stops new connections, but a handler already
 * awaiting a query would otherwise meet a closed database and answer 500.
 *
 * A request counts as done when its reply is produced (onSend), not when its client goes away:
 * a client that disconnects mid-request leaves the handler running, and it still needs the
 * database. onResponse is a fallback for replies that skip onSend.
 */
export function trackInFlight(app: FastifyInstance): { drain(timeoutMs: number): Promise<void> } {
  let inFlight = 0;
  const settled = new WeakSet<FastifyRequest>();
  const settle = (request: FastifyRequest) => {
    if (settled.has(request)) return;
    settled.add(request);
    inFlight--;
  };
  app.addHook('onRequest', async () => {
    inFlight++;
  });
  app.addHook('onSend', async (request, _reply, payload) => {
    settle(request);
    return payload;
  });
  app.addHook('onResponse', async (request) => {
    settle(request);
  });
  return {
    async drain(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    },
  };
}
