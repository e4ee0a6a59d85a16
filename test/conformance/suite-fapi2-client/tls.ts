import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { coffer } from '../../helpers/cli.ts';
import type { Conditions } from '../harness.ts';

/** The suite's TLS scan of an endpoint (checkEndpointTLS), one condition each. */
export const TLS_CONDITIONS = [
  'EnsureTLS12RequireBCP195Ciphers',
  'DisallowTLS10',
  'DisallowTLS11',
  'EnsureTLS13OrLater',
  'EnsureTLS13PreferredOverTLS12',
  'RequireOnlyBCP195RecommendedCiphersForTLS12',
  'CheckForBCP195InsecureFAPICiphers',
];

/**
 * Coffer serves plain HTTP behind the deployment's TLS-terminating proxy (the tests' TLS front
 * stands in for it): the protocol versions and cipher suites the suite scans are the proxy's.
 * What Coffer does is refuse to run in production on anything but an https PUBLIC_URL, so
 * every endpoint it publishes is https. Asserted with the real CLI, which reads the same
 * configuration as the server.
 */
export async function tlsIsTheDeployments(c: Conditions, endpoint: string) {
  await c.choice(
    TLS_CONDITIONS.join(', '),
    'FAPI 2.0 Security Profile §5.2.1–5.2.2 (TLS 1.2 or later, BCP 195 cipher suites)',
    "Coffer speaks plain HTTP to the deployment's TLS-terminating proxy, which chooses TLS versions and cipher suites; Coffer publishes only https endpoints and refuses to start in production with an http PUBLIC_URL (docs/operations.md)",
    async () => {
      assert.equal(new URL(endpoint).protocol, 'https:');
      const refused = await coffer(
        {
          env: {
            NODE_ENV: 'production',
            PUBLIC_URL: 'http://coffer.example',
            MASTER_KEY: Buffer.alloc(32, 1).toString('base64'),
            DATA_DIR: path.join(tmpdir(), 'coffer-never-written'),
          },
        },
        'migrate',
        '--json',
      );
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /PUBLIC_URL.*https/);
    },
  );
}
