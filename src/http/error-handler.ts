import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CofferError, type ErrorCode, type ErrorDetail, STATUS_OF } from '../errors.ts';

export interface ErrorBody {
  error: ErrorCode;
  error_description: string;
  details?: ErrorDetail[];
  request_id?: string;
}

const PART_NAMES: Record<string, string> = {
  body: 'body',
  querystring: 'query',
  params: 'path',
  headers: 'headers',
};

interface AjvIssue {
  instancePath: string;
  message?: string;
  keyword: string;
  params: Record<string, unknown>;
}

/**
 * An error body never amplifies its request (DESIGN.md, Errors): at most 20 details, the first
 * ones found, and no text longer than a short excerpt.
 */
const MAX_DETAILS = 20;
const MAX_DETAIL_TEXT = 200;
const MAX_DESCRIPTION = 1000;
const excerpt = (text: string, max = MAX_DETAIL_TEXT) =>
  text.length > max ? `${text.slice(0, max - 1)}…` : text;
const boundedDetails = (details: ErrorDetail[]) =>
  details.slice(0, MAX_DETAILS).map((d) => ({ path: excerpt(d.path), message: excerpt(d.message) }));

function detailsOf(issues: AjvIssue[], context: string | undefined): ErrorDetail[] {
  const root = `/${PART_NAMES[context ?? 'body'] ?? context}`;
  return boundedDetails(
    issues.slice(0, MAX_DETAILS).map((issue) => {
      if (issue.keyword === 'required') {
        return {
          path: `${root}${issue.instancePath}/${issue.params['missingProperty']}`,
          message: 'is required',
        };
      }
      if (issue.keyword === 'additionalProperties') {
        return {
          path: `${root}${issue.instancePath}/${issue.params['additionalProperty']}`,
          message: 'is not allowed',
        };
      }
      return { path: `${root}${issue.instancePath}`, message: issue.message ?? 'is invalid' };
    }),
  );
}

/** Fastify's own client errors, turned into the project's codes and plain sentences. */
const FASTIFY_ERRORS: Record<string, { code: ErrorCode; description: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: {
    code: 'payload_too_large',
    description: 'The request body is larger than allowed.',
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    code: 'unsupported_media_type',
    description: 'The request body must be JSON (Content-Type: application/json).',
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    code: 'invalid_request',
    description: 'The Content-Length header does not match the body.',
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    code: 'invalid_request',
    description: 'The body is empty although Content-Type is application/json.',
  },
  FST_ERR_CTP_INVALID_JSON_BODY: {
    code: 'invalid_request',
    description: 'The request body is not valid JSON.',
  },
};

export function toErrorBody(error: unknown, requestId: string): { status: number; body: ErrorBody } {
  if (error instanceof CofferError) {
    const body: ErrorBody = { error: error.code, error_description: excerpt(error.message, MAX_DESCRIPTION) };
    if (error.details) body.details = boundedDetails(error.details);
    if (error.status >= 500) body.request_id = requestId;
    return { status: error.status, body };
  }
  const e = error as FastifyError & { validationContext?: string };
  if (Array.isArray(e?.validation)) {
    const details = detailsOf(e.validation as AjvIssue[], e.validationContext);
    const first = details[0];
    return {
      status: 400,
      body: {
        error: 'invalid_request',
        error_description: first
          ? excerpt(`${first.path} ${first.message}.`, MAX_DESCRIPTION)
          : 'The request is invalid.',
        details,
      },
    };
  }
  const known = typeof e?.code === 'string' ? FASTIFY_ERRORS[e.code] : undefined;
  if (known)
    return {
      status: STATUS_OF[known.code],
      body: { error: known.code, error_description: known.description },
    };
  // Body parser errors (bad JSON, prototype poisoning) carry a 400 status and a SyntaxError-like message.
  if (e?.statusCode === 400 && (e instanceof SyntaxError || String(e.code ?? '').startsWith('FST_'))) {
    return {
      status: 400,
      body: { error: 'invalid_request', error_description: 'The request body is not valid JSON.' },
    };
  }
  if (typeof e?.code === 'string' && e.code.startsWith('FST_') && e.statusCode && e.statusCode < 500) {
    return { status: e.statusCode, body: { error: 'invalid_request', error_description: e.message } };
  }
  return {
    status: 500,
    body: {
      error: 'server_error',
      error_description: 'An unexpected error occurred. Quote the request id when reporting it.',
      request_id: requestId,
    },
  };
}

/**
 * Errors fastify's router raises before a route runs (a URL that does not decode, a path
 * parameter over the length limit): the project's error body instead of fastify's own.
 */
export function answerFrameworkError(
  error: FastifyError,
  _request: FastifyRequest,
  reply: FastifyReply,
): void {
  const description =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? 'A path parameter is longer than allowed.'
      : error.code === 'FST_ERR_BAD_URL'
        ? 'The URL is not valid (it does not decode).'
        : 'The request is not valid.';
  reply
    .code(400)
    .type('application/json; charset=utf-8')
    .send({ error: 'invalid_request', error_description: description } satisfies ErrorBody);
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request: FastifyRequest, reply: FastifyReply) => {
    const { status, body } = toErrorBody(error, request.id);
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    if (error instanceof CofferError && error.headers) reply.headers(error.headers);
    if (body.error === 'invalid_token' && !reply.hasHeader('www-authenticate'))
      reply.header('www-authenticate', 'Bearer error="invalid_token"');
    reply.code(status).type('application/json; charset=utf-8').send(body);
  });
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({
      error: 'not_found',
      error_description: `No endpoint ${request.method} ${request.url.split('?')[0]}.`,
    } satisfies ErrorBody);
  });
}

/**
 * Errors Node's HTTP parser raises before a request exists (headers too large, malformed
 * request line, idle timeout): answered with the project's error body, then the connection closed.
 */
export function writeClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, reason, description] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'The request headers are larger than allowed.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'The request took too long to arrive.']
        : [400, 'Bad Request', 'The request is not valid HTTP.'];
  const body = JSON.stringify({
    error: 'invalid_request',
    error_description: description,
  } satisfies ErrorBody);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
