import type { FastifyRequest } from 'fastify';
import { CofferError } from '../errors.ts';

/**
 * Cross-site request forgery: the POSTs take JSON only (a cross-site form cannot send it
 * without a CORS preflight, which Coffer never grants), and a browser's Origin or
 * Sec-Fetch-Site must name this service.
 */
export function refuseCrossSite(request: FastifyRequest, publicUrl: string): void {
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== new URL(publicUrl).origin) {
    throw new CofferError('forbidden', 'Cross-site requests are not allowed here.');
  }
  if (request.headers['sec-fetch-site'] === 'cross-site') {
    throw new CofferError('forbidden', 'Cross-site requests are not allowed here.');
  }
}
