/** One HTTP exchange as the suite records it: status, headers and the body, parsed when JSON. */
export interface Exchange {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: the suite reads arbitrary JSON
  body: any;
}

export async function exchange(
  fetcher: typeof fetch,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Exchange> {
  const response = await fetcher(url, { ...init, redirect: 'manual' });
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

/** The media type of Content-Type, without parameters. */
export const mediaTypeOf = (headers: Headers) =>
  (headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();

export const form = (params: Record<string, string>) => new URLSearchParams(params).toString();
