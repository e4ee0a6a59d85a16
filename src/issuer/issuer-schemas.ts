import { Type } from 'typebox';
import { UserProfile } from '../users/user-schemas.ts';

/** Identifiers wallets see in offers and metadata: configuration ids, kept to a safe alphabet. */
export const ConfigurationId = Type.String({ pattern: '^[A-Za-z0-9._:-]{1,64}$' });
export const ConfigurationParams = Type.Object({ id: ConfigurationId });

const Locale = Type.String({ minLength: 2, maxLength: 35 });
const Url = Type.String({ minLength: 1, maxLength: 2048 });
const Display = Type.Array(
  Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 200 }),
      locale: Type.Optional(Locale),
      logo: Type.Optional(
        Type.Object(
          { uri: Url, alt_text: Type.Optional(Type.String({ maxLength: 200 })) },
          { additionalProperties: false },
        ),
      ),
      description: Type.Optional(Type.String({ maxLength: 500 })),
      background_color: Type.Optional(Type.String({ maxLength: 32 })),
      text_color: Type.Optional(Type.String({ maxLength: 32 })),
    },
    { additionalProperties: false },
  ),
  { minItems: 1, maxItems: 20 },
);

const ClaimPathElement = Type.Union([
  Type.String({ minLength: 1, maxLength: 128 }),
  Type.Integer({ minimum: 0, maximum: 1000 }),
  Type.Null(),
]);

export const ClaimDescription = Type.Object(
  {
    // Nine steps: W3C paths gained their credentialSubject step (migration 0017) and can come back as they read.
    path: Type.Array(ClaimPathElement, {
      minItems: 1,
      maxItems: 9,
      description:
        'A claims path pointer into the credential (OpenID4VCI Appendix C): mso_mdoc [namespace, element]; jwt_vc_json and ldp_vc from credentialSubject, e.g. ["credentialSubject", "degree", "name"]; dc+sd-jwt from a claim name.',
    }),
    display: Type.Optional(
      Type.Array(
        Type.Object(
          { name: Type.Optional(Type.String({ maxLength: 200 })), locale: Type.Optional(Locale) },
          { additionalProperties: false },
        ),
        { maxItems: 20 },
      ),
    ),
    mandatory: Type.Optional(Type.Boolean()),
    selectively_disclosable: Type.Optional(
      Type.Boolean({ description: 'dc+sd-jwt and ldp_vc: false keeps the claim always disclosed.' }),
    ),
  },
  { additionalProperties: false },
);

const PROFILE_FIELDS = Object.keys(UserProfile.properties);

export const ConfigurationBody = Type.Object(
  {
    format: Type.Union(
      [
        Type.Literal('dc+sd-jwt'),
        Type.Literal('mso_mdoc'),
        Type.Literal('jwt_vc_json'),
        Type.Literal('ldp_vc'),
      ],
      { description: 'ldp_vc credentials are signed with bbs-2023, so holders disclose selectively.' },
    ),
    vct: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'dc+sd-jwt: the type.' })),
    doctype: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'mso_mdoc: the type.' })),
    type: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z][A-Za-z0-9_]{0,99}$',
        description: 'jwt_vc_json and ldp_vc: the VC type besides VerifiableCredential.',
      }),
    ),
    claims: Type.Array(ClaimDescription, {
      maxItems: 100,
      description:
        'The claims, by path into the credential (mso_mdoc: [namespace, element]; jwt_vc_json and ldp_vc: ["credentialSubject", …]).',
    }),
    display: Type.Optional(Display),
    scope: Type.Optional(
      Type.String({
        pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]{1,128}$',
        description: 'A scope wallets ask for (wallet-initiated issuance); unique across the deployment.',
      }),
    ),
    validity_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 20 * 365 * 86400 })),
    status: Type.Optional(
      Type.Boolean({ description: 'true: every credential gets a random index in a status list.' }),
    ),
    batch_size: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100,
        description: 'Copies per request, each bound to its own key.',
      }),
    ),
    from_profile: Type.Optional(
      Type.Record(
        Type.String({ pattern: '^[A-Za-z0-9_]{1,64}$' }),
        Type.Union(PROFILE_FIELDS.map((f) => Type.Literal(f))),
        {
          description:
            "Claims taken from the person's Coffer profile (claim name → profile field; jwt_vc_json and ldp_vc: a member of credentialSubject); issued under the authorization code grant after the person logs in.",
        },
      ),
    ),
    key_attestations_required: Type.Optional(
      Type.Boolean({ description: 'Proofs must carry a key attestation (OpenID4VCI Annex D).' }),
    ),
  },
  { additionalProperties: false },
);

export const ConfigurationEnvelope = Type.Object({
  data: Type.Object({ id: Type.String(), ...ConfigurationBody.properties }),
});
export const ConfigurationListEnvelope = Type.Object({
  data: Type.Array(Type.Object({ id: Type.String(), ...ConfigurationBody.properties })),
});

export const CreateOfferBody = Type.Object(
  {
    configuration_ids: Type.Array(ConfigurationId, { minItems: 1, maxItems: 10, uniqueItems: true }),
    claims: Type.Optional(
      Type.Record(
        Type.String({ minLength: 1, maxLength: 64 }),
        Type.Object({}, { additionalProperties: true }),
        {
          description:
            'Per configuration id, the claims to issue, as the credential addresses them (mso_mdoc: {namespace: {element: value}}; jwt_vc_json and ldp_vc: {"credentialSubject": {…}}). Absent: deferred until PUT …/claims.',
        },
      ),
    ),
    user_id: Type.Optional(Type.Integer({ minimum: 1, description: 'The account the offer is for.' })),
    grant: Type.Optional(
      Type.Union([Type.Literal('pre-authorized_code'), Type.Literal('authorization_code')], {
        description: 'pre-authorized_code by default; authorization_code asks the person to log in.',
      }),
    ),
    tx_code: Type.Optional(
      Type.Object(
        {
          length: Type.Optional(Type.Integer({ minimum: 4, maximum: 12 })),
          input_mode: Type.Optional(Type.Union([Type.Literal('numeric'), Type.Literal('text')])),
          description: Type.Optional(Type.String({ maxLength: 300 })),
        },
        { additionalProperties: false },
      ),
    ),
    expires_in: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400 })),
    callback_url: Type.Optional(Url),
  },
  { additionalProperties: false },
);

export const OfferParams = Type.Object({ id: Type.String({ pattern: '^[A-Za-z0-9_-]{16,64}$' }) });

export const OfferCreated = Type.Object({
  data: Type.Object({
    id: Type.String(),
    credential_offer_uri: Type.String(),
    offer_link: Type.String({ description: 'openid-credential-offer://?credential_offer_uri=…' }),
    haip_offer_link: Type.Optional(
      Type.String({
        description: 'haip://?credential_offer_uri=… (HAIP issuers): the scheme HAIP wallets must answer.',
      }),
    ),
    page: Type.String({ description: 'A page with the QR code and the link, for people.' }),
    tx_code: Type.Optional(
      Type.String({ description: 'Shown once: give it to the person apart from the offer.' }),
    ),
    expires_at: Type.String(),
  }),
});

const OfferStatus = Type.Union([
  Type.Literal('offered'),
  Type.Literal('redeemed'),
  Type.Literal('deferred'),
  Type.Literal('issued'),
  Type.Literal('accepted'),
  Type.Literal('failed'),
  Type.Literal('deleted'),
  Type.Literal('expired'),
  Type.Literal('cancelled'),
]);

export const IssuedCredentialView = Type.Object({
  id: Type.String(),
  offer_id: Type.Union([Type.String(), Type.Null()]),
  configuration_id: Type.String(),
  format: Type.String(),
  status: Type.Union([Type.Literal('valid'), Type.Literal('revoked'), Type.Literal('suspended')]),
  status_list: Type.Union([Type.Object({ uri: Type.String(), index: Type.Integer() }), Type.Null()]),
  issued_at: Type.String(),
});

export const OfferTrackingEnvelope = Type.Object({
  data: Type.Object({
    id: Type.String(),
    status: OfferStatus,
    configuration_ids: Type.Array(Type.String()),
    created_at: Type.String(),
    expires_at: Type.String(),
    credentials: Type.Array(IssuedCredentialView),
    events: Type.Array(Type.Object({ event: Type.String(), status: Type.String(), at: Type.String() })),
  }),
});

export const DeferredClaimsBody = Type.Object(
  {
    claims: Type.Record(
      Type.String({ minLength: 1, maxLength: 64 }),
      Type.Object({}, { additionalProperties: true }),
      { description: 'Per configuration id, the claims to issue, shaped as in POST /v1/issuer/offers.' },
    ),
  },
  { additionalProperties: false },
);

export const IssuedCredentialsQuery = Type.Object({
  offer: Type.Optional(OfferParams.properties.id),
  cursor: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9_-]{1,300}$',
      description: 'From the `Link: <…>; rel="next"` header of the previous page; opaque.',
    }),
  ),
});
export const IssuedCredentialParams = Type.Object({
  id: Type.String({ pattern: '^[A-Za-z0-9:_.-]{1,128}$' }),
});
export const IssuedCredentialsEnvelope = Type.Object({ data: Type.Array(IssuedCredentialView) });
export const StatusChangeBody = Type.Object(
  { status: Type.Union([Type.Literal('revoked'), Type.Literal('suspended'), Type.Literal('valid')]) },
  { additionalProperties: false },
);
export const IssuedCredentialEnvelope = Type.Object({ data: IssuedCredentialView });

export const IssuerParams = Type.Object({ clientId: Type.String({ pattern: '^[1-9][0-9]{0,9}$' }) });
export const StatusListParams = Type.Object({ id: Type.String({ pattern: '^[A-Za-z0-9_-]{16,64}$' }) });

/** The Credential Request (§8.2), unencrypted; a JWE body is opened first. */
export const CredentialRequestBody = Type.Object(
  {
    credential_identifier: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    credential_configuration_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    proofs: Type.Optional(
      Type.Object(
        {
          jwt: Type.Optional(
            Type.Array(Type.String({ minLength: 1, maxLength: 16_384 }), { minItems: 1, maxItems: 100 }),
          ),
          attestation: Type.Optional(
            Type.Array(Type.String({ minLength: 1, maxLength: 32_768 }), { minItems: 1, maxItems: 1 }),
          ),
        },
        { additionalProperties: true },
      ),
    ),
    credential_response_encryption: Type.Optional(
      Type.Object(
        {
          jwk: Type.Object({}, { additionalProperties: true }),
          enc: Type.String({ minLength: 1, maxLength: 32 }),
          zip: Type.Optional(Type.String({ minLength: 1, maxLength: 16 })),
        },
        { additionalProperties: true },
      ),
    ),
  },
  { additionalProperties: true },
);

export const DeferredRequestBody = Type.Object(
  {
    transaction_id: Type.String({ minLength: 1, maxLength: 128 }),
    credential_response_encryption: CredentialRequestBody.properties.credential_response_encryption,
  },
  { additionalProperties: true },
);

export const NotificationBody = Type.Object(
  {
    notification_id: Type.String({ minLength: 1, maxLength: 128 }),
    event: Type.String({ minLength: 1, maxLength: 64 }),
    event_description: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: true },
);

/** §8.3: the credentials (one per proof key) and their notification id, or a deferred transaction. */
export const CredentialResponseBody = Type.Object({
  credentials: Type.Optional(
    Type.Array(
      Type.Object({
        credential: Type.Union([Type.String(), Type.Object({}, { additionalProperties: true })]),
      }),
    ),
  ),
  notification_id: Type.Optional(Type.String()),
  transaction_id: Type.Optional(Type.String()),
  interval: Type.Optional(Type.Integer()),
});
