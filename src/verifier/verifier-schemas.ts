import { Type } from 'typebox';

/** The tenant's presentation request (DESIGN.md, Verifying presentations). */
export const CreateVerifierRequestBody = Type.Object(
  {
    dcql_query: Type.Object({}, { additionalProperties: true, description: 'A DCQL query (OpenID4VP §6).' }),
    client_id_prefix: Type.Optional(
      Type.Union(
        [Type.Literal('x509_san_dns'), Type.Literal('x509_hash'), Type.Literal('openid_federation')],
        {
          description:
            "x509_san_dns when the certificate names the service host (default), else x509_hash. openid_federation (when an operator ran `coffer federation enable`): the client_id is the tenant verifier's Entity Identifier (PUBLIC_URL/verifiers/{client}), the request object is signed with the key its Entity Configuration publishes (kid, no x5c), and wallets encrypt to its static published encryption key.",
        },
      ),
    ),
    response_mode: Type.Optional(
      Type.Union(
        [
          Type.Literal('direct_post.jwt'),
          Type.Literal('direct_post'),
          Type.Literal('dc_api.jwt'),
          Type.Literal('dc_api'),
        ],
        {
          description:
            'direct_post.jwt by default: the wallet encrypts its answer to a key made for this request.',
        },
      ),
    ),
    transaction_data: Type.Optional(
      Type.Array(
        Type.Object(
          {
            type: Type.String({ minLength: 1, maxLength: 256 }),
            credential_ids: Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
              minItems: 1,
              maxItems: 20,
            }),
            transaction_data_hashes_alg: Type.Optional(
              Type.Array(Type.String({ minLength: 1, maxLength: 32 }), { minItems: 1, maxItems: 5 }),
            ),
          },
          { additionalProperties: true },
        ),
        {
          minItems: 1,
          maxItems: 10,
          description: 'Items the person confirms (OpenID4VP §5.1); dc+sd-jwt queries only.',
        },
      ),
    ),
    redirect_uri: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'Same-device flows: where the wallet sends the browser back, with a response_code.',
      }),
    ),
    expected_origins: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 512 }), {
        minItems: 1,
        maxItems: 10,
        description: 'dc_api modes: the origins of the pages that call the Digital Credentials API.',
      }),
    ),
    trusted_issuers: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 16384 }), {
        minItems: 1,
        maxItems: 20,
        description:
          'PEM CA certificates or issuer DIDs trusted for this request, besides ISSUER_TRUST_ANCHORS.',
      }),
    ),
    check_status: Type.Optional(Type.Boolean({ description: 'Check status lists (default true).' })),
    expires_in: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 3600, description: 'Seconds (default 600).' }),
    ),
    callback_url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'Gets a signed event (application/jwt) per change.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateVerifierRequestBody = Type.Static<typeof CreateVerifierRequestBody>;

export const VerifierRequestCreated = Type.Object({
  data: Type.Object({
    id: Type.String(),
    status: Type.Literal('created'),
    expires_at: Type.String(),
    page: Type.String({ description: 'A page for people: QR code and an "Open your wallet" link.' }),
    authorization_request: Type.Optional(
      Type.String({ description: 'openid4vp://?client_id=…&request_uri=…' }),
    ),
    haip_authorization_request: Type.Optional(
      Type.String({
        description:
          'haip://?client_id=…&request_uri=… for a request HAIP 1.0 shapes (x509_hash, direct_post.jwt): the scheme HAIP wallets must answer.',
      }),
    ),
    request_uri: Type.Optional(Type.String()),
    dc_api_request: Type.Optional(
      Type.Object({
        protocol: Type.String(),
        data: Type.Object({ request: Type.String() }),
      }),
    ),
  }),
});

/**
 * Request ids are base64url (verifier-requests.ts); anything else is refused before a query, and
 * text PostgreSQL cannot hold (a NUL) never reaches it.
 */
export const VerifierRequestParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }),
});

/** Text that is stored as given: no control characters (PostgreSQL text cannot hold a NUL). */
const STORABLE_TEXT = '^[^\\u0000-\\u001f\\u007f]+$';

/** §5.10: what a wallet may POST to the request URI (form-encoded). */
export const RequestObjectPost = Type.Object(
  {
    wallet_metadata: Type.Optional(Type.String({ maxLength: 16384 })),
    wallet_nonce: Type.Optional(Type.String({ minLength: 1, maxLength: 512, pattern: STORABLE_TEXT })),
  },
  { additionalProperties: true },
);

/** §8.2, §8.3.1, §8.5: the wallet's answer (form-encoded). */
export const WalletResponseBody = Type.Object(
  {
    response: Type.Optional(Type.String({ maxLength: 1_048_576 })),
    vp_token: Type.Optional(Type.String({ maxLength: 1_048_576 })),
    state: Type.Optional(Type.String({ maxLength: 2048 })),
    error: Type.Optional(Type.String({ maxLength: 256 })),
    error_description: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { additionalProperties: true },
);

export const DcApiResponseBody = Type.Object(
  {
    origin: Type.String({
      minLength: 1,
      maxLength: 512,
      description: 'The page origin that called the API.',
    }),
    data: Type.Object(
      {},
      { additionalProperties: true, description: 'What navigator.credentials.get returned in data.' },
    ),
  },
  { additionalProperties: false },
);

export const ResultQuery = Type.Object(
  { response_code: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })) },
  { additionalProperties: false },
);

const Check = Type.Object({ name: Type.String(), ok: Type.Boolean(), detail: Type.Optional(Type.String()) });

export const VerifiedCredential = Type.Object({
  format: Type.String(),
  issuer: Type.Union([
    Type.Object({
      id: Type.String(),
      trusted: Type.Boolean(),
      trusted_by: Type.Optional(
        Type.String({
          description:
            'What made the issuer trusted: certificate (an issuer anchor), did (a trusted_issuers DID), etsi_tl (a trusted list of TRUSTED_LISTS) or openid_federation.',
        }),
      ),
      trust_anchor: Type.Optional(
        Type.String({
          description:
            'The federation trust anchor (trusted_by openid_federation), or the URL of the trusted list that named the issuer service (trusted_by etsi_tl).',
        }),
      ),
      certificate: Type.Optional(Type.Object({}, { additionalProperties: true })),
    }),
    Type.Null(),
  ]),
  claims: Type.Optional(Type.Object({}, { additionalProperties: true })),
  status: Type.String({ description: 'valid, revoked, suspended, unknown, or unchecked.' }),
  checks: Type.Array(Check),
});

export const VerifierResultEnvelope = Type.Object({
  data: Type.Object({
    id: Type.String(),
    status: Type.Union([
      Type.Literal('created'),
      Type.Literal('retrieved'),
      Type.Literal('verified'),
      Type.Literal('rejected'),
      Type.Literal('declined'),
      Type.Literal('expired'),
    ]),
    expires_at: Type.String(),
    credentials: Type.Optional(Type.Record(Type.String(), Type.Array(VerifiedCredential))),
    transaction_data: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
    claims_deleted: Type.Optional(Type.Boolean()),
    error: Type.Optional(
      Type.Object({ error: Type.String(), error_description: Type.Optional(Type.String()) }),
    ),
  }),
});
