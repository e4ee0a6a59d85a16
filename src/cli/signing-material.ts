import { createDevelopmentCertificate, DEVELOPMENT_COUNTRY } from '../keys/development-certificate.ts';
import { type CliDeps, readText, UsageError } from './command-line.ts';

/**
 * `--key FILE --chain FILE` (PEM, the chain's leaf first), or a development key and self-signed
 * certificate for PUBLIC_URL's host when neither is given: what `verifier enable` and
 * `issuer enable` sign with.
 */
export async function signingMaterialOf(
  deps: Pick<CliDeps, 'publicUrl'>,
  values: Record<string, unknown>,
  name: string,
  now: Date,
  country = DEVELOPMENT_COUNTRY,
): Promise<{ keyPem: string; chainPem: string; development: boolean }> {
  if ((typeof values['key'] === 'string') !== (typeof values['chain'] === 'string')) {
    throw new UsageError('--key and --chain go together: the key signs, the chain names it');
  }
  if (typeof values['key'] !== 'string') {
    const made = await createDevelopmentCertificate({
      name,
      country,
      dnsName: new URL(deps.publicUrl).hostname,
      url: deps.publicUrl,
      now,
    });
    return { ...made, development: true };
  }
  return {
    keyPem: await readText(values['key']),
    chainPem: await readText(values['chain'] as string),
    development: false,
  };
}
