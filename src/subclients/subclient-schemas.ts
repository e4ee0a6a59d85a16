import { Type } from 'typebox';

/** Ids are PostgreSQL `integer`s; larger values can name nothing. */
export const ClientId = Type.Integer({ minimum: 1, maximum: 2147483647 });

const text = (minLength: number, maxLength: number, description: string) =>
  Type.String({ minLength, maxLength, description });

export const SubClientBody = Type.Object(
  {
    name: text(1, 100, 'Display name, 1–100 characters.'),
    address_1: text(1, 100, 'First address line, 1–100 characters.'),
    address_2: Type.Optional(text(0, 100, 'Second address line, 0–100 characters.')),
    country: Type.String({
      description: 'ISO 3166-1 alpha-2 country code, e.g. GB.',
      minLength: 2,
      maxLength: 2,
    }),
    province: text(
      1,
      70,
      'ISO 3166-2 subdivision code (e.g. GB-ENG) where the country has them; else 1–70 characters.',
    ),
    city: text(1, 70, 'City, 1–70 characters.'),
    timezone: Type.String({
      description: 'IANA time zone, e.g. Europe/London.',
      minLength: 1,
      maxLength: 64,
    }),
    domain: Type.String({
      description: 'DNS host name of the tenant app, e.g. app.example.com.',
      minLength: 1,
      maxLength: 253,
    }),
    subdomain: Type.String({
      description: 'One DNS label, unique across the deployment.',
      minLength: 1,
      maxLength: 63,
    }),
  },
  { additionalProperties: false },
);
export type SubClientBody = Type.Static<typeof SubClientBody>;

export const SubClient = Type.Object({
  client_id: Type.Integer(),
  name: Type.String(),
  domain: Type.String(),
  subdomain: Type.String(),
  timezone: Type.String(),
  address_1: Type.String(),
  address_2: Type.String(),
  country: Type.String(),
  province: Type.String(),
  city: Type.String(),
  from_email_address: Type.String({
    description: 'Sender of the tenant\'s e-mail; set with the admin CLI ("" when unset).',
  }),
  esp_token: Type.String({
    description: 'E-mail service token, masked to its last four characters ("" when unset).',
  }),
  recaptcha_key: Type.String({
    description: 'reCAPTCHA secret, masked to its last four characters ("" when unset).',
  }),
  recaptcha_threshold: Type.Number(),
  recaptcha_enabled: Type.Boolean(),
  created_at: Type.String({ format: 'date-time', description: 'ISO 8601, UTC.' }),
  privacy_link: Type.String(),
});
export type SubClient = Type.Static<typeof SubClient>;

export const SubClientEnvelope = Type.Object({ data: SubClient });

export const SubClientListQuery = Type.Object(
  {
    page: Type.Integer({ minimum: 1, maximum: 2147483647, default: 1 }),
    per_page: Type.Integer({ minimum: 1, maximum: 99, default: 20 }),
  },
  { additionalProperties: false },
);
export type SubClientListQuery = Type.Static<typeof SubClientListQuery>;

export const SubClientList = Type.Object({
  data: Type.Array(SubClient),
  per_page: Type.Integer(),
  current_page: Type.Integer(),
  total_pages: Type.Integer({ description: '0 when there are no sub-clients.' }),
});

export const SubClientIdParams = Type.Object({ subclient_id: ClientId }, { additionalProperties: false });

export const ApiTokenHeaders = Type.Object({
  'x-api-token': Type.Optional(Type.String({ description: 'API token of the calling client.' })),
});

export const ScopedApiTokenHeaders = Type.Object({
  'x-api-token': Type.Optional(Type.String({ description: 'API token of the calling client.' })),
  'x-api-subclient-id': Type.Optional(
    Type.String({ description: 'Act inside this sub-client of the calling master client.' }),
  ),
});
