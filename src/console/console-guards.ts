import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ActingAdmin } from './console-access.ts';
import type { ConsoleSessionRow } from './console-sessions.ts';

/** What console-routes.ts gives each area's plugin: its session, token and page checks. */
export interface ConsoleGuards {
  actingSession(request: FastifyRequest, body: Record<string, string>): Promise<ConsoleSessionRow>;
  pageAt(
    request: FastifyRequest,
    reply: FastifyReply,
    clientId: number,
  ): Promise<{ admin: ActingAdmin; csrfToken: string; cspNonce: string } | undefined>;
  formToken(row: ConsoleSessionRow): string;
  /** A script or client asking for JSON gets the error body, not a page. */
  wantsJson(request: FastifyRequest): boolean;
}
