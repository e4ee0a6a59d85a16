import type { Kysely } from 'kysely';
import { findClient } from '../clients/client-repository.ts';
import type { Database } from '../db/schema.ts';
import { CofferError, notFound } from '../errors.ts';
import type { ExtraLoginMethod } from '../interaction/interaction-kinds.ts';
import type { InteractionRow } from '../interaction/interaction-repository.ts';
import { gone, type InteractionDeps, kindOf } from '../interaction/interaction-service.ts';
import { isEmailAddress } from '../interaction/login-methods.ts';
import type { VerifierDeps } from './verifier-deps.ts';
import { findRequestOfInteraction, findVerifier, updateVerifierRequest } from './verifier-repository.ts';
import { checkTrustedIssuers, createVerifierRequest, parseDcql } from './verifier-requests.ts';
import { readVerifierResult, requestForPage } from './verifier-service.ts';
import { requestQrSvg } from './verify-page.ts';

/**
 * Logging in with a wallet (DESIGN.md): a client configured with `--wallet-login` offers a third
 * log-in method. Coffer makes a presentation request for that client's verifier with the
 * configured DCQL query; once the wallet's answer is verified — from an issuer the file's
 * `trusted_issuers` names, or without them one of ISSUER_TRUST_ANCHORS, only — the claim at
 * `account_claim` is the account's e-mail address, and
 * the proof `{method: 'credential', email, claims}` goes to the interaction's kind like any other
 * log-in. The interaction core knows none of this: it carries requests to the registered method.
 */

export interface WalletLogin {
  dcql_query: Record<string, unknown>;
  /** A claims path (DCQL §7) into the verified claims: the account's e-mail address. */
  account_claim: string[];
  /**
   * The issuers whose credentials log people in for this client (PEM CA certificates or DIDs),
   * instead of ISSUER_TRUST_ANCHORS: whoever may assert an e-mail address controls the account.
   */
  trusted_issuers?: string[];
}

const unusable = (sentence: string) => new CofferError('invalid_request', sentence);

/**
 * `coffer client set ID --wallet-login FILE`: the file must hold `{dcql_query, account_claim}`, the
 * query must be valid DCQL and ask for the account claim, and the client must be a verifier
 * already (its key signs the requests). Answers the JSON to store.
 */
export async function checkWalletLogin(
  db: Kysely<Database>,
  clientId: number,
  text: string,
): Promise<string> {
  if (!(await findClient(db, clientId))) throw notFound(`Client ${clientId}`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw unusable('The --wallet-login file is not JSON.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw unusable(
      'The --wallet-login file must hold a JSON object {"dcql_query": …, "account_claim": […]}.',
    );
  const {
    dcql_query: dcqlQuery,
    account_claim: accountClaim,
    trusted_issuers: trustedIssuers,
    ...rest
  } = value as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length) throw unusable(`The --wallet-login file has ${extra[0]}, which is not taken.`);
  if (dcqlQuery === null || typeof dcqlQuery !== 'object' || Array.isArray(dcqlQuery))
    throw unusable('The --wallet-login file needs dcql_query, a DCQL query object.');
  const query = parseDcql(dcqlQuery);
  if (
    !Array.isArray(accountClaim) ||
    accountClaim.length === 0 ||
    accountClaim.length > 10 ||
    !accountClaim.every((part) => typeof part === 'string' && part.length > 0 && part.length <= 256)
  ) {
    throw unusable(
      'account_claim must be a claims path of 1 to 10 names, such as ["email"]: where the e-mail address is.',
    );
  }
  const path = accountClaim as string[];
  const asked = query.credentials.some((credential) =>
    (credential.claims ?? []).some(
      (claim) =>
        'path' in claim &&
        claim.path.length === path.length &&
        claim.path.every((part, index) => part === path[index]),
    ),
  );
  if (!asked) {
    throw unusable(
      `The DCQL query does not ask for ${JSON.stringify(path)}: add it to a credential query's claims, or the wallet will not disclose it.`,
    );
  }
  if (!(await findVerifier(db, clientId))) {
    throw unusable(
      `Client ${clientId} is not a verifier; run \`coffer verifier enable --client ${clientId}\` first (its key signs the requests to wallets).`,
    );
  }
  const stored: WalletLogin = {
    dcql_query: dcqlQuery as Record<string, unknown>,
    account_claim: path,
    ...(trustedIssuers === undefined ? {} : { trusted_issuers: checkLoginIssuers(trustedIssuers) }),
  };
  return JSON.stringify(stored);
}

/** `trusted_issuers`: 1 to 20 PEM CA certificates or issuer DIDs. */
function checkLoginIssuers(value: unknown): string[] {
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    value.length > 20 ||
    !value.every((item) => typeof item === 'string' && item.length > 0 && item.length <= 16_384)
  ) {
    throw unusable('trusted_issuers must be a list of 1 to 20 strings: PEM CA certificates or issuer DIDs.');
  }
  try {
    return checkTrustedIssuers(value as string[]);
  } catch (error) {
    if (!(error instanceof CofferError)) throw error;
    throw unusable(`In the --wallet-login file, ${error.message}`);
  }
}

/** The wallet log-in of the client an interaction is for, if it has one. */
async function walletLoginOf(db: Kysely<Database>, row: InteractionRow): Promise<WalletLogin | undefined> {
  if (row.client_id === null) return undefined;
  const client = await findClient(db, row.client_id);
  return client?.wallet_login ? (JSON.parse(client.wallet_login) as WalletLogin) : undefined;
}

/**
 * A request the wallet may still answer: a declined or rejected answer may have come from anyone
 * who saw the QR code, so the page keeps waiting for a presentation until the request expires.
 */
const WAITING = ['created', 'retrieved', 'declined', 'rejected'];
/** A request to a wallet lives as long as the verifier's default, never past the interaction. */
const REQUEST_SECONDS = 600;

/** The value at a claims path of names; undefined where the path leads nowhere. */
function claimAt(claims: unknown, path: string[]): unknown {
  let value = claims;
  for (const name of path) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[name];
  }
  return value;
}

interface CheckedCredential {
  issuer: { trusted: boolean } | null;
  claims?: Record<string, unknown>;
}

/** Why a request that is over logged nobody in (a declined or rejected one is over once it expired). */
const REFUSALS: Record<string, string> = {
  declined:
    'You declined to share in your wallet, and the request has expired. Try again, or log in another way.',
  expired: 'The request to your wallet has expired. Try again.',
};

export function walletLoginMethod(verifier: VerifierDeps, interactions: InteractionDeps): ExtraLoginMethod {
  const { db } = verifier;
  return {
    name: 'credential',

    // Only where the person logs in to the client's tenant: an app's log-in page.
    async offeredFor(row) {
      if (!kindOf(interactions, row).tenantLogin) return false;
      return (await walletLoginOf(db, row)) !== undefined;
    },

    async start(row) {
      const login = await walletLoginOf(db, row);
      if (!login || row.client_id === null) throw gone();
      // One open request per interaction: a reload or a second press shows the same code.
      const latest = await findRequestOfInteraction(db, row.id);
      const shown = latest ? await requestForPage(verifier, latest.id) : undefined;
      let id: string;
      let authorizationRequest: string;
      let expiresAt: string;
      if (shown && WAITING.includes(shown.status) && shown.expires_at > verifier.now().toISOString()) {
        ({ id, authorizationRequest, expires_at: expiresAt } = shown);
      } else {
        const remaining = Math.floor((Date.parse(row.expires_at) - verifier.now().getTime()) / 1000);
        if (remaining < 1) throw gone();
        const created = await createVerifierRequest(
          verifier,
          row.client_id,
          {
            dcql_query: login.dcql_query,
            expires_in: Math.min(REQUEST_SECONDS, remaining),
            ...(login.trusted_issuers ? { trusted_issuers: login.trusted_issuers } : {}),
          },
          { interactionId: row.id, onlyTrustedIssuers: login.trusted_issuers !== undefined },
        );
        id = created.id;
        if (!('authorization_request' in created)) throw gone();
        authorizationRequest = created.authorization_request;
        expiresAt = created.expires_at;
      }
      return {
        request_id: id,
        authorization_request: authorizationRequest,
        qr_svg: await requestQrSvg(authorizationRequest),
        page: `${verifier.config.publicUrl}/verify/${id}`,
        expires_at: expiresAt,
      };
    },

    async check(row) {
      const login = await walletLoginOf(db, row);
      const latest = await findRequestOfInteraction(db, row.id);
      if (!login || !latest) throw unusable('Start logging in with your wallet first.');
      const result = await readVerifierResult(verifier, latest.client_id, latest.id, undefined);
      const live = result.expires_at > verifier.now().toISOString();
      if (WAITING.includes(result.status) && live) return { pending: result.status };
      if (result.status !== 'verified') {
        const detail = 'error' in result ? result.error?.error_description : undefined;
        throw unusable(
          REFUSALS[result.status] ??
            `Your credential could not be verified${detail ? ` (${detail})` : ''}. Try again, or log in another way.`,
        );
      }
      const credentials = 'credentials' in result ? result.credentials : {};
      const entries = Object.values(credentials).flat() as CheckedCredential[];
      // The verifier rejects an untrusted issuer already; a log-in never rests on one either way.
      if (entries.some((entry) => entry.issuer?.trusted !== true)) {
        throw unusable('That credential is not from an issuer this service trusts, so it cannot log you in.');
      }
      if ('claims_deleted' in result) throw unusable(REFUSALS['expired']!);
      const path = login.account_claim;
      const found = entries
        .map((entry) => ({ entry, value: claimAt(entry.claims, path) }))
        .find(({ value }) => typeof value === 'string' && isEmailAddress(value.trim()));
      if (!found) {
        throw unusable(
          `Your credential does not carry an e-mail address at ${path.join('.')}, so it cannot log you in.`,
        );
      }
      // The claims beside the account claim are what it disclosed (an mdoc's: one namespace).
      const beside = claimAt(found.entry.claims, path.slice(0, -1));
      const claims =
        beside !== null && typeof beside === 'object' && !Array.isArray(beside)
          ? (beside as Record<string, unknown>)
          : {};
      // Used once: the claims go now, not RESULT_RETENTION seconds after this read.
      await updateVerifierRequest(db, latest.id, { claims_sealed: null });
      return { proof: { method: 'credential', email: (found.value as string).trim(), claims } };
    },
  };
}
