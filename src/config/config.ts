import { availableParallelism } from 'node:os';
import path from 'node:path';

/** Raised when an environment variable is missing or malformed; the message names the variable. */
export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

export type Environment = 'development' | 'production';
export type StorageBackend = 'fs' | 'kubo';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export type LogFormat = 'json' | 'pretty';

export interface Config {
  environment: Environment;
  port: number;
  host: string;
  /** Issuer and base address, without a trailing slash. */
  publicUrl: string;
  dataDir: string;
  databaseUrl: string | undefined;
  storage: StorageBackend;
  kuboApiUrl: string | undefined;
  /** Base64 of 32 bytes, when given in the environment; otherwise it is generated into DATA_DIR (development only). */
  masterKey: string | undefined;
  /** MASTER_KEY_PREVIOUS: keys accepted for reading only, while a rotation moves data off them. */
  masterKeyPrevious: string[];
  smtpUrl: string | undefined;
  /** Google's siteverify unless set (tests point it at a stand-in). */
  recaptchaVerifyUrl: string | undefined;
  accessTokenTtl: number;
  /** Absolute lifetime of a refresh-token family, from the log-in (rotation never extends it). */
  refreshTokenTtl: number;
  allowPrivateTargets: boolean;
  /** PEM file of CA certificates that x509 verifiers may chain to (else they are shown as unverified). */
  verifierTrustAnchors: string | undefined;
  /** PEM file of CA certificates that credential issuers' certificates are marked trusted by. */
  issuerTrustAnchors: string | undefined;
  /** WALLET_PROVIDER_TRUST_ANCHORS: PEM CA certificates of the wallet providers whose Wallet and key attestations Coffer's issuers accept. */
  walletProviderTrustAnchors: string | undefined;
  /** JWKS file of the issuers whose Verifier Attestation JWTs identify verifiers. */
  verifierAttestationIssuers: string | undefined;
  /** FEDERATION_TRUST_ANCHORS: JSON file of OpenID Federation trust anchors and their keys (docs/trust.md). */
  federationTrustAnchors: string | undefined;
  /** TRUSTED_LISTS: JSON file of ETSI trusted lists and their signer certificates (docs/trust.md). */
  trustedLists: string | undefined;
  /** Transaction data types (OpenID4VP §5.1) the person may be asked to confirm; none by default. */
  transactionDataTypes: string[];
  logLevel: LogLevel;
  /** LOG_FORMAT; when unset, pretty for development on a terminal and JSON otherwise (src/log-format.ts). */
  logFormat: LogFormat | undefined;
  bodyLimit: number;
  /** Requests per minute per API token (or per address when none is sent); 0 turns the limit off. */
  apiRateLimit: number;
  /** Worker threads for bbs-2023 verification and derivation; 0 runs them on the main thread. */
  cryptoThreads: number;
  /** Log-in attempts per minute from one address; 0 turns this limit off (the per-log-in limits stay). */
  loginRateLimit: number;
  /** Bytes of decrypted block values kept in memory; 0 keeps none. */
  blockCacheBytes: number;
  /** The wallet's client_id at credential issuers' authorization servers (OpenID4VCI). */
  oid4vciClientId: string;
  /** Seconds a deferred issuance is polled before the wallet gives up on it. */
  deferredIssuanceTimeout: number;
  /**
   * PEM files of the key and certificate chain that sign Coffer's Wallet Attestations and key
   * attestations (OpenID4VCI Annexes D and E); both or neither.
   */
  walletProviderKey: string | undefined;
  walletProviderChain: string | undefined;
  /** Seconds a verifier result's claims are kept after the tenant first reads them (RESULT_RETENTION). */
  resultRetention: number;
  /** Days audit events are kept before the sweep truncates the chain at a signed checkpoint (AUDIT_RETENTION_DAYS). */
  auditRetentionDays: number;
  /**
   * AUDIT_TRAIL=off records nothing: only for `npm run bench -- --only=telemetry` to measure what
   * the trail costs, and refused in production.
   */
  auditTrail: boolean;
}

/** TRANSACTION_DATA_TYPES: comma-separated type identifiers (URIs or collision-resistant names). */
function readTransactionDataTypes(env: NodeJS.ProcessEnv): string[] {
  const raw = env['TRANSACTION_DATA_TYPES'];
  if (!raw) return [];
  const types = raw
    .split(',')
    .map((type) => type.trim())
    .filter((type) => type.length > 0);
  const bad = types.find((type) => type.length > 256 || /[\s"<>]/.test(type));
  if (bad !== undefined) {
    throw new ConfigError(
      'TRANSACTION_DATA_TYPES',
      `"${bad.slice(0, 60)}" is not a transaction data type identifier`,
    );
  }
  return [...new Set(types)];
}

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function readInteger(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function readBoolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function readUrl(env: NodeJS.ProcessEnv, name: string, protocols: readonly string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be an absolute URL, got "${raw}"`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${url.protocol}"`);
  }
  return raw;
}

function readMasterKey(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env['MASTER_KEY'];
  if (raw === undefined || raw === '') return undefined;
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(raw) || Buffer.from(raw, 'base64').length !== 32) {
    throw new ConfigError(
      'MASTER_KEY',
      'must be 32 bytes encoded in base64 (e.g. `openssl rand -base64 32`)',
    );
  }
  return raw;
}

function readPreviousMasterKeys(env: NodeJS.ProcessEnv): string[] {
  const raw = env['MASTER_KEY_PREVIOUS'];
  if (raw === undefined || raw.trim() === '') return [];
  const keys = raw.split(',').map((key) => key.trim());
  for (const key of keys) {
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(key) || Buffer.from(key, 'base64').length !== 32) {
      throw new ConfigError(
        'MASTER_KEY_PREVIOUS',
        'must be keys of 32 bytes in base64, separated by commas (the keys a rotation moves data off)',
      );
    }
  }
  return keys;
}

/**
 * Reads and validates the configuration from the environment. Pure: no file is touched here,
 * so it can be tested with a plain object.
 */
export function readConfig(env: NodeJS.ProcessEnv): Config {
  const nodeEnv = env['NODE_ENV'] ?? 'development';
  if (!['development', 'production', 'test'].includes(nodeEnv)) {
    throw new ConfigError('NODE_ENV', `must be development, production or test, got "${nodeEnv}"`);
  }
  const environment: Environment = nodeEnv === 'production' ? 'production' : 'development';
  const port = readInteger(env, 'PORT', 8080, 0, 65535);
  const host = env['HOST'] || '127.0.0.1';
  const publicUrlRaw = readUrl(env, 'PUBLIC_URL', ['http:', 'https:']) ?? `http://localhost:${port}`;
  const publicUrl = publicUrlRaw.replace(/\/+$/, '');
  const dataDir = path.resolve(env['DATA_DIR'] || './data');
  const databaseUrl = readUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const storage = (env['STORAGE'] || 'fs') as StorageBackend;
  if (storage !== 'fs' && storage !== 'kubo')
    throw new ConfigError('STORAGE', `must be fs or kubo, got "${storage}"`);
  const kuboApiUrl = readUrl(env, 'KUBO_API_URL', ['http:', 'https:']);
  if (storage === 'kubo' && !kuboApiUrl)
    throw new ConfigError('KUBO_API_URL', 'is required when STORAGE=kubo');
  const masterKey = readMasterKey(env);
  const masterKeyPrevious = readPreviousMasterKeys(env);
  const smtpUrl = readUrl(env, 'SMTP_URL', ['smtp:', 'smtps:']);
  const recaptchaVerifyUrl = readUrl(env, 'RECAPTCHA_VERIFY_URL', ['https:', 'http:']);
  const accessTokenTtl = readInteger(env, 'ACCESS_TOKEN_TTL', 3600, 60, 86400);
  const refreshTokenTtl = readInteger(env, 'REFRESH_TOKEN_TTL', 30 * 86400, 60, 366 * 86400);
  const allowPrivateTargets = readBoolean(env, 'ALLOW_PRIVATE_TARGETS', false);
  const verifierTrustAnchors = env['VERIFIER_TRUST_ANCHORS']
    ? path.resolve(env['VERIFIER_TRUST_ANCHORS'])
    : undefined;
  const walletProviderTrustAnchors = env['WALLET_PROVIDER_TRUST_ANCHORS']
    ? path.resolve(env['WALLET_PROVIDER_TRUST_ANCHORS'])
    : undefined;
  const issuerTrustAnchors = env['ISSUER_TRUST_ANCHORS']
    ? path.resolve(env['ISSUER_TRUST_ANCHORS'])
    : undefined;
  const verifierAttestationIssuers = env['VERIFIER_ATTESTATION_ISSUERS']
    ? path.resolve(env['VERIFIER_ATTESTATION_ISSUERS'])
    : undefined;
  const federationTrustAnchors = env['FEDERATION_TRUST_ANCHORS']
    ? path.resolve(env['FEDERATION_TRUST_ANCHORS'])
    : undefined;
  const trustedLists = env['TRUSTED_LISTS'] ? path.resolve(env['TRUSTED_LISTS']) : undefined;
  const transactionDataTypes = readTransactionDataTypes(env);
  const logLevel = (env['LOG_LEVEL'] || 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const logFormat = (env['LOG_FORMAT'] || undefined) as LogFormat | undefined;
  if (logFormat !== undefined && logFormat !== 'json' && logFormat !== 'pretty') {
    throw new ConfigError('LOG_FORMAT', `must be json or pretty, got "${logFormat}"`);
  }
  const bodyLimit = readInteger(env, 'BODY_LIMIT', 256 * 1024, 1024, 16 * 1024 * 1024);
  const apiRateLimit = readInteger(env, 'API_RATE_LIMIT', 6000, 0, 100_000_000);
  const cryptoThreads = readInteger(env, 'CRYPTO_THREADS', Math.min(availableParallelism(), 64), 0, 64);
  const loginRateLimit = readInteger(env, 'LOGIN_RATE_LIMIT', 30, 0, 1_000_000);
  const blockCacheBytes = readInteger(env, 'BLOCK_CACHE_MB', 64, 0, 65_536) * 1024 * 1024;
  const oid4vciClientId = env['OID4VCI_CLIENT_ID'] || publicUrl;
  if (oid4vciClientId.length > 512)
    throw new ConfigError('OID4VCI_CLIENT_ID', 'must be at most 512 characters');
  const deferredIssuanceTimeout = readInteger(
    env,
    'DEFERRED_ISSUANCE_TIMEOUT',
    24 * 3600,
    10,
    30 * 24 * 3600,
  );
  const resultRetention = readInteger(env, 'RESULT_RETENTION', 600, 0, 30 * 24 * 3600);
  const auditRetentionDays = readInteger(env, 'AUDIT_RETENTION_DAYS', 400, 1, 100 * 366);
  const auditTrailSetting = env['AUDIT_TRAIL'] ?? 'on';
  if (!['on', 'off'].includes(auditTrailSetting))
    throw new ConfigError('AUDIT_TRAIL', `must be on or off, got "${auditTrailSetting.slice(0, 20)}"`);
  const walletProviderKey = env['WALLET_PROVIDER_KEY'] ? path.resolve(env['WALLET_PROVIDER_KEY']) : undefined;
  const walletProviderChain = env['WALLET_PROVIDER_CHAIN']
    ? path.resolve(env['WALLET_PROVIDER_CHAIN'])
    : undefined;
  if ((walletProviderKey === undefined) !== (walletProviderChain === undefined)) {
    throw new ConfigError(
      walletProviderKey ? 'WALLET_PROVIDER_CHAIN' : 'WALLET_PROVIDER_KEY',
      'is required with the other: the key signs, and the chain names it (`coffer wallet-provider create` makes both for development)',
    );
  }

  if (environment === 'production') {
    if (!masterKey) throw new ConfigError('MASTER_KEY', 'is required in production (NODE_ENV=production)');
    if (new URL(publicUrl).protocol !== 'https:') {
      throw new ConfigError('PUBLIC_URL', 'must be an https: address in production (NODE_ENV=production)');
    }
    if (allowPrivateTargets) {
      throw new ConfigError('ALLOW_PRIVATE_TARGETS', 'must not be true in production (NODE_ENV=production)');
    }
    if (auditTrailSetting === 'off') {
      throw new ConfigError('AUDIT_TRAIL', 'must not be off in production: it exists to measure the trail');
    }
  }

  return {
    environment,
    port,
    host,
    publicUrl,
    dataDir,
    databaseUrl,
    storage,
    kuboApiUrl,
    masterKey,
    masterKeyPrevious,
    smtpUrl,
    recaptchaVerifyUrl,
    accessTokenTtl,
    refreshTokenTtl,
    allowPrivateTargets,
    verifierTrustAnchors,
    issuerTrustAnchors,
    federationTrustAnchors,
    trustedLists,
    walletProviderTrustAnchors,
    verifierAttestationIssuers,
    transactionDataTypes,
    logLevel,
    logFormat,
    bodyLimit,
    apiRateLimit,
    cryptoThreads,
    loginRateLimit,
    blockCacheBytes,
    oid4vciClientId,
    deferredIssuanceTimeout,
    walletProviderKey,
    walletProviderChain,
    resultRetention,
    auditRetentionDays,
    auditTrail: auditTrailSetting === 'on',
  };
}
