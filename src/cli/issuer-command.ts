import { findClient } from '../clients/client-repository.ts';
import { enableIssuer } from '../issuer/issuer-admin.ts';
import { signerCertificateWarnings } from '../issuer/signer-certificate-checks.ts';
import { DEVELOPMENT_COUNTRY } from '../keys/development-certificate.ts';
import { isCountryCode } from '../options/code-lists.ts';
import { type CliDeps, type CommandResult, clientIdOf, parse, UsageError } from './command-line.ts';
import { signingMaterialOf } from './signing-material.ts';

/**
 * `coffer issuer enable --client ID [--key FILE --chain FILE | --country CC] [--haip]`: the
 * client's credential issuer; without files, a development key and self-signed certificate,
 * with a warning; with them, warnings for what readers of its credentials will refuse.
 */
export async function runIssuerCommand(deps: CliDeps, argv: string[]): Promise<CommandResult> {
  const [, action, ...args] = argv;
  if (action !== 'enable') {
    throw new UsageError(action ? `unknown command "issuer ${action}"` : 'issuer needs enable');
  }
  const { values, positionals } = parse(args, {
    client: { type: 'string' },
    key: { type: 'string' },
    chain: { type: 'string' },
    country: { type: 'string' },
    haip: { type: 'boolean' },
  });
  if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
  const clientId = clientIdOf(values.client as string | undefined, '--client');
  const country = countryOf(values.country as string | undefined);
  if (values.country !== undefined && typeof values.key === 'string') {
    // The operator's certificate names its own country; silently ignoring --country would hide that.
    throw new UsageError('--country names the development certificate; a --chain names its own country');
  }
  const now = new Date();
  // The development certificate names the tenant, as wallets show a certificate's O or CN.
  const tenantName = (await findClient(deps.db, clientId))?.name.trim() || `Coffer issuer ${clientId}`;
  const { development, ...material } = await signingMaterialOf(deps, values, tenantName, now, country);
  const enabled = await enableIssuer(
    { db: deps.db, cipher: await deps.cipher(), publicUrl: deps.publicUrl, now },
    clientId,
    material,
    { haip: values.haip === true },
  );
  const warnings = [
    ...(development
      ? [
          'Development certificate: self-signed, so wallets show this issuer as unverified unless they trust it. Production uses a certificate from the ecosystem (--key, --chain).',
        ]
      : []),
    ...signerCertificateWarnings(material.chainPem, enabled.credential_issuer),
  ];
  return {
    json: {
      ...enabled,
      development,
      // `warning` (one text) is what readers of the development warning already look at.
      ...(warnings.length ? { warning: warnings.join(' '), warnings } : {}),
    },
    text: [
      `Client ${clientId} issues credentials as ${enabled.credential_issuer}${enabled.haip ? ' (HAIP)' : ''}.`,
      `Metadata: ${enabled.metadata}`,
      `bbs-2023 issuer: ${enabled.did}`,
      `Certificate ${enabled.certificate.subject}, valid until ${enabled.certificate.not_after}.`,
      ...warnings.map((warning) => `Warning: ${warning}`),
    ].join('\n'),
  };
}

/**
 * `--country`: an ISO 3166-1 alpha-2 code of an assigned country, or the user-assigned ZZ (the
 * default), as mdoc readers compare it with an mDL's issuing_country.
 */
function countryOf(raw: string | undefined): string {
  if (raw === undefined) return DEVELOPMENT_COUNTRY;
  if (raw === DEVELOPMENT_COUNTRY || isCountryCode(raw)) return raw;
  throw new UsageError(
    `--country must be an ISO 3166-1 alpha-2 code in capitals (such as DE or US), or ZZ; not ${JSON.stringify(raw)}`,
  );
}
