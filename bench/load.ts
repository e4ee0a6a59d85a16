import autocannon, { type Request } from 'autocannon';

export interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  max: number;
  non2xx: number;
  errors: number;
  total: number;
}

export interface LoadOptions {
  url: string;
  connections: number;
  /** Seconds; every run is bounded by it. */
  duration: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Builds each request afresh (e.g. a new body per request). */
  setupRequest?: (request: Request) => Request;
  /** Sees each answer's status and headers, names in lower case (e.g. to keep a rotating DPoP nonce). */
  onResponse?: (status: number, headers: Record<string, string>) => void;
}

/** One bounded autocannon run against 127.0.0.1. */
export async function measure(options: LoadOptions): Promise<LoadResult> {
  const target = new URL(options.url);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(target.hostname))
    throw new Error('benchmarks only target this machine');
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.duration,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    ...(options.setupRequest
      ? {
          requests: [
            {
              setupRequest: options.setupRequest,
              ...(options.onResponse
                ? {
                    onResponse: (
                      status: number,
                      _body: string,
                      _context: object,
                      headers: Request['headers'],
                    ) => options.onResponse!(status, lowerCaseKeys(headers ?? {})),
                  }
                : {}),
            },
          ],
        }
      : {}),
  });
  return {
    requestsPerSecond: result.requests.total / options.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    total: result.requests.total,
  };
}

// autocannon hands over the names as the server wrote them.
function lowerCaseKeys(headers: Request['headers']): Record<string, string> {
  const lower: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) lower[name.toLowerCase()] = String(value);
  return lower;
}
