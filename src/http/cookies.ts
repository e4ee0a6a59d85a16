/** The few cookie operations Coffer needs (RFC 6265), without a dependency. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Lax lets a person arrive logged in from another site's link; the console's cookie is Strict. */
export type SameSite = 'Lax' | 'Strict';

export function sessionCookie(
  name: string,
  value: string,
  maxAgeSeconds: number,
  secure: boolean,
  sameSite: SameSite = 'Lax',
): string {
  return `${name}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=${sameSite}${secure ? '; Secure' : ''}`;
}

/** Tells the browser to forget a cookie at once. */
export function expiredCookie(name: string, secure: boolean, sameSite: SameSite = 'Lax'): string {
  return `${name}=; Path=/; Max-Age=0; HttpOnly; SameSite=${sameSite}${secure ? '; Secure' : ''}`;
}
