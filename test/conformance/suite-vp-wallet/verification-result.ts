import { fail, isObject, type Json, type WalletEnv } from './env.ts';
import { responseCodeOf } from './response.ts';
import { tenantQuery } from './variants.ts';

/**
 * The suite's screenshot placeholders (ExpectVerifierSuccessfulVerificationPage,
 * ExpectVerifierRejectedPresentationPage): the tester shows what the verifier concluded. Here the
 * verifier's conclusion is the tenant's result API, GET /v1/verifier/requests/{id}, read as the
 * tenant's page would (with the response_code of the wallet's redirect, for same-device requests).
 */

async function tenantResult(env: WalletEnv): Promise<Json> {
  const code = responseCodeOf(env);
  const read = await env.world.coffer.readResult(
    env.verifierRequestId,
    code ? `?response_code=${encodeURIComponent(code)}` : '',
  );
  if (read.status !== 200) fail(`the tenant's result API answered ${read.status}: ${read.text}`);
  return read.body.data;
}

/** ExpectVerifierSuccessfulVerificationPage (§8.2): the verifier reports the presentation verified, with the claims presented. */
export async function expectVerifierSuccessfulVerificationPage(
  env: WalletEnv,
  claims: Record<string, unknown>,
) {
  const result = await tenantResult(env);
  if (result.status !== 'verified')
    fail(`the verifier reports ${result.status}: ${JSON.stringify(result.error ?? result)}`);
  const { id } = tenantQuery(env.variant.credentialFormat);
  const [entry] = result.credentials?.[id] ?? [];
  if (!isObject(entry)) fail(`the result has no credential for ${id}`);
  const failed = (entry.checks as Json[]).filter((check) => !check.ok);
  if (failed.length) fail(`checks failed: ${JSON.stringify(failed)}`);
  const got = env.variant.credentialFormat === 'iso_mdl' ? entry.claims?.['org.iso.18013.5.1'] : entry.claims;
  for (const [name, value] of Object.entries(claims)) {
    if (JSON.stringify(got?.[name]) !== JSON.stringify(value)) {
      fail(`claim ${name} is ${JSON.stringify(got?.[name])}, not the presented ${JSON.stringify(value)}`);
    }
  }
}

/**
 * ExpectVerifierRejectedPresentationPage (§8.2): the verifier reports the presentation rejected,
 * naming the check that failed, and hands on no claim. Coffer answers such a presentation 200 and
 * records it (deferred verification, which the negative modules accept), but a rejected answer does
 * not close the request (DESIGN.md, Rules at the edges): its request object is still served.
 */
export async function expectVerifierRejectedPresentationPage(env: WalletEnv, failingCheck: string) {
  const result = await tenantResult(env);
  if (result.status !== 'rejected') fail(`the verifier reports ${result.status}, not rejected`);
  const { id } = tenantQuery(env.variant.credentialFormat);
  const description = String(result.error?.error_description ?? '');
  if (result.error?.error !== 'verification_failed' || !description.startsWith(`${id}: ${failingCheck} — `)) {
    fail(`the rejection does not name ${id}: ${failingCheck}: ${JSON.stringify(result.error)}`);
  }
  const [entry] = result.credentials?.[id] ?? [];
  const firstFailed = (entry?.checks as Json[] | undefined)?.find((check) => !check.ok);
  if (firstFailed?.name !== failingCheck)
    fail(`the first failing check is ${firstFailed?.name}, not ${failingCheck}`);
  if (entry.claims !== undefined) fail('a rejected presentation handed on its claims');
  const again = await env.world.fetch(String(env.httpParams['request_uri']));
  if (again.status !== 200)
    fail(`after the rejection the request_uri answers ${again.status}: the request was closed`);
}
