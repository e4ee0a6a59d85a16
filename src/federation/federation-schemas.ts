import { Type } from 'typebox';

export const IssuerEntityParams = Type.Object({ clientId: Type.String({ pattern: '^[1-9][0-9]{0,9}$' }) });
export const VerifierEntityParams = IssuerEntityParams;

const EntityTypes = Type.Union(
  [Type.String({ maxLength: 100 }), Type.Array(Type.String({ maxLength: 100 }), { maxItems: 10 })],
  {
    description: 'An entity type (e.g. openid_credential_verifier); may be repeated.',
  },
);

/** One value or several of a repeated query parameter, as a list. */
export const asList = (value: string | string[] | undefined) =>
  value === undefined ? undefined : Array.isArray(value) ? value : [value];

export const ListQuery = Type.Object({
  entity_type: Type.Optional(EntityTypes),
  intermediate: Type.Optional(
    Type.Boolean({ description: 'true: only intermediates (Coffer has none below it).' }),
  ),
});

export const ResolveQuery = Type.Object({
  sub: Type.Optional(
    Type.String({
      maxLength: 2048,
      description: "The entity resolved: Coffer or one of its tenants' entities.",
    }),
  ),
  trust_anchor: Type.Optional(
    Type.String({
      maxLength: 2048,
      description: 'The anchor the chain ends at: Coffer itself or one of FEDERATION_TRUST_ANCHORS.',
    }),
  ),
  entity_type: Type.Optional(EntityTypes),
});

export const FetchQuery = Type.Object({
  sub: Type.Optional(Type.String({ maxLength: 2048, description: 'The subordinate entity asked about.' })),
});

export const SubordinateList = Type.Array(Type.String(), {
  description: "The Entity Identifiers of Coffer's subordinates (its tenant issuers and verifiers).",
});
