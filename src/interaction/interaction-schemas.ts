import { Type } from 'typebox';

/** The interaction endpoints' bodies and answers (log-in steps, consent, sign-out confirmation). */

export const InteractionParams = Type.Object({ id: Type.String({ maxLength: 128 }) });

export const WalletLoginBody = Type.Object(
  {
    message: Type.String({ minLength: 1, maxLength: 4096, description: 'EIP-4361 message.' }),
    signature: Type.String({ minLength: 1, maxLength: 200, description: 'EIP-191 signature, 0x-hex.' }),
  },
  { additionalProperties: false },
);

export const EmailLoginBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254 }),
    recaptcha_token: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { additionalProperties: false },
);

export const EmailVerifyBody = Type.Object(
  { code: Type.String({ minLength: 1, maxLength: 12 }) },
  { additionalProperties: false },
);

/**
 * The person's answer in the hosted wallet: to a presentation request (`selections`) or to a
 * credential offer (`tx_code`, `account`).
 */
export const ConsentBody = Type.Object(
  {
    decision: Type.Union([Type.Literal('approve'), Type.Literal('decline')]),
    tx_code: Type.Optional(Type.String({ maxLength: 64 })),
    account: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    credential_configuration_ids: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { minItems: 1, maxItems: 10 }),
    ),
    selections: Type.Optional(
      Type.Record(
        Type.String({ minLength: 1, maxLength: 128 }),
        Type.Union([
          Type.String({ minLength: 1, maxLength: 2048 }),
          Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { minItems: 1, maxItems: 50 }),
        ]),
        { maxProperties: 50 },
      ),
    ),
  },
  { additionalProperties: false },
);

export const InteractionResult = Type.Object({
  redirect_to: Type.Optional(Type.String()),
  next: Type.Optional(Type.String()),
  /** After an issuance: the credentials added to the wallet. */
  received: Type.Optional(
    Type.Array(
      Type.Object({
        credential_id: Type.String(),
        format: Type.String(),
        type: Type.Union([Type.String(), Type.Array(Type.String())]),
      }),
    ),
  ),
  /** After an issuance: how many the issuer will deliver later. */
  pending: Type.Optional(Type.Integer()),
});

/** An extra log-in method started: what the page shows (for a wallet: the request, its QR code). */
export const ExtraLoginStarted = Type.Object(
  {
    request_id: Type.Optional(Type.String()),
    authorization_request: Type.Optional(
      Type.String({ description: 'openid4vp:// request: the "Open your wallet" link and the QR code.' }),
    ),
    qr_svg: Type.Optional(Type.String({ description: 'The QR code of authorization_request, as SVG.' })),
    page: Type.Optional(Type.String({ description: 'A page of its own with the QR code and the link.' })),
    expires_at: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** Where an extra log-in method stands: still waiting (202, status), or finished like any log-in. */
export const ExtraLoginChecked = Type.Object({
  redirect_to: Type.Optional(Type.String()),
  next: Type.Optional(Type.String()),
  status: Type.Optional(
    Type.String({ description: 'While waiting: created (not yet fetched by a wallet) or retrieved.' }),
  ),
});

export const LogoutDecisionBody = Type.Object(
  { decision: Type.Union([Type.Literal('sign_out'), Type.Literal('stay')]) },
  { additionalProperties: false },
);
