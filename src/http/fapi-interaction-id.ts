import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A protected resource's answer carries `x-fapi-interaction-id` (FAPI 2.0 Implementation Advice
 * §2.1.1, FAPI 1 Baseline §6.2.1-11): the client's own when it sent a UUID, so both sides find the
 * exchange in their logs by one id, else a new one. Anything but a UUID is not echoed: the value
 * would go back to the client and into its logs as Coffer's word.
 */
export function echoInteractionId(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: null, payload: unknown) => void,
): void {
  const sent = request.headers['x-fapi-interaction-id'];
  reply.header('x-fapi-interaction-id', typeof sent === 'string' && UUID.test(sent) ? sent : randomUUID());
  done(null, payload);
}
