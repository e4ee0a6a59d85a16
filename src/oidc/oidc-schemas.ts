import { Type } from 'typebox';

/** The contract's JSON body; RFC 6749 form bodies arrive as the same object. Unknown parameters are ignored (RFC 6749 §3.2). */
export const TokenRequestBody = Type.Object(
  {
    grant_type: Type.String({
      minLength: 1,
      description:
        'authorization_code, refresh_token, or urn:ietf:params:oauth:grant-type:pre-authorized_code (OpenID4VCI §6.1, when credential issuers are enabled)',
    }),
    code: Type.Optional(
      Type.String({ minLength: 1, maxLength: 512, description: 'authorization_code grant.' }),
    ),
    client_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description: "Or HTTP Basic authentication. A wallet's own client id in issuance grants.",
      }),
    ),
    client_secret: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    redirect_uri: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2048, description: 'authorization_code grant.' }),
    ),
    code_verifier: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    refresh_token: Type.Optional(
      Type.String({ minLength: 1, maxLength: 512, description: 'refresh_token grant.' }),
    ),
    scope: Type.Optional(
      Type.String({
        maxLength: 1024,
        description: 'refresh_token grant: a narrower scope than granted (openid stays).',
      }),
    ),
    'pre-authorized_code': Type.Optional(
      Type.String({ description: 'Pre-authorized code grant: the code from the credential offer.' }),
    ),
    tx_code: Type.Optional(
      Type.String({
        description:
          'Pre-authorized code grant: the transaction code, when the offer asks for one (5 wrong tries end the offer).',
      }),
    ),
    authorization_details: Type.Optional(
      Type.Union([Type.String(), Type.Array(Type.Object({}, { additionalProperties: true }))], {
        description:
          'Pre-authorized code grant: openid_credential entries narrowing the offer (JSON text in a form body).',
      }),
    ),
  },
  { additionalProperties: true },
);

export const TokenResponseBody = Type.Object({
  scope: Type.Optional(
    Type.String({
      description: '"openid", plus profile/email when requested; absent for credential issuance.',
    }),
  ),
  token_type: Type.Union([Type.Literal('Bearer'), Type.Literal('DPoP')], {
    description:
      'DPoP when the request carried a DPoP proof: the access token is bound to its key (cnf.jkt).',
  }),
  access_token: Type.String({ description: 'JWT (RFC 9068), ES256.' }),
  expire_in: Type.Integer({ description: 'Lifetime of the access token in seconds.' }),
  expires_in: Type.Integer({ description: 'Same as expire_in (RFC 6749 name).' }),
  id_token: Type.Optional(Type.String({ description: 'OpenID Connect grants; not credential issuance.' })),
  authorization_details: Type.Optional(
    Type.Array(Type.Object({}, { additionalProperties: true }), {
      description: 'Credential issuance (OpenID4VCI §6.2): the credential_identifiers this token fetches.',
    }),
  ),
  refresh_token: Type.Optional(
    Type.String({
      description:
        'For clients registered with the refresh_token grant when the scope has offline_access; a new one at every refresh.',
    }),
  ),
});

/** RFC 9126 §2.1: the authorization request's parameters, form-encoded, with client authentication. */
export const PushedRequestBody = Type.Record(
  Type.String({ maxLength: 64 }),
  Type.String({ maxLength: 4096 }),
  {
    maxProperties: 40,
  },
);

export const PushedRequestResponse = Type.Object({
  request_uri: Type.String({ description: 'urn:ietf:params:oauth:request_uri:…, single use.' }),
  expires_in: Type.Integer({ description: 'Seconds (60).' }),
});

export const UserInfoBody = Type.Object(
  {
    sub: Type.String(),
    email: Type.Optional(Type.String()),
    email_verified: Type.Optional(Type.Boolean()),
    given_name: Type.Optional(Type.String()),
    family_name: Type.Optional(Type.String()),
    eth_address: Type.Union([Type.String(), Type.Null()]),
    did_wallet_address: Type.String(),
  },
  { additionalProperties: true },
);

/** RFC 7009 §2.1, form-encoded (or JSON); client authentication as at the token endpoint. */
export const RevocationBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 8192 }),
    token_type_hint: Type.Optional(
      Type.String({
        maxLength: 64,
        description: 'access_token or refresh_token; not needed, the token says which it is (§2.1).',
      }),
    ),
    client_id: Type.Optional(Type.String({ minLength: 1, maxLength: 20 })),
    client_secret: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  },
  { additionalProperties: true },
);

/** OpenID Connect RP-Initiated Logout 1.0 §2, as query (GET) or form (POST). */
export const EndSessionParams = Type.Object(
  {
    id_token_hint: Type.Optional(Type.String({ minLength: 1, maxLength: 8192 })),
    client_id: Type.Optional(Type.String({ minLength: 1, maxLength: 20 })),
    post_logout_redirect_uri: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    state: Type.Optional(Type.String({ maxLength: 2048 })),
    ui_locales: Type.Optional(Type.String({ maxLength: 256 })),
    logout_hint: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: true },
);
