import * as credentials from '@digitalbazaar/credentials-context';
import dataIntegrity from '@digitalbazaar/data-integrity-context';
import multikey from '@digitalbazaar/multikey-context';
import did from 'did-context';

/**
 * The JSON-LD contexts every deployment knows, from the packages their authors publish: VC
 * Data Model 1.1 and 2.0 (with undefined-terms), Data Integrity, Multikey and DID Core.
 * Anything else must be registered (`coffer context add`); nothing is fetched from the network.
 */
export const BUNDLED_CONTEXTS: ReadonlyMap<string, object> = new Map([
  ...credentials.contexts,
  ...dataIntegrity.contexts,
  ...multikey.contexts,
  ...did.contexts,
]);
