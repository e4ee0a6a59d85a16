import { Type } from 'typebox';

const uri = (description: string) => Type.String({ minLength: 1, maxLength: 2048, description });

const Proof = Type.Object(
  {
    type: Type.String({ maxLength: 128, description: 'DataIntegrityProof.' }),
    cryptosuite: Type.String({ maxLength: 128, description: 'bbs-2023.' }),
    proofPurpose: Type.String({ maxLength: 128, description: 'assertionMethod.' }),
    verificationMethod: uri("The issuer's key: did:key:zUC7…#zUC7… (BLS12-381 G2)."),
    created: Type.Optional(Type.String({ maxLength: 64 })),
    proofValue: Type.String({ minLength: 1, maxLength: 65536, description: 'Multibase base64url.' }),
  },
  { additionalProperties: true },
);

/**
 * A verifiable credential as the contract shows it; fields beyond these are kept as issued.
 * The schema checks the shape; the store policy and the proof are checked by the service.
 */
export const VerifiableCredential = Type.Object(
  {
    '@context': Type.Array(
      Type.Union([
        Type.String({ minLength: 1, maxLength: 2048 }),
        Type.Object({}, { additionalProperties: true }),
      ]),
      { minItems: 1, maxItems: 32, description: 'https://www.w3.org/ns/credentials/v2 first.' },
    ),
    id: Type.String({ minLength: 1, maxLength: 2048, format: 'uri', description: 'e.g. urn:uuid:…' }),
    type: Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { minItems: 1, maxItems: 32 }),
    issuer: Type.Union([uri('A DID.'), Type.Object({ id: uri('A DID.') }, { additionalProperties: true })]),
    credentialSubject: Type.Object(
      { id: uri("The holder's DID: their did:key, or did:pkh:eip155:<chain>:<address> of their wallet.") },
      { additionalProperties: true },
    ),
    validFrom: Type.Optional(Type.String({ maxLength: 64 })),
    validUntil: Type.Optional(Type.String({ maxLength: 64, description: 'May be empty.' })),
    credentialStatus: Type.Optional(Type.Unknown()),
    proof: Proof,
  },
  { additionalProperties: true },
);

export const CredentialFormatName = Type.Union(
  [Type.Literal('ldp_vc'), Type.Literal('dc+sd-jwt'), Type.Literal('mso_mdoc'), Type.Literal('jwt_vc_json')],
  { description: 'The credential format (OpenID4VP 1.0 Appendix B identifiers).' },
);

/** A compact credential: an SD-JWT VC, a VC-JWT or a base64url mdoc IssuerSigned. */
const CompactCredential = Type.String({
  minLength: 1,
  maxLength: 200_000,
  description:
    'dc+sd-jwt: issuer-signed JWT~disclosures~ (no key binding JWT); jwt_vc_json: a compact JWS (VC Data Model 1.1); mso_mdoc: base64url (no padding) CBOR IssuerSigned.',
});

export const StoreCredentialBody = Type.Object(
  {
    vc: Type.Union([VerifiableCredential, CompactCredential]),
    format: Type.Optional(CredentialFormatName),
  },
  { additionalProperties: false },
);
export type StoreCredentialBody = Type.Static<typeof StoreCredentialBody>;

/** A credential in a response: as issued, with credentialStatus as given or null. */
export const StoredVc = Type.Object(
  {
    '@context': Type.Array(Type.Unknown()),
    id: Type.String(),
    type: Type.Array(Type.String()),
    issuer: Type.Unknown(),
    credentialSubject: Type.Unknown(),
    credentialStatus: Type.Unknown({ description: 'As the issuer gave it, or null.' }),
    proof: Type.Unknown(),
  },
  { additionalProperties: true },
);

export type StoredVc = Type.Static<typeof StoredVc>;

export const StoredCredentialEnvelope = Type.Object({
  data: Type.Object({
    cid: Type.String({ description: 'CID of the encrypted block that holds the credential.' }),
    format: CredentialFormatName,
    vc: Type.Union([StoredVc, Type.String()], {
      description: 'As given; an ldp_vc object with credentialStatus as given or null.',
    }),
  }),
});

/** A credential of any format but ldp_vc, as the list shows it (DESIGN.md, List). */
export const CompactCredentialEntry = Type.Object({
  format: CredentialFormatName,
  id: Type.String({ description: 'jti, the VC id, else a hash: what deletion and consent selections take.' }),
  issuer: Type.String(),
  type: Type.Union([Type.String(), Type.Array(Type.String())], {
    description: 'The vct, the doctype or the VC type array.',
  }),
  validFrom: Type.Union([Type.String(), Type.Null()]),
  validUntil: Type.Union([Type.String(), Type.Null()]),
  claims: Type.Object({}, { additionalProperties: true, description: 'Every claim held, decoded.' }),
  credential: Type.String({ description: 'The stored value.' }),
});

export type CredentialListEntry = StoredVc | Type.Static<typeof CompactCredentialEntry>;

export const CredentialListEnvelope = Type.Object({
  data: Type.Array(Type.Union([StoredVc, CompactCredentialEntry]), { description: 'Newest first.' }),
});

const pointer = Type.String({
  minLength: 1,
  maxLength: 512,
  description: 'e.g. /credentialSubject/first_name',
});

export const PresentationBody = Type.Object(
  {
    vcIdFields: Type.Record(
      Type.String({ minLength: 1, maxLength: 2048 }),
      Type.Array(pointer, { maxItems: 100 }),
      {
        minProperties: 1,
        maxProperties: 20,
        description: 'Credential id → JSON pointers of the fields to disclose.',
      },
    ),
    options: Type.Optional(
      Type.Object(
        {
          presentationHeader: Type.Optional(
            Type.String({
              maxLength: 4096,
              description: 'A value from the verifier (e.g. its nonce), bound into every derived proof.',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type PresentationBody = Type.Static<typeof PresentationBody>;

const DerivedVc = Type.Object(
  {
    proof: Type.Object(
      {
        revealedPointers: Type.Array(Type.String(), { description: 'The disclosed JSON pointers.' }),
        revealedIndices: Type.Array(Type.Integer(), {
          description: "Indexes of the disclosed statements in the base proof's canonical order.",
        }),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
);

export const PresentationEnvelope = Type.Object({
  data: Type.Object({
    holder: Type.String({ description: "The user's DID." }),
    credentials: Type.Array(DerivedVc),
  }),
});
