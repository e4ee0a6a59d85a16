import {
  type AdminIdentity,
  deleteAdmin,
  insertAdmin,
  listAdmins,
  roleOf,
  walletIdentity,
} from '../console/console-admins.ts';
import { CofferError } from '../errors.ts';
import { isEmailAddress } from '../interaction/login-methods.ts';
import {
  type CliDeps,
  type CommandResult,
  clientIdOf,
  parse,
  recordCliEvent,
  UsageError,
} from './command-line.ts';

export interface AdminCommandDeps extends CliDeps {
  /** The blind indexes of an e-mail address under each key of the master-key ring, current first. */
  emailIndexes: () => Promise<(email: string) => string[]>;
}

/** `--email ADDRESS` or `--wallet ADDRESS`, exactly one; the e-mail only as its blind indexes. */
async function identityOf(deps: AdminCommandDeps, values: Record<string, unknown>): Promise<AdminIdentity> {
  const email = values['email'];
  const wallet = values['wallet'];
  if ((typeof email === 'string') === (typeof wallet === 'string'))
    throw new UsageError('exactly one of --email and --wallet is required');
  if (typeof wallet === 'string') return usage(() => walletIdentity(wallet));
  const address = (email as string).trim();
  if (!isEmailAddress(address)) throw new UsageError('--email must be an e-mail address');
  return { emailIndexes: (await deps.emailIndexes())(address) };
}

/**
 * `coffer admin add|remove|list`: the people a client grants a console role (docs/console.md).
 * The trail records ids only: the administrator's row id, never the address.
 */
export async function runAdminCommand(deps: AdminCommandDeps, argv: string[]): Promise<CommandResult> {
  const [, action, ...args] = argv;
  const options = {
    client: { type: 'string' },
    email: { type: 'string' },
    wallet: { type: 'string' },
    role: { type: 'string' },
  } as const;
  const { values, positionals } = parse(args, options);
  if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
  const clientId = clientIdOf(values.client as string | undefined, '--client');
  switch (action) {
    case 'add': {
      if (typeof values.role !== 'string')
        throw new UsageError('--role is required (owner, operator or auditor)');
      const role = usage(() => roleOf(values.role as string));
      const identity = await identityOf(deps, values);
      const admin = await deps.db.transaction().execute(async (tx) => {
        const row = await insertAdmin(tx, clientId, identity, role);
        await recordCliEvent(tx, {
          clientId,
          type: 'admin.add',
          targets: { admin_id: row.id, role },
        });
        return row;
      });
      return {
        json: { id: admin.id, client_id: clientId, role },
        text: `Administrator ${admin.id} of client ${clientId} is ${role}; they log in at /console.`,
      };
    }
    case 'remove': {
      const identity = await identityOf(deps, values);
      const removed = await deps.db.transaction().execute(async (tx) => {
        const row = await deleteAdmin(tx, clientId, identity);
        await recordCliEvent(tx, { clientId, type: 'admin.remove', targets: { admin_id: row.id } });
        return row;
      });
      return {
        json: { id: removed.id, client_id: clientId, removed: true },
        text: `Administrator ${removed.id} of client ${clientId} was removed.`,
      };
    }
    case 'list': {
      const rows = await listAdmins(deps.db, clientId);
      // The e-mail is stored only as a blind index: the list says which kind of identity, not whose.
      const admins = rows.map((row) => ({
        id: row.id,
        role: row.role,
        identity: row.wallet_address !== null ? `wallet ${row.wallet_address}` : 'e-mail address',
        created_at: row.created_at,
      }));
      return {
        json: admins,
        text: admins.length
          ? admins.map((a) => `${a.id}\t${a.role}\t${a.identity}\t${a.created_at}`).join('\n')
          : `Client ${clientId} has no administrators.`,
      };
    }
    default:
      throw new UsageError(action ? `unknown command "admin ${action}"` : 'admin needs add, remove or list');
  }
}

function usage<T>(act: () => T): T {
  try {
    return act();
  } catch (error) {
    if (error instanceof CofferError) throw new UsageError(error.message);
    throw error;
  }
}
