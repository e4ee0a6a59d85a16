import { Type } from 'typebox';

/** URL-safe characters only (§5.2 for nonce and state). */
const URL_SAFE = '^[A-Za-z0-9._~-]+$';

/**
 * A verifier's JWK as far as the request's shape goes: a key of a type or algorithm this wallet
 * does not know is passed over when the response key is chosen (RFC 7517 §5: a JWK Set's
 * recipient ignores keys out of its supported ranges), so `kty` is bounded in size only, long
 * enough for names not registered yet.
 */
const Jwk = Type.Object(
  {
    kty: Type.String({ minLength: 1, maxLength: 64 }),
    kid: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    alg: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    use: Type.Optional(Type.String({ maxLength: 16 })),
  },
  { additionalProperties: true },
);

/** Verifier metadata as OpenID4VP §11.1 and §8.3 use it; unknown members are ignored. */
export const ClientMetadata = Type.Object(
  {
    jwks: Type.Optional(Type.Object({ keys: Type.Array(Jwk, { minItems: 1, maxItems: 20 }) })),
    encrypted_response_enc_values_supported: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 20 }),
    ),
    vp_formats_supported: Type.Optional(Type.Object({}, { additionalProperties: true })),
    client_name: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: true },
);
export type ClientMetadata = Type.Static<typeof ClientMetadata>;

/** The authorization request parameters Coffer reads, after any request object is resolved. */
export const AuthorizationParameters = Type.Object(
  {
    response_type: Type.Optional(Type.String({ maxLength: 64 })),
    response_mode: Type.Optional(Type.String({ maxLength: 64 })),
    client_id: Type.String({ minLength: 1, maxLength: 2048 }),
    redirect_uri: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    response_uri: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    nonce: Type.Optional(Type.String({ minLength: 1, maxLength: 512, pattern: URL_SAFE })),
    state: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, pattern: URL_SAFE })),
    scope: Type.Optional(Type.String({ maxLength: 2048 })),
    dcql_query: Type.Optional(Type.Unknown()),
    client_metadata: Type.Optional(Type.Unknown()),
    transaction_data: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: true },
);
export type AuthorizationParameters = Type.Static<typeof AuthorizationParameters>;

/** What GET /v1/oid4vp/authorize accepts in its query (all text; JSON members are URL-encoded JSON). */
export const AuthorizeQuery = Type.Object(
  {
    response_type: Type.Optional(Type.String({ description: 'vp_token' })),
    response_mode: Type.Optional(Type.String({ description: 'fragment, direct_post or direct_post.jwt' })),
    client_id: Type.Optional(
      Type.String({
        description:
          'A registered verifier id, or x509_hash:, x509_san_dns:, verifier_attestation:, decentralized_identifier: or redirect_uri: with its value',
      }),
    ),
    redirect_uri: Type.Optional(Type.String()),
    response_uri: Type.Optional(Type.String()),
    dcql_query: Type.Optional(Type.String({ description: 'DCQL query, JSON' })),
    nonce: Type.Optional(Type.String()),
    state: Type.Optional(Type.String()),
    client_metadata: Type.Optional(Type.String({ description: 'Verifier metadata, JSON' })),
    request: Type.Optional(Type.String({ description: 'A signed request object' })),
    request_uri: Type.Optional(Type.String({ description: 'Where to fetch the signed request object' })),
    request_uri_method: Type.Optional(Type.String({ description: 'get or post' })),
    transaction_data: Type.Optional(
      Type.String({ description: 'JSON array of base64url-encoded transaction data objects (§5.1)' }),
    ),
  },
  { additionalProperties: true },
);

/** One transaction data object (§5.1) as decoded: the common fields; the type's own fields are kept as sent. */
export const TransactionDataObject = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 256 }),
    credential_ids: Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { minItems: 1, maxItems: 20 }),
    transaction_data_hashes_alg: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 32 }), { minItems: 1, maxItems: 10 }),
    ),
  },
  { additionalProperties: true },
);
