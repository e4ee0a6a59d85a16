import type { CredentialOfferObject, IssuerMetadataResult, Openid4vciClient } from '@openid4vc/openid4vci';
import { CofferError } from '../errors.ts';
import { FORMAT_IDS, type FormatId } from '../formats/credential-format.ts';
import type { ClaimName } from '../formats/display-names.ts';
import { OutboundError } from '../http/outbound.ts';
import type { MetadataSigner } from './signed-metadata.ts';

/** What the page shows of one offered credential (its configuration's `display`). */
export interface OfferedConfiguration {
  id: string;
  format: FormatId;
  name: string;
  description: string | null;
  logo: { uri: string; alt_text: string | null } | null;
  background_color: string | null;
  text_color: string | null;
}

export interface OfferedTxCode {
  length: number | null;
  input_mode: 'numeric' | 'text';
  description: string | null;
}

export type OfferedGrant = 'pre-authorized_code' | 'authorization_code';

/** A resolved, checked offer: everything the interaction needs, kept as its `params`. */
export interface ResolvedOffer {
  issuer: {
    identifier: string;
    name: string;
    logo: { uri: string; alt_text: string | null } | null;
    /** True when the issuer's signed metadata chains to ISSUER_TRUST_ANCHORS (signed-metadata.ts). */
    verified: boolean;
    /** The certificate that signed the metadata, when it was signed. */
    certificate: MetadataSigner | null;
  };
  offer: CredentialOfferObject;
  metadata: IssuerMetadataResult;
  grant: OfferedGrant;
  txCode: OfferedTxCode | null;
  configurations: OfferedConfiguration[];
  /**
   * Started by the person from their wallet (an issuer address, no offer): `offer` is then the
   * wallet's own, `configurations` what the person may choose from.
   */
  walletInitiated: boolean;
}

const PRE_AUTHORIZED = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';

/** Why an offer cannot be taken; the sentence is for the person and the issuer's developers. */
export const offerRefused = (why: string) =>
  new CofferError('invalid_request', `This credential offer cannot be used: ${why}.`);

/** A network failure is the issuer's (502); an address the wallet will not contact is the offer's (400). */
export const issuerUnreachable = (error: OutboundError) =>
  error.refused
    ? offerRefused(`it points the wallet at an address it does not contact: ${error.message}`)
    : new CofferError('bad_gateway', `The credential issuer could not be reached: ${error.message}.`);

/** Library and network failures, as the sentence the person reads. */
export function explainFailure(error: unknown, what: string): CofferError {
  if (error instanceof CofferError) return error;
  if (error instanceof OutboundError) return issuerUnreachable(error);
  const cause = (error as { cause?: unknown })?.cause;
  if (cause instanceof OutboundError) return issuerUnreachable(cause);
  const message = error instanceof Error ? error.message.split('\n')[0]!.slice(0, 300) : 'unknown failure';
  return offerRefused(`${what}: ${message}`);
}

interface DisplayEntry {
  name?: string;
  locale?: string;
  description?: string;
  logo?: { uri?: string; alt_text?: string };
  background_color?: string;
  text_color?: string;
}

/** The English display entry, else the one without a locale, else the first. */
function displayOf(list: unknown): DisplayEntry | undefined {
  if (!Array.isArray(list) || list.length === 0) return undefined;
  const entries = list.filter((e): e is DisplayEntry => typeof e === 'object' && e !== null);
  return (
    entries.find((e) => e.locale?.toLowerCase().startsWith('en')) ??
    entries.find((e) => e.locale === undefined) ??
    entries[0]
  );
}

/** Only https: logos are shown (a data: or javascript: URI is not an image the page loads). */
function logoOf(display: DisplayEntry | undefined) {
  const uri = display?.logo?.uri;
  if (typeof uri !== 'string' || uri.length > 2048) return null;
  try {
    const parsed = new URL(uri);
    if (parsed.protocol !== 'https:') return null;
    const alt = display?.logo?.alt_text;
    return { uri: parsed.href, alt_text: typeof alt === 'string' ? alt.slice(0, 200) : null };
  } catch {
    return null;
  }
}

/** The issuer's name and logo as its metadata displays them (its host when it names none). */
export function issuerDisplayOf(metadata: IssuerMetadataResult, identifier: string) {
  const display = displayOf(metadata.credentialIssuer.display);
  return { name: display?.name ?? new URL(identifier).host, logo: logoOf(display) };
}

export type IssuerDisplay = ReturnType<typeof issuerDisplayOf>;

const supportedOf = (metadata: IssuerMetadataResult) =>
  (metadata.credentialIssuer.credential_configurations_supported ?? {}) as Record<
    string,
    Record<string, unknown>
  >;

/** A configuration of the metadata by id; its own members only, so `toString` names none. */
const configurationNamed = (metadata: IssuerMetadataResult, id: string) => {
  const supported = supportedOf(metadata);
  return Object.hasOwn(supported, id) ? supported[id] : undefined;
};

/** A configuration's display (`credential_metadata.display`, or the older top-level `display`). */
const configurationDisplayOf = (configuration: Record<string, unknown>) =>
  displayOf(
    (configuration['credential_metadata'] as { display?: unknown } | undefined)?.display ??
      configuration['display'],
  );

/** The name a credential configuration displays, kept with what it issues; null when it names none. */
export function configurationDisplayName(metadata: IssuerMetadataResult, id: string): string | null {
  const configuration = configurationNamed(metadata, id);
  const name = configuration && configurationDisplayOf(configuration)?.name;
  return typeof name === 'string' ? name : null;
}

/** A claims path pointer step (Appendix C) of a plausible size; anything else is no path. */
const isPathStep = (step: unknown) =>
  step === null ||
  (typeof step === 'string' && step.length <= 256) ||
  (typeof step === 'number' && Number.isInteger(step) && step >= 0);

/**
 * The names a credential configuration gives its claims (`credential_metadata.claims`, or the
 * older top-level `claims` array), kept with what it issues so the wallet page shows them: each
 * path as the issuer wrote it, a pointer into the credential, with its English display name (else
 * the one without a locale, else the first). At most 100, each name at most 200 characters.
 */
export function configurationClaimNames(metadata: IssuerMetadataResult, id: string): ClaimName[] {
  const configuration = configurationNamed(metadata, id);
  if (!configuration) return [];
  const claims =
    (configuration['credential_metadata'] as { claims?: unknown } | undefined)?.claims ??
    configuration['claims'];
  if (!Array.isArray(claims)) return [];
  const names: ClaimName[] = [];
  for (const claim of claims.slice(0, 100) as { path?: unknown; display?: unknown }[]) {
    const path = claim?.path;
    if (!Array.isArray(path) || path.length === 0 || path.length > 16 || !path.every(isPathStep)) continue;
    const name = displayOf(claim.display)?.name;
    if (typeof name === 'string' && name !== '') names.push({ path, name: name.slice(0, 200) });
  }
  return names;
}

/** At most this many credentials in one offer, or to choose from in one wallet-initiated issuance. */
const MAX_OFFERED = 10;

function configurationsOf(
  offer: CredentialOfferObject,
  metadata: IssuerMetadataResult,
): OfferedConfiguration[] {
  const ids = offer.credential_configuration_ids ?? [];
  if (ids.length === 0) throw offerRefused('it names no credential configuration');
  if (ids.length > MAX_OFFERED) throw offerRefused(`it offers more than ${MAX_OFFERED} credentials at once`);
  return ids.map((id) => {
    const configuration = configurationNamed(metadata, id);
    if (!configuration) throw offerRefused(`the issuer's metadata has no credential configuration ${id}`);
    const format = configuration['format'];
    if (!FORMAT_IDS.includes(format as FormatId)) {
      throw offerRefused(`credential ${id} has format ${String(format)}, which this wallet does not hold`);
    }
    const display = configurationDisplayOf(configuration);
    return {
      id,
      format: format as FormatId,
      name: display?.name ?? id,
      description: display?.description ?? null,
      logo: logoOf(display),
      background_color: display?.background_color ?? null,
      text_color: display?.text_color ?? null,
    };
  });
}

function grantOf(offer: CredentialOfferObject): { grant: OfferedGrant; txCode: OfferedTxCode | null } {
  const grants = (offer.grants ?? {}) as Record<string, Record<string, unknown> | undefined>;
  const preAuthorized = grants[PRE_AUTHORIZED];
  if (preAuthorized) {
    const txCode = preAuthorized['tx_code'] as
      | { length?: number; input_mode?: string; description?: string }
      | undefined;
    return {
      grant: 'pre-authorized_code',
      txCode: txCode
        ? {
            length: typeof txCode.length === 'number' ? txCode.length : null,
            input_mode: txCode.input_mode === 'text' ? 'text' : 'numeric',
            description: typeof txCode.description === 'string' ? txCode.description.slice(0, 300) : null,
          }
        : null,
    };
  }
  // No grants (or only authorization_code): the wallet asks the authorization server (§4.1.1).
  return { grant: 'authorization_code', txCode: null };
}

/** Who the issuer is: its metadata (signed where it signs it), name, logo and certificate. */
async function resolveIssuer(
  client: Openid4vciClient,
  identifier: string,
  metadataSigner: () => MetadataSigner | null,
): Promise<{ metadata: IssuerMetadataResult; issuer: ResolvedOffer['issuer'] }> {
  let metadata: IssuerMetadataResult;
  try {
    metadata = await client.resolveIssuerMetadata(identifier);
  } catch (error) {
    throw explainFailure(
      error,
      "the issuer's metadata could not be read, or its signature does not verify with a certificate of ISSUER_TRUST_ANCHORS",
    );
  }
  return {
    metadata,
    issuer: {
      identifier,
      ...issuerDisplayOf(metadata, identifier),
      verified: metadata.signedCredentialIssuer !== undefined && metadataSigner() !== null,
      certificate: metadataSigner(),
    },
  };
}

function requireAuthorizationEndpoint(metadata: IssuerMetadataResult): void {
  const server = metadata.authorizationServers[0];
  if (!server?.authorization_endpoint) {
    throw offerRefused('it needs an authorization server with an authorization endpoint, and there is none');
  }
}

/**
 * The Credential Offer (§4.1) by value or by reference, the Credential Issuer Metadata (§12.2,
 * with the path rule) and the Authorization Server Metadata, fetched and checked by the library;
 * then what Coffer itself requires: formats it holds, a grant it can use.
 */
export async function resolveOffer(
  client: Openid4vciClient,
  query: { credential_offer?: string | undefined; credential_offer_uri?: string | undefined },
  /** Who signed the metadata, as the client's verifyJwt callback saw it (null when unsigned). */
  metadataSigner: () => MetadataSigner | null = () => null,
): Promise<ResolvedOffer> {
  if ((query.credential_offer === undefined) === (query.credential_offer_uri === undefined)) {
    throw offerRefused('give exactly one of credential_offer and credential_offer_uri');
  }
  const link = `openid-credential-offer://?${new URLSearchParams(query as Record<string, string>)}`;
  let offer: CredentialOfferObject;
  try {
    offer = await client.resolveCredentialOffer(link);
  } catch (error) {
    throw explainFailure(error, 'the offer is not a valid OpenID4VCI credential offer');
  }
  const { metadata, issuer } = await resolveIssuer(client, offer.credential_issuer, metadataSigner);
  const { grant, txCode } = grantOf(offer);
  if (grant === 'authorization_code') requireAuthorizationEndpoint(metadata);
  return {
    issuer,
    offer,
    metadata,
    grant,
    txCode,
    configurations: configurationsOf(offer, metadata),
    walletInitiated: false,
  };
}

/**
 * Wallet-initiated issuance (§3.4, HAIP 1.0 §4): an issuer address and perhaps one credential
 * configuration, no offer. The authorization code grant follows, with the configurations'
 * scopes. Without a configuration, the person chooses among those in formats this wallet holds.
 */
export async function resolveWalletIssuance(
  client: Openid4vciClient,
  query: { credential_issuer: string; credential_configuration_id?: string | undefined },
  metadataSigner: () => MetadataSigner | null = () => null,
): Promise<ResolvedOffer> {
  let identifier: URL;
  try {
    identifier = new URL(query.credential_issuer);
  } catch {
    throw offerRefused('credential_issuer is not an address');
  }
  if (identifier.protocol !== 'https:' || identifier.search || identifier.hash) {
    throw offerRefused('credential_issuer must be an https address without query or fragment');
  }
  const { metadata, issuer } = await resolveIssuer(client, query.credential_issuer, metadataSigner);
  requireAuthorizationEndpoint(metadata);
  const supported = supportedOf(metadata);
  const wanted = query.credential_configuration_id;
  const held = Object.keys(supported).filter((id) =>
    FORMAT_IDS.includes(supported[id]!['format'] as FormatId),
  );
  if (wanted !== undefined && !configurationNamed(metadata, wanted)) {
    throw offerRefused(`the issuer's metadata has no credential configuration ${wanted}`);
  }
  const ids = wanted !== undefined ? [wanted] : held.slice(0, MAX_OFFERED);
  if (ids.length === 0) throw offerRefused('the issuer issues no credential in a format this wallet holds');
  const offer = {
    credential_issuer: metadata.credentialIssuer.credential_issuer,
    credential_configuration_ids: ids,
    grants: { authorization_code: {} },
  } as CredentialOfferObject;
  return {
    issuer,
    offer,
    metadata,
    grant: 'authorization_code',
    txCode: null,
    configurations: configurationsOf(offer, metadata),
    walletInitiated: true,
  };
}
