import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { matchesIfNoneMatch } from '../http/entity-tags.ts';
import { errorResponses } from '../http/openapi.ts';
import { COUNTRIES, SUBDIVISIONS_BY_COUNTRY, timeZones } from './code-lists.ts';
import { type OptionsEnvelope, OptionsEnvelope as OptionsEnvelopeSchema } from './options-schemas.ts';
import {
  EDUCATION_LEVELS,
  EMPLOYMENT_INDUSTRIES,
  EMPLOYMENT_STATUSES,
  GENDERS,
  HOUSEHOLD_INCOMES,
  LANGUAGES,
  MARITAL_STATUSES,
} from './profile-options.ts';

export function buildOptions(): OptionsEnvelope {
  return {
    data: {
      countries: [...COUNTRIES],
      provinces: Object.fromEntries(
        [...SUBDIVISIONS_BY_COUNTRY].map(([country, list]) => [country, [...list]]),
      ),
      languages: [...LANGUAGES],
      gender: [...GENDERS],
      marital_status: [...MARITAL_STATUSES],
      education: [...EDUCATION_LEVELS],
      employment_status: [...EMPLOYMENT_STATUSES],
      employment_industry: [...EMPLOYMENT_INDUSTRIES],
      household_income: [...HOUSEHOLD_INCOMES],
      timezones: timeZones(),
    },
  };
}

/**
 * GET /v1/options: public code lists. They change only with a release, so the JSON (about
 * 220 KB; 60 KB gzipped) is built and compressed once per process and served as it is, with a
 * day of caching and an ETag for revalidation.
 */
export const optionsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const json = JSON.stringify(buildOptions());
  const gzipped = gzipSync(json);
  const etag = `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"`;

  app.get(
    '/v1/options',
    {
      schema: {
        tags: ['Options'],
        summary: 'Every coded value set of user profiles and sub-clients',
        response: {
          200: OptionsEnvelopeSchema,
          304: { type: 'null', description: 'Not modified' },
          ...errorResponses(429),
        },
      },
    },
    async (request, reply) => {
      reply
        .header('cache-control', 'public, max-age=86400')
        .header('etag', etag)
        .header('vary', 'accept-encoding');
      if (matchesIfNoneMatch(request.headers['if-none-match'], etag)) return reply.code(304).send(null);
      reply.type('application/json; charset=utf-8');
      // Pre-serialised bytes are sent as they are, skipping serialisation of ~5,000 entries;
      // the schema above still documents them.
      if (/\bgzip\b/.test(request.headers['accept-encoding'] ?? '')) {
        return reply.header('content-encoding', 'gzip').send(gzipped as unknown as OptionsEnvelope);
      }
      return reply.send(json as unknown as OptionsEnvelope);
    },
  );
};
