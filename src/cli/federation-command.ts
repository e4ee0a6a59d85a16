import { enableFederation, rotateFederationKeys } from '../federation/federation-service.ts';
import { isEntityIdentifier } from '../trust/federation/entity-statement.ts';
import { type CliDeps, type CommandResult, parse, UsageError } from './command-line.ts';

/**
 * `coffer federation enable [--authority-hint URL]... [--name NAME]`: Coffer becomes a federation
 * entity (its Entity Identifier is PUBLIC_URL) under the superiors named, and every tenant issuer
 * an entity below it. `coffer federation keys rotate`: a new federation key, signing from a day
 * later; the old one stays published for seven days after that. Both print the keys to register with the superior.
 */
export async function runFederationCommand(deps: CliDeps, argv: string[]): Promise<CommandResult> {
  const [, action, ...rest] = argv;
  const federationDeps = {
    db: deps.db,
    cipher: await deps.cipher(),
    publicUrl: deps.publicUrl,
    now: () => new Date(),
  };
  if (action === 'enable') {
    const { values, positionals } = parse(rest, {
      'authority-hint': { type: 'string', multiple: true },
      name: { type: 'string' },
    });
    if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
    const hints = (values['authority-hint'] as string[] | undefined) ?? [];
    for (const hint of hints) {
      if (!isEntityIdentifier(hint))
        throw new UsageError(`--authority-hint ${hint} is not an https Entity Identifier`);
    }
    if (!deps.publicUrl.startsWith('https://'))
      throw new UsageError('a federation entity needs an https PUBLIC_URL (its Entity Identifier)');
    const name = (values.name as string | undefined) ?? new URL(deps.publicUrl).host;
    const enabled = await enableFederation(federationDeps, { authorityHints: hints, organizationName: name });
    return {
      json: enabled,
      text: [
        `Coffer is the federation entity ${enabled.entity_id}${hints.length ? ` under ${hints.join(', ')}` : ' (no superior yet)'}.`,
        'Give its federation keys to the superior that registers it:',
        JSON.stringify(enabled.jwks),
      ].join('\n'),
    };
  }
  if (action === 'keys' && rest[0] === 'rotate') {
    const { positionals } = parse(rest.slice(1), {});
    if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
    const rotated = await rotateFederationKeys(federationDeps);
    return {
      json: rotated,
      text: [
        `The new key ${rotated.new_kid} is published now and signs from ${rotated.signing_from}; the earlier keys stay published for seven days after that.`,
        'Give the keys to the superior before then:',
        JSON.stringify(rotated.jwks),
      ].join('\n'),
    };
  }
  throw new UsageError(
    action
      ? `unknown command "federation ${[action, ...rest].join(' ')}"`
      : 'federation needs enable or keys rotate',
  );
}
