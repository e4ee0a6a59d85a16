import { Counter, Registry } from 'prom-client';

/**
 * What each tenant's traffic does, for /metrics (docs/operations.md, "Metrics"). Labels are a
 * tenant's client id and bounded names (formats, outcomes, check names, log-in methods) — never a
 * person, an address, a claim or anything a caller typed.
 */
export interface ServiceMetrics {
  registry: Registry;
  /** Credentials issued (one per copy), deferred or refused by a tenant's issuer. */
  issuance(tenant: number, format: string, outcome: 'issued' | 'deferred' | 'refused', count?: number): void;
  /** A wallet's answer to a tenant's verifier request, per presented credential. */
  verification(tenant: number, format: string, outcome: string, failingCheck: string): void;
  /** A log-in finished or refused; `tenant` is the interaction's client, or none for the wallet page. */
  login(tenant: number | null, method: string, outcome: 'success' | 'failure'): void;
  /** A trusted list fetched but not used (signature, expiry, schema), by its TrustError code. */
  trustedListRejected(code: string): void;
}

export function createServiceMetrics(registry = new Registry()): ServiceMetrics {
  const issuances = new Counter({
    name: 'coffer_issuances_total',
    help: 'Credentials issued (per copy), deferred or refused, by tenant, format and outcome',
    labelNames: ['tenant', 'format', 'outcome'],
    registers: [registry],
  });
  const verifications = new Counter({
    name: 'coffer_verifications_total',
    help: 'Presented credentials verified or rejected, by tenant, format, outcome and first failing check',
    labelNames: ['tenant', 'format', 'outcome', 'failing_check'],
    registers: [registry],
  });
  const logins = new Counter({
    name: 'coffer_logins_total',
    help: 'Log-ins by tenant, method and outcome',
    labelNames: ['tenant', 'method', 'outcome'],
    registers: [registry],
  });
  const listRejections = new Counter({
    name: 'coffer_trusted_list_rejections_total',
    help: 'Trusted lists fetched but not used (signature, expiry, schema), by reason',
    labelNames: ['code'],
    registers: [registry],
  });
  return {
    registry,
    trustedListRejected: (code) => listRejections.inc({ code }),
    issuance: (tenant, format, outcome, count = 1) =>
      issuances.inc({ tenant: String(tenant), format, outcome }, count),
    verification: (tenant, format, outcome, failingCheck) =>
      verifications.inc({ tenant: String(tenant), format, outcome, failing_check: failingCheck }),
    login: (tenant, method, outcome) =>
      logins.inc({ tenant: tenant === null ? 'none' : String(tenant), method, outcome }),
  };
}
