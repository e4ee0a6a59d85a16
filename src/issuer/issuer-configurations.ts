import type { AuditContext } from '../audit/audit-events.ts';
import { isUniqueViolation } from '../db/dialect.ts';
import { CofferError, notFound } from '../errors.ts';
import { type CredentialConfiguration, checkConfiguration } from './configurations.ts';
import type { IssuerDeps } from './issuer-deps.ts';
import {
  configurationsWithScope,
  deleteConfiguration,
  listConfigurations,
  saveConfiguration,
} from './issuer-repository.ts';
import { requireIssuer } from './offers.ts';

/** `PUT /v1/issuer/configurations/{id}`: creates (201) or replaces (200) a configuration. */
export async function putConfiguration(
  deps: IssuerDeps,
  clientId: number,
  id: string,
  configuration: CredentialConfiguration,
  context: AuditContext,
) {
  await requireIssuer(deps, clientId);
  checkConfiguration(configuration);
  const conflict = () =>
    new CofferError('conflict', `The scope ${configuration.scope} names another configuration already.`);
  if (configuration.scope) {
    const others = (await configurationsWithScope(deps.db, configuration.scope)).filter(
      (c) => c.clientId !== clientId || c.id !== id,
    );
    if (others.length) throw conflict();
  }
  let created: boolean;
  try {
    created = await deps.db.transaction().execute(async (tx) => {
      const isNew = await saveConfiguration(tx, clientId, id, configuration, deps.now().toISOString());
      await deps.audit?.record(tx, {
        ...context,
        clientId,
        type: 'issuer.configuration_put',
        targets: { configuration_id: id },
      });
      return isNew;
    });
  } catch (error) {
    // Another tenant took the scope between the check and the write.
    if (configuration.scope && isUniqueViolation(error)) throw conflict();
    throw error;
  }
  return { created, data: { id, ...configuration } };
}

export async function listIssuerConfigurations(deps: IssuerDeps, clientId: number) {
  await requireIssuer(deps, clientId);
  return [...(await listConfigurations(deps.db, clientId))].map(([id, configuration]) => ({
    id,
    ...configuration,
  }));
}

export async function removeConfiguration(
  deps: IssuerDeps,
  clientId: number,
  id: string,
  context: AuditContext,
) {
  await requireIssuer(deps, clientId);
  await deps.db.transaction().execute(async (tx) => {
    if (!(await deleteConfiguration(tx, clientId, id))) throw notFound('The configuration');
    await deps.audit?.record(tx, {
      ...context,
      clientId,
      type: 'issuer.configuration_delete',
      targets: { configuration_id: id },
    });
  });
}
