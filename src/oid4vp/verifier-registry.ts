import type { Kysely } from 'kysely';
import { Compile } from 'typebox/compile';
import type { Database } from '../db/schema.ts';
import { CofferError } from '../errors.ts';
import type { RegisteredVerifier } from './authorization-request.ts';
import { ClientMetadata } from './oid4vp-schemas.ts';
import { findVerifierClient } from './presentation-repository.ts';

const checkMetadata = Compile(ClientMetadata);

/** A client registered with --verifier, as the wallet needs it; undefined for anything else. */
export async function registeredVerifier(
  db: Kysely<Database>,
  clientId: number,
): Promise<RegisteredVerifier | undefined> {
  const row = await findVerifierClient(db, clientId);
  if (!row) return undefined;
  return {
    clientId: row.client_id,
    name: row.name,
    responseUris: JSON.parse(row.redirect_uris) as string[],
    metadata: row.verifier_metadata ? (JSON.parse(row.verifier_metadata) as ClientMetadata) : null,
    privacyLink: row.privacy_link,
  };
}

/**
 * Checks verifier metadata given to `coffer client set ID --verifier-metadata FILE` (the
 * OpenID4VP client metadata the verifier would otherwise send: jwks, encryption values,
 * vp_formats_supported) and returns it as stored.
 */
export function checkVerifierMetadata(text: string): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CofferError('invalid_request', 'The verifier metadata file is not JSON.');
  }
  if (!checkMetadata.Check(value) || Array.isArray(value)) {
    const [first] = checkMetadata.Errors(value);
    throw new CofferError(
      'invalid_request',
      `The verifier metadata is not OpenID4VP client metadata: ${first?.instancePath || '/'} ${first?.message ?? 'is invalid'}.`,
    );
  }
  return JSON.stringify(value);
}
