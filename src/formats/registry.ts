import type { JsonLdOptions } from '@digitalbazaar/di-sd-primitives';
import { CofferError } from '../errors.ts';
import type { CredentialFormat, FormatId } from './credential-format.ts';
import { createJwtVcJsonFormat } from './jwt-vc-json/index.ts';
import type { Bbs2023Operations } from './ldp-vc/bbs-2023/operations.ts';
import { createLdpVcFormat } from './ldp-vc/index.ts';
import { msoMdocFormat } from './mso-mdoc/index.ts';
import { sdJwtVcFormat } from './sd-jwt-vc/index.ts';

/** The formats this wallet holds and presents, in the order a value of unknown format is tried. */
export interface FormatRegistry {
  all: CredentialFormat[];
  /** The format of a stored row or a request; throws for one this wallet does not know. */
  get(id: string): CredentialFormat;
  has(id: string): id is FormatId;
  /** The format a value sent without `format` has, by its shape (DESIGN.md, Store). */
  recognise(value: unknown): CredentialFormat | undefined;
}

export function createFormatRegistry(deps: {
  operations: Bbs2023Operations;
  jsonLd: JsonLdOptions;
}): FormatRegistry {
  const all = [createLdpVcFormat(deps), sdJwtVcFormat, msoMdocFormat, createJwtVcJsonFormat(deps.jsonLd)];
  const byId = new Map<string, CredentialFormat>(all.map((format) => [format.id, format]));
  return {
    all,
    get(id) {
      const format = byId.get(id);
      if (!format) throw new CofferError('server_error', `Unknown credential format ${id}.`);
      return format;
    },
    has: (id): id is FormatId => byId.has(id),
    recognise: (value) => all.find((format) => format.recognises(value)),
  };
}
