import { UnknownContextError } from './document-loader.ts';

interface JsonLdError {
  name?: string;
  message?: string;
  details?: {
    cause?: unknown;
    event?: { message?: string; details?: { property?: string } };
  };
}

/**
 * What a JSON-LD processing failure says about the credential, in a sentence for its issuer;
 * undefined when the error is not one of JSON-LD's (then it is Coffer's fault, not the input's).
 */
export const unknownContextReason = (url: string) =>
  `it uses the JSON-LD context ${url}, which this service does not know (an operator registers it with coffer context add)`;

export function describeJsonLdError(error: unknown): string | undefined {
  const e = error as JsonLdError;
  if (e?.details?.cause instanceof UnknownContextError) return unknownContextReason(e.details.cause.url);
  if (e?.name === 'jsonld.ValidationError') {
    const property = e.details?.event?.details?.property;
    return property
      ? `its term "${property.slice(0, 100)}" is not defined by its JSON-LD contexts`
      : `it is not valid JSON-LD (${e.details?.event?.message ?? e.message})`;
  }
  if (typeof e?.name === 'string' && e.name.startsWith('jsonld.')) {
    return `it is not valid JSON-LD (${String(e.message).slice(0, 200)})`;
  }
  if (e instanceof TypeError && /JSON pointer .* does not match document/.test(e.message)) {
    return 'one of its mandatory pointers names no part of it';
  }
  return undefined;
}
