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
    created = await saveConfiguration(deps.db, clientId, id, configuration, deps.now().toISOString());
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

export async function removeConfiguration(deps: IssuerDeps, clientId: number, id: string) {
  await requireIssuer(deps, clientId);
  if (!(await deleteConfiguration(deps.db, clientId, id))) throw notFound('The configuration');
}
