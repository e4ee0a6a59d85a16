import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SpanKind, tracer, tracingEnabled } from '../telemetry/tracer.ts';

declare module 'fastify' {
  interface FastifyRequest {
    traceContext: { span: Span; context: Context } | null;
  }
}

const routeOf = (request: FastifyRequest) => request.routeOptions.url ?? 'unmatched';

/**
 * A server span per request, named by its method and route template (`GET /v1/users/:id`), child of
 * the caller's W3C `traceparent` when it sends one. Only when tracing is on (src/telemetry/).
 *
 * The span is made active again before the handler: the body is read in the socket's own async
 * context, so the context entered in onRequest does not reach the handler by itself.
 */
export function registerRequestTracing(app: FastifyInstance): void {
  app.decorateRequest('traceContext', null);
  if (!tracingEnabled()) return;
  app.addHook('onRequest', (request, _reply, done) => {
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const route = routeOf(request);
    const span = tracer.startSpan(
      `${request.method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': request.method,
          'http.route': route,
          'coffer.request_id': request.id,
        },
      },
      parent,
    );
    const active = trace.setSpan(parent, span);
    request.traceContext = { span, context: active };
    context.with(active, done);
  });
  app.addHook('preHandler', (request, _reply, done) => {
    if (request.traceContext) context.with(request.traceContext.context, done);
    else done();
  });
  // With a callback, not async: no promise per request for a hook that only ends a span.
  app.addHook('onResponse', (request, reply, done) => {
    const traced = request.traceContext;
    if (!traced?.span.isRecording()) return done();
    traced.span.setAttribute('http.response.status_code', reply.statusCode);
    // The tenant whose credentials called: a client id, which says what each tenant's traffic costs.
    if (request.apiCaller) traced.span.setAttribute('coffer.client_id', request.apiCaller.clientId);
    if (reply.statusCode >= 500) traced.span.setStatus({ code: SpanStatusCode.ERROR });
    traced.span.end();
    done();
  });
}
