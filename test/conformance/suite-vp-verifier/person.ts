import assert from 'node:assert/strict';
import { interactionView, postInteraction, signSiwe } from '../../oidc/flow-helpers.ts';
import type { Run } from './verifier.ts';
import type { SuiteVerifierWorld } from './world.ts';

/**
 * The person at Coffer's hosted wallet: their browser takes the suite's redirect (the QR code /
 * "proceed with test" link) to `GET /v1/oid4vp/authorize`, logs in inside the first consent with
 * their wallet, and approves or declines, through the interaction's JSON API as the wallet's own
 * tests drive it.
 */

// biome-ignore lint/suspicious/noExplicitAny: the consent JSON is read as the page would
type Json = any;

export interface Opened {
  status: number;
  location: string | null;
  text: string;
}

/** What an HTML page says, without its markup and style. */
export const pageText = (html: string, limit = 600) =>
  html
    .replace(/<style[\s\S]*?<\/style>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, limit);

/** The browser opens the wallet's authorization endpoint with the suite's redirect query. */
export async function openWallet(world: SuiteVerifierWorld, run: Run): Promise<Opened> {
  const response = await fetch(`${world.server.url}/v1/oid4vp/authorize?${run.query}`, {
    redirect: 'manual',
    headers: world.cookie ? { cookie: world.cookie.split(';')[0]! } : {},
  });
  return { status: response.status, location: response.headers.get('location'), text: await response.text() };
}

/** Opens the consent (logging in inside it the first time); returns its path and JSON. */
export async function openConsent(
  world: SuiteVerifierWorld,
  run: Run,
): Promise<{ path: string; consent: Json }> {
  const opened = await openWallet(world, run);
  assert.equal(
    opened.status,
    303,
    `the wallet did not open a consent: ${opened.status} ${pageText(opened.text)}`,
  );
  const path = opened.location ?? '';
  assert.match(path, /^\/interaction\/[A-Za-z0-9_-]+$/);
  if (!world.cookie) {
    const view = await interactionView(world.server, path);
    assert.equal(view.status, 200);
    const login = await postInteraction(
      world.server,
      path,
      'login/wallet',
      await signSiwe(world.account, view.body.siwe),
    );
    assert.equal(login.status, 200, JSON.stringify(login.body));
    world.cookie = login.cookie ?? undefined;
  }
  const view = await interactionView(world.server, path);
  assert.equal(view.status, 200, JSON.stringify(view.body));
  assert.equal(view.body.kind, 'consent');
  return { path, consent: view.body.consent };
}

export interface Decided {
  status: number;
  body: Json;
}

export async function decide(
  world: SuiteVerifierWorld,
  path: string,
  decision: 'approve' | 'decline',
): Promise<Decided> {
  const answer = await postInteraction(world.server, path, 'consent', { decision });
  return { status: answer.status, body: answer.body };
}
