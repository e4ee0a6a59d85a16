import { Type } from 'typebox';

export const IssuerEntityParams = Type.Object({ clientId: Type.String({ pattern: '^[1-9][0-9]{0,9}$' }) });

export const FetchQuery = Type.Object({
  sub: Type.Optional(Type.String({ maxLength: 2048, description: 'The subordinate entity asked about.' })),
});

export const SubordinateList = Type.Array(Type.String(), {
  description: "The Entity Identifiers of Coffer's subordinates (its tenant issuers).",
});
