import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ActingAdmin, ConsoleAct } from './console-access.ts';
import type { ConsoleSessionRow } from './console-sessions.ts';

/** A page at one client, ready to render: the administrator, the form token and the CSP nonce. */
export interface ConsolePageContext {
  admin: ActingAdmin;
  csrfToken: string;
  cspNonce: string;
}

/**
 * The checks every console area shares, made once in console-routes.ts and handed to each area's
 * plugin, so that no area has its own copy of the session or form-token rules.
 */
export interface ConsoleGuards {
  /** A state-changing request: a live session and the token of one of its pages (else 401/403). */
  actingSession(request: FastifyRequest, body: Record<string, string>): Promise<ConsoleSessionRow>;
  /** A page at one client, or undefined when a browser without a session was sent to the log-in. */
  pageAt(
    request: FastifyRequest,
    reply: FastifyReply,
    clientId: number,
  ): Promise<ConsolePageContext | undefined>;
  /** A write at one client: the page token, the administrator there, then the role (else 401/403/404). */
  actingAdmin(
    request: FastifyRequest,
    body: Record<string, string>,
    clientId: number,
    act: ConsoleAct,
  ): Promise<{ row: ConsoleSessionRow; admin: ActingAdmin; csrfToken: string }>;
  formToken(row: ConsoleSessionRow): string;
  /** A script or client asking for JSON gets the error body rather than a page. */
  wantsJson(request: FastifyRequest): boolean;
}
