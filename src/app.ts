import { createSecretKey, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import rateLimit from '@fastify/rate-limit';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { ErasureDeps } from './accounts/account-erasure.ts';
import { accountRoutes } from './accounts/account-routes.ts';
import { auditRoutes } from './audit/audit-routes.ts';
import { startAuditTrail } from './audit/audit-service.ts';
import { curveChoice } from './bbs/curve.ts';
import { fastBbs } from './bbs/index.ts';
import type { Config } from './config/config.ts';
import { loadFederationAnchors } from './config/federation-anchors.ts';
import { loadTrustAnchors } from './config/trust-anchors.ts';
import { loadTrustedLists } from './config/trusted-lists.ts';
import { loadVerifierAttestationIssuers } from './config/verifier-attestation-issuers.ts';
import { loadWalletProvider } from './config/wallet-provider.ts';
import { consoleKind } from './console/console-kind.ts';
import { consoleRoutes } from './console/console-routes.ts';
import { frontPageRoutes } from './console/front-page.ts';
import type { DeletionDeps } from './credentials/credential-deletion.ts';
import { createCredentialInserter } from './credentials/credential-repository.ts';
import { credentialRoutes } from './credentials/credential-routes.ts';
import type { RecordHistory } from './credentials/history-events.ts';
import type { DatabaseHandle } from './db/database.ts';
import { CofferError } from './errors.ts';
import { federationRoutes } from './federation/federation-routes.ts';
import { createPooledOperations } from './formats/ldp-vc/bbs-2023/crypto-pool.ts';
import { inProcessOperations } from './formats/ldp-vc/bbs-2023/operations.ts';
import { findRegisteredContext } from './formats/ldp-vc/contexts/context-repository.ts';
import { createContextRegistry } from './formats/ldp-vc/contexts/document-loader.ts';
import { createFormatRegistry } from './formats/registry.ts';
import { answerFrameworkError, registerErrorHandling, writeClientError } from './http/error-handler.ts';
import { trackInFlight } from './http/in-flight.ts';
import { registerJsonBodies } from './http/json-body.ts';
import { registerOpenApi } from './http/openapi.ts';
import { registerOperations } from './http/operations.ts';
import { createOutboundClient, type OutboundClient } from './http/outbound.ts';
import { createRateLimiter } from './http/rate-limit.ts';
import { registerRequestTracing } from './http/request-tracing.ts';
import { registerSecurityHeaders } from './http/security-headers.ts';
import { registerValidation } from './http/validation.ts';
import { createInteractionKinds } from './interaction/interaction-kinds.ts';
import { interactionRoutes } from './interaction/interaction-routes.ts';
import type { InteractionDeps } from './interaction/interaction-service.ts';
import { issuerAuthorizationCodeGrant, issuerLoginKind } from './issuer/authorization-grant.ts';
import { issuerAuthorization } from './issuer/authorization-request.ts';
import { startIssuerWorker } from './issuer/issuer-callbacks.ts';
import type { IssuerDeps } from './issuer/issuer-deps.ts';
import { createIssuerKeyCache, openIssuerKeys } from './issuer/issuer-keys.ts';
import { findIssuerRow } from './issuer/issuer-repository.ts';
import { issuerRoutes } from './issuer/issuer-routes.ts';
import { createIssuerWrites } from './issuer/issuer-writes.ts';
import { preAuthorizedGrant } from './issuer/pre-authorized-grant.ts';
import { createEmailIndex, createEmailIndexes } from './keys/blind-index.ts';
import { deriveKey } from './keys/derive-key.ts';
import { createFieldCipher } from './keys/field-cipher.ts';
import { fixedKeyRing, type MasterKeyRing } from './keys/master-key-ring.ts';
import { hashSecret } from './keys/secrets.ts';
import { createKeyRing } from './keys/signing-keys.ts';
import { isTerminal, logFormatOf, prettyLogStream } from './log-format.ts';
import { createMailer, type Mailer, outboxDir } from './mail/mailer.ts';
import { startDeferredPoller } from './oid4vci/deferred-issuances.ts';
import { issuanceKind } from './oid4vci/issuance-kind.ts';
import type { IssuanceDeps } from './oid4vci/issuance-service.ts';
import { notifyDeletion } from './oid4vci/notifications.ts';
import { oid4vciRoutes } from './oid4vci/oid4vci-routes.ts';
import { SELF_ISSUED_AUDIENCE } from './oid4vp/authorization-request.ts';
import { consentKind } from './oid4vp/consent-kind.ts';
import { oid4vpRoutes } from './oid4vp/oid4vp-routes.ts';
import type { PresentationDeps } from './oid4vp/presentation-service.ts';
import { registeredVerifier } from './oid4vp/verifier-registry.ts';
import type { AuthorizationExtension } from './oidc/authorization-extensions.ts';
import { createCodeConsumer } from './oidc/code-repository.ts';
import type { DpopDeps } from './oidc/dpop.ts';
import { createProofRecorder } from './oidc/dpop-repository.ts';
import { startExpiredRowSweeper } from './oidc/expired-rows.ts';
import { loginKind } from './oidc/login-kind.ts';
import { logoutKind } from './oidc/logout-kind.ts';
import { oidcRoutes } from './oidc/oidc-routes.ts';
import { createRefreshTokenRotator } from './oidc/refresh-tokens.ts';
import type { TokenDeps } from './oidc/token-service.ts';
import { optionsRoutes } from './options/options-routes.ts';
import { createStatusChecker } from './status/status-checker.ts';
import { createEncryptedStore, type EncryptedStore } from './storage/index.ts';
import { createSecretMasker } from './subclients/secret-mask.ts';
import { subClientRoutes } from './subclients/subclient-routes.ts';
import { createServiceMetrics } from './telemetry/metrics.ts';
import {
  createFederationResolver,
  outboundStatementFetcher,
} from './trust/federation/federation-resolver.ts';
import { federationIssuerTrust } from './trust/federation/issuer-trust.ts';
import {
  createTrustedListResolver,
  listedAnchors,
  outboundListFetcher,
  trustedListIssuerTrust,
} from './trust/trusted-lists/trusted-list-resolver.ts';
import { createUserInserter, findUserById } from './users/user-repository.ts';
import { userRoutes } from './users/user-routes.ts';
import { profileContext } from './users/user-service.ts';
import { requestIdOfResponseUri, VP_FORMATS_SUPPORTED } from './verifier/request-object.ts';
import { startVerifierWorker } from './verifier/verifier-callbacks.ts';
import type { VerifierDeps } from './verifier/verifier-deps.ts';
import { createVerifierWriters, linkRequestToAccounts } from './verifier/verifier-repository.ts';
import { verifierRoutes } from './verifier/verifier-routes.ts';
import { walletLoginMethod } from './verifier/wallet-login.ts';
import { recordHistory } from './wallet/wallet-history.ts';
import { walletKind } from './wallet/wallet-kind.ts';
import { walletRoutes } from './wallet/wallet-routes.ts';

declare module 'fastify' {
  interface FastifyInstance {
    inFlight: ReturnType<typeof trackInFlight>;
  }
}

export interface AppContext {
  config: Config;
  database: DatabaseHandle;
  masterKey: Uint8Array;
  /**
   * The keys read with (keys/master-key-ring.ts); its current key must be `masterKey`. When absent,
   * a ring of `masterKey` alone.
   */
  masterKeyRing?: MasterKeyRing;
  /**
   * Encrypted content-addressed storage of personal data (profiles, credentials). server.ts passes
   * it; when absent (tests, tools) it is made from the configuration and master key.
   */
  store?: EncryptedStore;
  /** How e-mail leaves; from SMTP_URL (or the outbox) when absent. */
  mailer?: Mailer;
  /**
   * Runs before any route is registered, so its hooks see every request. Only the benchmark
   * harness uses it, to speak the reference harness's client names (bench/anchor-target.ts).
   */
  beforeRoutes?: (app: FastifyInstance) => void;
  /** Fastify's URL rewrite, for the same harness. */
  rewriteUrl?: (url: string) => string;
  /** Where logs go; standard output when absent. */
  logStream?: NodeJS.WritableStream;
  /** How the wallet reaches verifiers; made from the configuration when absent (tests pass their CA). */
  outbound?: OutboundClient;
  /** The credential issuer's clock (offers, c_nonces, key proofs, issuance tokens); the system clock when absent. Tests move it. */
  issuerClock?: () => Date;
}

/** Where logs must never show a secret, whatever a later log call includes. */
const REDACT = [
  'req.headers["x-api-token"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.client_secret',
  '*.api_token',
  '*.access_token',
  '*.id_token',
  '*.password',
];

/** pino's options; in the pretty format its JSON lines (redacted) pass through prettyLogStream. */
export function loggerOptions(
  config: Config,
  stream?: NodeJS.WritableStream,
): FastifyServerOptions['logger'] {
  const destination = stream ?? process.stdout;
  const pretty = logFormatOf(config, destination) === 'pretty';
  const colours = isTerminal(destination) && !process.env['NO_COLOR'];
  return {
    level: config.logLevel,
    redact: { paths: REDACT, censor: '[redacted]' },
    ...(pretty ? { stream: prettyLogStream(destination, { colours }) } : stream ? { stream } : {}),
  };
}

export async function buildApp(context: AppContext): Promise<FastifyInstance> {
  const { config, database } = context;
  // Writes use the current key; reads take any key of the ring (docs/operations.md, rotation).
  const ring = context.masterKeyRing ?? fixedKeyRing(context.masterKey);
  if (Buffer.compare(ring.current, context.masterKey) !== 0)
    throw new TypeError('the ring must write with masterKey');
  const app = Fastify({
    logger: loggerOptions(config, context.logStream),
    bodyLimit: config.bodyLimit,
    genReqId: () => randomUUID(),
    trustProxy: false,
    // Reject bodies that try to poison prototypes instead of silently dropping keys.
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    clientErrorHandler: writeClientError,
    frameworkErrors: answerFrameworkError,
    ...(context.rewriteUrl
      ? { rewriteUrl: (request: IncomingMessage) => context.rewriteUrl!(request.url ?? '/') }
      : {}),
  }).withTypeProvider<TypeBoxTypeProvider>();
  registerRequestTracing(app);
  context.beforeRoutes?.(app);

  app.decorate('inFlight', trackInFlight(app));
  app.decorateRequest('apiCaller', null);
  app.decorateRequest('bearer', null);
  // Only JSON bodies: fastify's default text/plain parser would let non-JSON reach handlers.
  app.removeContentTypeParser('text/plain');
  registerJsonBodies(app);
  registerValidation(app);
  registerErrorHandling(app);
  registerSecurityHeaders(app, config.environment === 'production');

  if (config.apiRateLimit > 0) {
    await app.register(rateLimit, {
      max: config.apiRateLimit,
      timeWindow: 60_000,
      // Per API token (hashed, so no token sits in the limiter's memory), else per address.
      keyGenerator: (request) => {
        const token = request.headers['x-api-token'] ?? request.headers.authorization;
        return typeof token === 'string' ? hashSecret(token) : request.ip;
      },
      allowList: (request) =>
        request.url === '/healthz' || request.url === '/readyz' || request.url === '/metrics',
      errorResponseBuilder: (_request, context) =>
        new CofferError(
          'rate_limited',
          `Too many requests; retry in ${Math.ceil(context.ttl / 1000)} seconds.`,
          {
            headers: { 'retry-after': String(Math.ceil(context.ttl / 1000)) },
          },
        ),
    });
  }

  await registerOpenApi(app, config.publicUrl);
  const store =
    context.store ??
    createEncryptedStore({
      backend: config.storage,
      dataDir: config.dataDir,
      kuboApiUrl: config.kuboApiUrl,
      masterKey: ring,
      cacheBytes: config.blockCacheBytes,
    });
  const metrics = createServiceMetrics();
  registerOperations(
    app,
    [
      { name: 'database', check: database.ping },
      { name: 'storage', check: store.check },
    ],
    { bbsBackend: curveChoice.name },
    metrics.registry,
  );

  // AUDIT_TRAIL=off (benchmarks only, never production): acts record nothing, and nothing seals.
  const auditTrail = config.auditTrail
    ? startAuditTrail({
        db: database.db,
        dialect: database.dialect,
        masterKey: context.masterKey,
        retentionDays: config.auditRetentionDays,
      })
    : { audit: { record: async () => {} }, stop: async () => {} };
  const audit = auditTrail.audit;
  const cipher = createFieldCipher(ring);
  const users = {
    db: database.db,
    store,
    cipher,
    emailIndex: createEmailIndex(context.masterKey),
    emailIndexes: createEmailIndexes(ring),
    insertUser: createUserInserter(database.db, database.dialect, audit),
  };
  await app.register(auditRoutes, { db: database.db });
  await app.register(subClientRoutes, { db: database.db, mask: createSecretMasker(cipher), audit });
  await app.register(userRoutes, users);
  await app.register(optionsRoutes);

  // Keys stay published for as long as the tokens they signed live.
  const keys = createKeyRing(database.db, cipher, { retireAfterSeconds: config.accessTokenTtl });
  const limiter = createRateLimiter(database.db);
  const interactions: InteractionDeps = {
    metrics,
    audit,
    db: database.db,
    kinds: createInteractionKinds(),
    extraLoginMethods: [],
    cipher,
    users,
    limiter,
    config,
    oneTimeCodeKey: deriveKey(context.masterKey, 'one-time-code/v1'),
    mailer:
      context.mailer ??
      createMailer({ smtpUrl: config.smtpUrl, outboxDir: outboxDir(config.dataDir), log: app.log }),
    ...(config.recaptchaVerifyUrl ? { recaptchaVerifyUrl: config.recaptchaVerifyUrl } : {}),
    ...(config.smtpUrl ? {} : { logCodesAt: app.log }),
  };
  const dpop: DpopDeps = {
    nonceKey: deriveKey(context.masterKey, 'dpop-nonce/v1'),
    recordProof: createProofRecorder(database.db, database.dialect),
  };
  const tokens: TokenDeps = {
    db: database.db,
    consumeCode: createCodeConsumer(database.db, database.dialect),
    rotateRefreshToken: createRefreshTokenRotator(database.db, database.dialect),
    keys,
    cipher,
    limiter,
    dpop,
    issuer: config.publicUrl,
    accessTokenTtl: config.accessTokenTtl,
    refreshTokenTtl: config.refreshTokenTtl,
    grantExtensions: [],
  };
  startExpiredRowSweeper(app, database.db, config.accessTokenTtl);
  const authorizationExtensions: AuthorizationExtension[] = [];
  await app.register(oidcRoutes, { interactions, tokens, store, authorizationExtensions });

  const contexts = createContextRegistry(async (url) => {
    const registered = await findRegisteredContext(database.db, url);
    return registered ? (JSON.parse(registered.document) as object) : undefined;
  });
  const bbs2023 = { bbs: fastBbs, jsonLd: { documentLoader: contexts.documentLoader } };
  const pool =
    config.cryptoThreads > 0
      ? createPooledOperations({ threads: config.cryptoThreads, contexts })
      : undefined;
  // Requests still running at shutdown may be waiting on the database or a crypto thread: they
  // finish before the pool closes, and before the caller closes the database.
  app.addHook('onClose', async () => {
    await app.inFlight.drain(10_000);
    await pool?.close();
  });
  const operations = pool ?? inProcessOperations(bbs2023);
  const formats = createFormatRegistry({ operations, jsonLd: bbs2023.jsonLd });
  const issuerTrustAnchors = await loadTrustAnchors(config.issuerTrustAnchors, 'ISSUER_TRUST_ANCHORS');
  const credentialContentKey = deriveKey(context.masterKey, 'credential-content/v1');
  const previousContentKeys = ring.keys.slice(1).map((key) => deriveKey(key, 'credential-content/v1'));
  const outbound =
    context.outbound ?? createOutboundClient({ allowPrivateTargets: config.allowPrivateTargets });
  const federationAnchors = await loadFederationAnchors(config.federationTrustAnchors);
  // One resolver (and its cache of chains) for every surface that trusts through a federation.
  const federation = federationAnchors.length
    ? createFederationResolver({
        anchors: federationAnchors,
        fetchStatement: outboundStatementFetcher(outbound),
        now: () => new Date(),
      })
    : undefined;
  const trustedListSources = await loadTrustedLists(config.trustedLists);
  // One reader (and its cache of verified lists) for the verifier and the wallet.
  const trustedLists = trustedListSources.length
    ? createTrustedListResolver({
        sources: trustedListSources,
        fetchList: outboundListFetcher(outbound),
        now: () => new Date(),
        onRejected: (url, error) => {
          app.log.warn({ url, code: error.code, reason: error.message }, 'trusted list not used');
          metrics.trustedListRejected(error.code);
        },
      })
    : undefined;
  const deletion: DeletionDeps = {
    audit,
    db: database.db,
    store,
    log: app.log,
    notifyIssuer: notifyDeletion({
      outbound,
      cipher,
      config: { clientId: config.oid4vciClientId },
      log: app.log,
    }),
  };
  const erasure: ErasureDeps = {
    ...deletion,
    dialect: database.dialect,
    offerEvents: {
      keys,
      config: { publicUrl: config.publicUrl, allowPrivateTargets: config.allowPrivateTargets },
      now: context.issuerClock ?? (() => new Date()),
    },
  };
  await app.register(accountRoutes, erasure);
  // The wallet history is written by the store, OpenID4VCI and OpenID4VP, and read by the wallet page.
  const recordWalletHistory: RecordHistory = (entries) => recordHistory({ db: database.db, cipher }, entries);
  const status = createStatusChecker({
    outbound,
    now: () => new Date(),
    verifyBaseProof: (document, key) => operations.verifyBaseProof(document, key),
  });
  await app.register(credentialRoutes, {
    deletion,
    credentials: {
      db: database.db,
      store,
      contentKey: credentialContentKey,
      previousContentKeys,
      operations,
      insertCredential: createCredentialInserter(database.db, database.dialect, (db, entries) =>
        recordHistory({ db, cipher }, entries),
      ),
      formats,
      issuerTrustAnchors,
    },
    bearer: { db: database.db, keys, issuer: config.publicUrl, dpop },
  });

  const presentations: PresentationDeps = {
    audit,
    status,
    recordHistory: recordWalletHistory,
    delivered: async (target, userIds) => {
      const requestId = requestIdOfResponseUri(config.publicUrl, target);
      if (requestId) await linkRequestToAccounts(database.db, requestId, userIds);
    },
    db: database.db,
    store,
    cipher,
    formats,
    issuerTrustAnchors,
    outbound,
    interactions,
    requests: {
      findVerifier: (clientId) => registeredVerifier(database.db, clientId),
      outbound,
      allowPrivateTargets: config.allowPrivateTargets,
      trustAnchors: await loadTrustAnchors(config.verifierTrustAnchors, 'VERIFIER_TRUST_ANCHORS'),
      attestationIssuers: await loadVerifierAttestationIssuers(config.verifierAttestationIssuers),
      transactionDataTypes: config.transactionDataTypes,
      walletAudiences: [SELF_ISSUED_AUDIENCE, config.publicUrl],
      ...(federation ? { federation } : {}),
      ...(trustedLists ? { trustedLists } : {}),
      now: () => new Date(),
    },
  };
  const issuance: IssuanceDeps = {
    db: database.db,
    recordHistory: recordWalletHistory,
    store,
    cipher,
    formats,
    contentKey: credentialContentKey,
    issuerTrustAnchors,
    outbound,
    interactions,
    config: {
      publicUrl: config.publicUrl,
      clientId: config.oid4vciClientId,
      deferredTimeoutSeconds: config.deferredIssuanceTimeout,
    },
    walletProvider: await loadWalletProvider(
      config.walletProviderKey,
      config.walletProviderChain,
      new Date(),
    ),
    log: app.log,
    now: () => new Date(),
  };
  // Every person-facing flow is a kind of interaction; the core routes carry requests to them.
  interactions.kinds.register(loginKind(interactions));
  interactions.kinds.register(logoutKind(interactions));
  interactions.kinds.register(consentKind(presentations));
  interactions.kinds.register(issuanceKind(issuance));
  interactions.kinds.register(walletKind(interactions));
  interactions.kinds.register(consoleKind({ ...interactions, audit }));
  await app.register(interactionRoutes, interactions);
  await app.register(oid4vpRoutes, presentations);
  await app.register(oid4vciRoutes, issuance);
  await app.register(walletRoutes, {
    wallet: { ...deletion, cipher, formats, issuerTrustAnchors, status, now: () => new Date() },
    erasure,
    interactions,
    pageTokenKey: deriveKey(context.masterKey, 'wallet-page-token/v1'),
  });
  // The front page and the tenants' administrators' console, acting through the same services.
  await app.register(frontPageRoutes, { publicUrl: config.publicUrl });
  // Coffer as a verifier for its tenants: requests, wallet-facing endpoints, results, the page.
  const verifier: VerifierDeps = {
    metrics,
    db: database.db,
    writes: createVerifierWriters(database.db, database.dialect, audit),
    cipher,
    formats,
    status,
    outbound,
    keys,
    issuerTrustAnchors,
    ...(federation ? { federationTrust: federationIssuerTrust(federation) } : {}),
    ...(trustedLists ? { trustedListTrust: trustedListIssuerTrust(trustedLists) } : {}),
    config: {
      publicUrl: config.publicUrl,
      resultRetention: config.resultRetention,
      allowPrivateTargets: config.allowPrivateTargets,
    },
    now: () => new Date(),
    log: app.log,
  };
  await app.register(verifierRoutes, verifier);
  // Logging in with a wallet: the verifier provides the log-in page's third method.
  interactions.extraLoginMethods.push(walletLoginMethod(verifier, interactions));
  const verifierWorker = startVerifierWorker(verifier);
  app.addHook('onClose', () => auditTrail.stop());
  app.addHook('onClose', async () => {
    await verifierWorker.stop();
  });
  // The seed of each issuer's request encryption key (issuer/message-encryption.ts).
  const issuerRequestEncryption = deriveKey(context.masterKey, 'issuer-request-encryption/v1');
  // Coffer as a credential issuer for its tenants: the API, the wallet-facing endpoints, status lists.
  const issuer: IssuerDeps = {
    metrics,
    audit,
    db: database.db,
    writes: createIssuerWrites(database.db, database.dialect),
    cipher,
    keys,
    dpop,
    bbs2023,
    profileOf: async (userId) => {
      const user = await findUserById(database.db, userId);
      if (!user) return {};
      return (await store.getEncrypted(user.profile_cid, profileContext(user.did))) as Record<
        string,
        unknown
      >;
    },
    outbound,
    walletProviderTrustAnchors: await loadTrustAnchors(
      config.walletProviderTrustAnchors,
      'WALLET_PROVIDER_TRUST_ANCHORS',
    ),
    ...(trustedLists ? { listedWalletProviders: listedAnchors(trustedLists, 'wallet_provider') } : {}),
    secrets: {
      preAuthorizedCode: createSecretKey(deriveKey(context.masterKey, 'issuer-pre-authorized-code/v1')),
      // Offers live for days: one made before a master-key change still shows its own code.
      previousPreAuthorizedCodes: ring.keys
        .slice(1)
        .map((key) => createSecretKey(deriveKey(key, 'issuer-pre-authorized-code/v1'))),
      cNonce: createSecretKey(deriveKey(context.masterKey, 'issuer-c-nonce/v1')),
    },
    issuerKeys: createIssuerKeyCache(
      (clientId) => findIssuerRow(database.db, clientId),
      (row) => openIssuerKeys(cipher, config.publicUrl, row, issuerRequestEncryption),
    ),
    config: { publicUrl: config.publicUrl, allowPrivateTargets: config.allowPrivateTargets },
    now: context.issuerClock ?? (() => new Date()),
    log: app.log,
  };
  await app.register(issuerRoutes, issuer);
  // The console (every area, one scope) acts through the verifier's and the issuer's services, so
  // it comes once they exist.
  await app.register(consoleRoutes, {
    interactions,
    pageTokenKey: deriveKey(context.masterKey, 'console-page-token/v1'),
    subClients: { db: database.db, mask: createSecretMasker(cipher), audit },
    users,
    erasure,
    issuer,
    verifier,
  });
  await app.register(federationRoutes, {
    db: database.db,
    cipher,
    publicUrl: config.publicUrl,
    now: () => new Date(),
    vpFormatsSupported: VP_FORMATS_SUPPORTED,
    anchors: federationAnchors,
    fetchStatement: outboundStatementFetcher(outbound),
  });
  tokens.grantExtensions.push(preAuthorizedGrant(issuer), issuerAuthorizationCodeGrant(issuer));
  authorizationExtensions.push(issuerAuthorization(issuer, interactions));
  interactions.kinds.register(issuerLoginKind(issuer, interactions));
  const issuerWorker = startIssuerWorker(issuer);
  app.addHook('onClose', async () => {
    await issuerWorker.stop();
  });
  // Deferred issuances are polled from the database, so a restart picks up where it stopped.
  const poller = startDeferredPoller(issuance);
  app.addHook('onClose', async () => {
    await poller.stop();
  });

  return app;
}
