import { Type } from 'typebox';

export const AuditHeaders = Type.Object({
  'x-api-token': Type.Optional(Type.String({ description: 'API token of the calling client.' })),
});

export const AuditQuery = Type.Object(
  {
    type: Type.Optional(
      Type.String({ maxLength: 64, description: 'Only events of this type, e.g. `subclient.create`.' }),
    ),
    since: Type.Optional(
      Type.String({ format: 'date-time', description: 'Only events at or after this time.' }),
    ),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'Only events before this time.' })),
    cursor: Type.Optional(
      Type.String({ maxLength: 64, description: 'The `next_cursor` of the previous page, opaque.' }),
    ),
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
  },
  { additionalProperties: false },
);
export type AuditQuery = Type.Static<typeof AuditQuery>;

export const AuditEventSchema = Type.Object({
  id: Type.Integer(),
  time: Type.String({ format: 'date-time' }),
  client_id: Type.Union([Type.Integer(), Type.Null()], { description: 'The tenant.' }),
  actor: Type.String({
    description:
      '`client:<id>`, `person:<account id>`, `admin:<id>`, `cli` or `wallet` (a wallet no account names).',
  }),
  type: Type.String(),
  targets: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]), {
    description: 'The ids the act touched.',
  }),
  outcome: Type.Union([Type.Literal('success'), Type.Literal('failure')]),
  reason: Type.Union([Type.String(), Type.Null()], { description: 'A stable code, for failures.' }),
  request_id: Type.Union([Type.String(), Type.Null()]),
  chain_seq: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Position in the hash chain; null for the second or so before the row is sealed.',
  }),
  hash: Type.Union([Type.String(), Type.Null()]),
});

export const AuditPage = Type.Object({
  data: Type.Array(AuditEventSchema),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'null on the last page.' }),
});
