import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';

export const ErrorBodySchema = Type.Object(
  {
    error: Type.String({ description: 'Stable machine-readable code, e.g. invalid_request.' }),
    error_description: Type.String({ description: 'One sentence for a person.' }),
    details: Type.Optional(
      Type.Array(
        Type.Object({ path: Type.String({ description: 'e.g. /body/name' }), message: Type.String() }),
      ),
    ),
    request_id: Type.Optional(
      Type.String({ description: 'Present on 500 errors; quote it when reporting.' }),
    ),
  },
  { $id: 'ErrorBody', title: 'Error' },
);

const DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request',
  401: 'Missing or invalid credentials',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Conflict',
  413: 'Body too large',
  415: 'Body is not JSON',
  422: 'Credential rejected',
  429: 'Too many requests',
  502: 'A verifier could not be reached',
};

/** Response schemas for the error statuses a route can answer, all with the one error body. */
export function errorResponses(...statuses: number[]): Record<number, typeof ErrorBodySchema> {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      { ...ErrorBodySchema, $id: undefined, description: DESCRIPTIONS[status] },
    ]),
  ) as Record<number, typeof ErrorBodySchema>;
}

export async function registerOpenApi(app: FastifyInstance, publicUrl: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Coffer',
        version: '1',
        description:
          'Identity, verifiable-credential and multi-tenant account service. Every error answers `{error, error_description, details?}`.',
      },
      servers: [{ url: publicUrl }],
      components: {
        securitySchemes: {
          apiToken: { type: 'apiKey', in: 'header', name: 'x-api-token' },
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
