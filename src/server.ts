import { buildApp } from './app.ts';
import { curveChoice } from './bbs/curve.ts';
import { ConfigError, readConfig } from './config/config.ts';
import { loadMasterKeyRing } from './config/master-key.ts';
import { tracesProtocol } from './config/traces-protocol.ts';
import { openDatabase } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { startTracing } from './telemetry/tracing.ts';

async function main(): Promise<void> {
  const config = readConfig(process.env);
  // Before the database opens: its statement spans are set up when it is.
  const tracing = await startTracing(process.env, tracesProtocol);
  const masterKey = await loadMasterKeyRing(config);
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await migrateToLatest(database.db, database.dialect);
  const app = await buildApp({
    config,
    database,
    masterKey: masterKey.ring.current,
    masterKeyRing: masterKey.ring,
  });
  if (masterKey.generated) {
    app.log.warn(
      { file: masterKey.file },
      'MASTER_KEY is not set: generated a new master key into DATA_DIR. Back it up; without it encrypted data is lost. Set MASTER_KEY in production.',
    );
  }
  app.log.info(
    { bbsBackend: curveChoice.name, reason: curveChoice.reason },
    curveChoice.name === 'native'
      ? 'BBS runs on the native backend (blst)'
      : 'BBS runs on the WebAssembly backend (mcl-wasm)',
  );
  if (tracing)
    app.log.info(
      { protocol: tracing.protocol },
      'traces are exported with OTLP (OTEL_EXPORTER_OTLP_ENDPOINT)',
    );
  if (config.environment === 'development')
    app.log.info('running in development mode (NODE_ENV=production for production)');

  const shutdown = async (signal: string) => {
    app.log.info({ signal }, 'shutting down');
    await app.close();
    await database.close();
    // An unreachable collector loses the last spans, not the clean exit a supervisor waits for.
    await tracing?.shutdown().catch((error: unknown) => {
      console.error(
        `coffer: the last spans were not sent: ${error instanceof Error ? error.message : error}`,
      );
    });
    process.exit(0);
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);

  await app.listen({ port: config.port, host: config.host });
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(`coffer: configuration error: ${error.message}`);
  } else {
    console.error('coffer: failed to start:', error);
  }
  process.exit(1);
});
