import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { Type } from 'typebox';

export type ReadinessCheck = { name: string; check: () => Promise<void> };

const Status = Type.Object({
  status: Type.String(),
  checks: Type.Optional(Type.Record(Type.String(), Type.String())),
});

/** Facts about this process that do not change while it runs, exported as metrics. */
export interface ProcessFacts {
  /** The curve backend of the BBS core (src/bbs/curve.ts): 'native' (blst) or 'wasm' (mcl-wasm). */
  bbsBackend: string;
}

/** Liveness, readiness (every dependency reachable) and Prometheus metrics. */
export function registerOperations(
  app: FastifyInstance,
  checks: ReadinessCheck[],
  facts?: ProcessFacts,
  registry: Registry = new Registry(),
): void {
  collectDefaultMetrics({ register: registry });
  if (facts) {
    new Gauge({
      name: 'coffer_bbs_backend',
      help: 'The curve backend BBS runs on (1 for the one in use): native (blst) or wasm (mcl-wasm)',
      labelNames: ['backend'],
      registers: [registry],
    }).set({ backend: facts.bbsBackend }, 1);
  }
  const requests = new Counter({
    name: 'coffer_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'coffer_http_request_duration_seconds',
    help: 'HTTP request duration by route',
    labelNames: ['method', 'route'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    requests.inc({ method: request.method, route, status: reply.statusCode });
    duration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });

  const tags = ['Operations'];
  app.get('/healthz', { schema: { tags, summary: 'Liveness', response: { 200: Status } } }, async () => ({
    status: 'ok',
  }));
  app.get(
    '/readyz',
    {
      schema: {
        tags,
        summary: 'Readiness: database and storage reachable',
        response: { 200: Status, 503: Status },
      },
    },
    async (_request, reply) => {
      const results: Record<string, string> = {};
      let ready = true;
      for (const { name, check } of checks) {
        try {
          await check();
          results[name] = 'ok';
        } catch {
          results[name] = 'unreachable';
          ready = false;
        }
      }
      reply.code(ready ? 200 : 503);
      return { status: ready ? 'ok' : 'unavailable', checks: results };
    },
  );
  app.get(
    '/metrics',
    { schema: { tags, summary: 'Prometheus metrics', hide: true } },
    async (_request, reply) => {
      reply.type(registry.contentType);
      return registry.metrics();
    },
  );
}
