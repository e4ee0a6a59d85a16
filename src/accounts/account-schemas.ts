import { Type } from 'typebox';
import { ClientId } from '../subclients/subclient-schemas.ts';

export const UserIdParams = Type.Object({ user_id: ClientId }, { additionalProperties: false });

const Json = Type.Unknown();

/** One account in a person's export: everything Coffer holds about it, opened. */
const ExportedAccount = Type.Object({
  user_id: Type.Integer(),
  did: Type.String({ description: "The account's DID (its holder key's did:key)." }),
  tenant: Type.Object({ client_id: Type.Integer(), name: Type.String() }),
  created_at: Type.String(),
  email_verified: Type.Boolean(),
  wallet_address: Type.Union([Type.String(), Type.Null()]),
  profile: Json,
  credentials: Type.Array(
    Type.Object({
      id: Type.String(),
      format: Type.String(),
      received_at: Type.String(),
      received_from: Type.String({ description: 'The OpenID4VCI issuer, or the API client that stored it.' }),
      credential: Type.Unknown({
        description: 'The credential as issued, in its format (JSON or compact text).',
      }),
      other_copies: Type.Array(Type.Unknown(), {
        description: 'The other copies of a batch issuance, each bound to its own holder key.',
      }),
    }),
  ),
  history: Type.Array(Json, { description: 'The wallet history of the account, newest first.' }),
});

export const AccountExport = Type.Object({
  exported_at: Type.String(),
  accounts: Type.Array(ExportedAccount),
});
