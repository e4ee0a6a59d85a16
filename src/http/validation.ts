import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const common: Options = { allErrors: true, strict: false, useDefaults: true, removeAdditional: false };

/**
 * Bodies are validated without type coercion, so `"name": 5` is an error rather than "5";
 * query strings and path parameters arrive as text and are coerced to the declared types.
 */
export function registerValidation(app: FastifyInstance): void {
  const bodyAjv = addFormats(new Ajv({ ...common, coerceTypes: false }));
  const textAjv = addFormats(new Ajv({ ...common, coerceTypes: true }));
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object),
  );
}

/**
 * A body check outside a route, with the rules the routes' validator applies (a console form
 * that feeds the same service as a /v1 route). The problems come as the error body's details.
 */
export function compileBodyCheck(
  schema: object,
): (value: unknown) => Array<{ path: string; message: string }> {
  const validate = addFormats(new Ajv({ ...common, coerceTypes: false })).compile(schema);
  return (value) => {
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e) => {
      const missing = e.keyword === 'required' ? `/${String(e.params['missingProperty'])}` : '';
      return { path: `/body${e.instancePath}${missing}`, message: e.message ?? 'is invalid' };
    });
  };
}
