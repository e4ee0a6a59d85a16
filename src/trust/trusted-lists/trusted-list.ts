import type { X509Certificate } from 'node:crypto';

/**
 * What Coffer keeps of a verified trusted list (ETSI TS 119 612) or list of trusted entities
 * (ETSI TS 119 602): when it must be fetched again, the lists it points to, and its services
 * whose status lets them be trusted now.
 */
export type TrustedListKind = 'etsi-119612' | 'lote-119602';

export interface TrustedListSource {
  url: string;
  kind: TrustedListKind;
  /** The certificates one of which must have signed the list (pinned, never taken from the list). */
  signers: X509Certificate[];
}

export interface ListedService {
  /** ServiceTypeIdentifier, a URI. */
  type: string;
  /** ServiceName, the English one where several languages are given. */
  name: string;
  /** ServiceStatus URI; absent in a 119 602 list, where being listed is the status. */
  status: string | undefined;
  /** The service's digital identities (X509Certificate), parsed. */
  certificates: X509Certificate[];
}

/** A pointer of a list of lists (OtherTSLPointer / PointerToOtherLoTE): where, and who signs it. */
export interface ListPointer {
  url: string;
  signers: X509Certificate[];
}

export interface ReadList {
  /** NextUpdate; a list past it is expired. Absent only where the list says it is closed. */
  nextUpdate: Date;
  territory: string | undefined;
  sequenceNumber: number | undefined;
  pointers: ListPointer[];
  services: ListedService[];
}

/** What a granted service vouches for: credential issuers, wallet providers, or relying parties' access. */
export type ServiceRole = 'issuer' | 'wallet_provider' | 'relying_party_access';

/** A service that may vouch for a credential issuer (or, by its role, a wallet provider or verifier), and the list that named it. */
export interface GrantedService {
  role: ServiceRole;
  listUrl: string;
  type: string;
  name: string;
  certificates: X509Certificate[];
}

const TS = 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/';

/**
 * Statuses under which a 119 612 service is trusted now: `granted` (eIDAS 2014 onwards) and
 * `recognisedatnationallevel` (a national scheme's own). Withdrawn, suspended, deprecated and the
 * pre-2016 supervision statuses vouch for nothing.
 */
export const GRANTED_STATUSES: ReadonlySet<string> = new Set([
  `${TS}granted`,
  `${TS}recognisedatnationallevel`,
]);

/**
 * Service types that issue credentials (DESIGN.md, Trust frameworks): PID providers, qualified,
 * public-body and other (Q)EAA providers, in 119 612 and in 119 602 terms. Wallet providers,
 * relying-party access and registration certificate providers, and revocation services are
 * listed too but make no issuer trusted.
 */
export const ISSUER_SERVICE_TYPES: ReadonlySet<string> = new Set([
  'http://uri.etsi.org/TrstSvc/Svctype/EAA/Q',
  'http://uri.etsi.org/TrstSvc/Svctype/EAA/Pub-EAA',
  'http://uri.etsi.org/TrstSvc/Svctype/EAA',
  'http://uri.etsi.org/Svc/Svctype/Provider/PID',
  'http://uri.etsi.org/19602/SvcType/PID/Issuance',
  'http://uri.etsi.org/19602/SvcType/PubEAA/Issuance',
  'http://uri.etsi.org/19602/SvcType/QEAA/Issuance',
  'http://uri.etsi.org/19602/SvcType/EAA/Issuance',
]);

/**
 * Wallet providers (whose Wallet and key attestations Coffer's issuers accept), in 119 612 terms
 * and as the EU's 119 602 wallet-provider list names them.
 */
export const WALLET_PROVIDER_SERVICE_TYPES: ReadonlySet<string> = new Set([
  'http://uri.etsi.org/Svc/Svctype/Provider/WalletProvider',
  'http://uri.etsi.org/19602/SvcType/WalletSolution/Issuance',
]);

/** Providers of wallet-relying party access certificates (WRPAC): the CAs of verifiers a wallet may trust. */
export const RELYING_PARTY_ACCESS_SERVICE_TYPES: ReadonlySet<string> = new Set([
  'http://uri.etsi.org/19602/SvcType/WRPAC/Issuance',
]);

const ROLE_TYPES: Record<ServiceRole, ReadonlySet<string>> = {
  issuer: ISSUER_SERVICE_TYPES,
  wallet_provider: WALLET_PROVIDER_SERVICE_TYPES,
  relying_party_access: RELYING_PARTY_ACCESS_SERVICE_TYPES,
};

const granted = (service: ListedService) =>
  service.status === undefined || GRANTED_STATUSES.has(service.status);

/** The role a listed service may vouch in now, or undefined (another type, or not granted). */
export function roleOf(service: ListedService): ServiceRole | undefined {
  if (!granted(service)) return undefined;
  return (Object.keys(ROLE_TYPES) as ServiceRole[]).find((role) => ROLE_TYPES[role].has(service.type));
}

/** Whether a listed service may vouch for credential issuers now. */
export const issuesCredentials = (service: ListedService) => roleOf(service) === 'issuer';
