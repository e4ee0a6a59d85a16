import type { Kysely } from 'kysely';
import type { Dialect } from '../db/dialect.ts';
import type { Database } from '../db/schema.ts';
import { runPeriodically } from '../periodic.ts';
import { type Audit, createAudit } from './audit-events.ts';
import { createAuditSealer, sweepAuditEvents } from './audit-sealer.ts';

/** How often the periodic sealer runs: the longest a committed row stays unsealed (docs/operations.md). */
export const SEAL_EVERY_MS = 1000;
const SWEEP_EVERY_MS = 3600_000;

/**
 * The audit trail of one server: the recorder handed to the acts, a sealer nudged after each
 * record and run every second (rows a nudge missed because their transaction had not committed),
 * and the retention sweep every hour. `stop` waits for the work under way.
 */
export function startAuditTrail(options: {
  db: Kysely<Database>;
  dialect: Dialect;
  masterKey: Uint8Array;
  retentionDays: number;
}): { audit: Audit; stop(): Promise<void> } {
  const sealer = createAuditSealer(options.db, options.dialect);
  const sealing = runPeriodically(() => sealer.seal(), SEAL_EVERY_MS);
  const sweeping = runPeriodically(
    () =>
      sweepAuditEvents(options.db, options.dialect, {
        retentionDays: options.retentionDays,
        masterKey: options.masterKey,
        now: new Date(),
      }),
    SWEEP_EVERY_MS,
  );
  return {
    audit: createAudit(sealer.nudge),
    async stop() {
      await sealing.stop();
      await sweeping.stop();
      await sealer.idle();
    },
  };
}
