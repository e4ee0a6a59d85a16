import { Type } from 'typebox';

/** The Credential Offer Endpoint's parameters (OpenID4VCI §4.1): exactly one of the two. */
export const OfferQuery = Type.Object(
  {
    credential_offer: Type.Optional(Type.String({ minLength: 2, maxLength: 16_384 })),
    credential_offer_uri: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  },
  { additionalProperties: true },
);

/** Wallet-initiated issuance (OpenID4VCI §3.4): an issuer's address, perhaps one of its credentials. */
export const StartQuery = Type.Object(
  {
    credential_issuer: Type.String({ minLength: 1, maxLength: 2048 }),
    credential_configuration_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  },
  { additionalProperties: true },
);

/** The authorization response at the wallet's redirect URI (RFC 6749 §4.1.2, RFC 9207). */
export const CallbackQuery = Type.Object(
  {
    code: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    state: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
    iss: Type.Optional(Type.String({ maxLength: 2048 })),
    error: Type.Optional(Type.String({ maxLength: 256 })),
    error_description: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: true },
);

export const IssuanceList = Type.Object({
  data: Type.Array(
    Type.Object({
      credential_issuer: Type.String(),
      credential_configuration_id: Type.String(),
      status: Type.Union([Type.Literal('pending'), Type.Literal('failed'), Type.Literal('done')]),
      failure: Type.Union([Type.String(), Type.Null()]),
      created_at: Type.String(),
    }),
  ),
});
