import type { Selectable } from 'kysely';
import type { AuditContext } from '../audit/audit-events.ts';
import type { IssuedCredentialsTable } from '../db/schema.ts';
import { CofferError, notFound } from '../errors.ts';
import type { IssuerDeps } from './issuer-deps.ts';
import { statusListUri, writeStatus } from './status-lists.ts';

/** An issued credential as the tenant sees it: never the credential or its claims. */
export function issuedCredentialView(publicUrl: string, row: Selectable<IssuedCredentialsTable>) {
  return {
    id: row.id,
    offer_id: row.offer_id,
    configuration_id: row.configuration_id,
    format: row.format,
    status: row.status,
    status_list:
      row.status_list_id !== null && row.status_index !== null
        ? { uri: statusListUri(publicUrl, row.status_list_id), index: row.status_index }
        : null,
    issued_at: row.issued_at,
  };
}

/**
 * `POST /v1/issuer/credentials/{id}/status`: revoke, suspend or reinstate, written into the
 * credential's status list at once. Revoked is final. A W3C credential's entry is a revocation
 * entry (Bitstring Status List, one purpose per entry), so it can be revoked, not suspended.
 */
export async function changeCredentialStatus(
  deps: IssuerDeps,
  clientId: number,
  credentialId: string,
  status: 'valid' | 'revoked' | 'suspended',
  context: AuditContext,
) {
  const row = await deps.db
    .selectFrom('issued_credentials')
    .selectAll()
    .where('id', '=', credentialId)
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  if (!row) throw notFound('The issued credential');
  if (row.status_list_id === null || row.status_index === null) {
    throw new CofferError(
      'conflict',
      'This credential has no status entry: its configuration was issued without status.',
    );
  }
  if (row.status === 'revoked' && status !== 'revoked') {
    throw new CofferError('conflict', 'The credential is revoked; revocation is final.');
  }
  if (status === 'suspended' && (row.format === 'jwt_vc_json' || row.format === 'ldp_vc')) {
    throw new CofferError(
      'invalid_request',
      'W3C credentials carry a revocation entry (Bitstring Status List): they can be revoked, not suspended.',
    );
  }
  const now = deps.now().toISOString();
  // A request that changes nothing (already in that status) records nothing.
  if (row.status !== status) {
    // Conditional on the status read: a concurrent revocation wins, and revoked stays final.
    // The event commits with the credential's new status; the list is written after, as before.
    await deps.db.transaction().execute(async (tx) => {
      const changed = await tx
        .updateTable('issued_credentials')
        .set({ status })
        .where('id', '=', row.id)
        .where('status', '=', row.status)
        .executeTakeFirst();
      if (Number(changed.numUpdatedRows) !== 1) {
        throw new CofferError('conflict', 'The credential status changed meanwhile; read it and try again.');
      }
      await deps.audit?.record(tx, {
        ...context,
        clientId,
        type: 'issuer.status_change',
        targets: { credential_id: row.id, from: row.status, to: status },
      });
    });
    await writeStatus(deps.db, row.status_list_id, row.status_index, status, now);
  }
  return issuedCredentialView(deps.config.publicUrl, { ...row, status });
}
