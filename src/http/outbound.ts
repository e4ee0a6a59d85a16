import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import https from 'node:https';
import { BlockList, isIP } from 'node:net';
import { context, propagation, trace } from '@opentelemetry/api';
import { inSpan, SpanKind, tracingEnabled } from '../telemetry/tracer.ts';

/**
 * Requests Coffer makes on behalf of someone else (a verifier's request_uri or response_uri):
 * HTTPS only, a time limit, a size limit, no redirects followed, and never to loopback,
 * link-local or private addresses. The address is checked after DNS resolution and the
 * connection is made to that very address, so a name cannot resolve to a public address for the
 * check and to a private one for the connection.
 */
export interface OutboundOptions {
  /** Allow private, loopback and link-local targets (development and tests only). */
  allowPrivateTargets: boolean;
  /** Extra CA certificates to trust (PEM), e.g. a test verifier's; the system store otherwise. */
  ca?: string | string[];
  timeoutMs?: number;
  maxBytes?: number;
}

export interface OutboundRequest {
  method: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** This request's size limit, in place of the client's. */
  maxBytes?: number;
}

export interface OutboundResponse {
  status: number;
  contentType: string;
  body: string;
  /** The body as received, for binary answers (a CWT status list). */
  bytes: Buffer;
  /** Response headers, names in lower case (repeated ones joined with ", "). */
  headers: Record<string, string>;
}

/** Why an outbound request was not made or failed; the message is for the verifier or the person. */
export class OutboundError extends Error {
  override readonly name = 'OutboundError';
  /** True when Coffer refused the target before connecting (the address, not the peer, is at fault). */
  readonly refused: boolean;
  constructor(message: string, options: { refused?: boolean } = {}) {
    super(message);
    this.refused = options.refused === true;
  }
}

const refusedTarget = (message: string) => new OutboundError(message, { refused: true });

const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['::ffff:0:0', 96],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

/** True for addresses that are not on the public Internet (IPv4-mapped IPv6 judged as IPv4). */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return PRIVATE.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

function checkedLookup(allowPrivate: boolean): typeof dnsLookup {
  return ((hostname: string, options: object, callback: (...args: unknown[]) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error);
      const list = addresses as LookupAddress[];
      const usable = allowPrivate ? list : list.filter((a) => !isPrivateAddress(a.address));
      if (usable.length === 0) {
        return callback(refusedTarget(`${hostname} resolves only to private or loopback addresses`));
      }
      const wantsAll = (options as { all?: boolean }).all === true;
      if (wantsAll) return callback(null, usable);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  }) as typeof dnsLookup;
}

/** Checks a target before any connection: HTTPS, and no literal private address. */
export function checkOutboundTarget(url: string, allowPrivateTargets: boolean): URL {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw refusedTarget(`${url.slice(0, 200)} is not an absolute URL`);
  }
  if (target.protocol !== 'https:') throw refusedTarget(`${target.origin} is not an https: address`);
  if (target.username || target.password) throw refusedTarget('the address must not carry credentials');
  const host = target.hostname.replace(/^\[|\]$/g, '');
  if (
    !allowPrivateTargets &&
    (isIP(host) ? isPrivateAddress(host) : /^localhost$|\.localhost$/i.test(host))
  ) {
    throw refusedTarget(`${target.host} is a private or loopback address`);
  }
  return target;
}

export function createOutboundClient(options: OutboundOptions) {
  const timeoutMs = options.timeoutMs ?? 5000;
  const maxBytes = options.maxBytes ?? 64 * 1024;
  const lookup = checkedLookup(options.allowPrivateTargets);

  function request(input: OutboundRequest): Promise<OutboundResponse> {
    const limit = input.maxBytes ?? maxBytes;
    const target = checkOutboundTarget(input.url, options.allowPrivateTargets);
    if (!tracingEnabled()) return send(input, target, limit);
    // The host only: a path or query may carry an identifier of a person or a token.
    return inSpan(
      input.method,
      { 'http.request.method': input.method, 'server.address': target.hostname },
      async () => {
        const response = await send(input, target, limit, propagatedHeaders());
        trace.getActiveSpan()?.setAttribute('http.response.status_code', response.status);
        return response;
      },
      SpanKind.CLIENT,
    );
  }

  function send(
    input: OutboundRequest,
    target: URL,
    limit: number,
    traceHeaders: Record<string, string> = {},
  ): Promise<OutboundResponse> {
    return new Promise((resolve, reject) => {
      const fail = (error: Error) =>
        reject(error instanceof OutboundError ? error : new OutboundError(error.message));
      const req = https.request(
        target,
        {
          method: input.method,
          headers: {
            'user-agent': 'Coffer',
            ...(input.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(input.body)) }),
            ...traceHeaders,
            ...input.headers,
          },
          lookup,
          ...(options.ca ? { ca: options.ca } : {}),
          signal: AbortSignal.timeout(timeoutMs),
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > limit) {
              res.destroy();
              fail(new OutboundError(`the answer from ${target.host} is larger than ${limit} bytes`));
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () => {
            const bytes = Buffer.concat(chunks);
            resolve({
              status: res.statusCode ?? 0,
              contentType: String(res.headers['content-type'] ?? '')
                .split(';')[0]!
                .trim()
                .toLowerCase(),
              body: bytes.toString('utf8'),
              bytes,
              headers: Object.fromEntries(
                Object.entries(res.headers).map(([name, value]) => [
                  name,
                  Array.isArray(value) ? value.join(', ') : String(value ?? ''),
                ]),
              ),
            });
          });
          res.on('error', fail);
        },
      );
      req.on('error', (error: Error) =>
        fail(
          error.name === 'AbortError' || error.name === 'TimeoutError'
            ? new OutboundError(`${target.host} did not answer within ${timeoutMs / 1000} s`)
            : error,
        ),
      );
      if (input.body !== undefined) req.write(input.body);
      req.end();
    });
  }
  return request;
}

/** The active span's W3C trace context, for the peer's own traces. */
function propagatedHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  propagation.inject(context.active(), headers);
  return headers;
}

export type OutboundClient = ReturnType<typeof createOutboundClient>;
