import assert from 'node:assert/strict';
import { runAdminCommand } from '../../src/cli/admin-command.ts';
import { createEmailIndexes } from '../../src/keys/blind-index.ts';
import { createFieldCipher } from '../../src/keys/field-cipher.ts';
import { fixedKeyRing } from '../../src/keys/master-key-ring.ts';
import type { TestServer } from '../helpers/server.ts';
import { codeFromOutbox, postInteraction } from '../oidc/flow-helpers.ts';

/** `coffer admin add` in this process, over the server's database and key; returns the admin id. */
export async function addAdmin(
  server: TestServer,
  clientId: number,
  who: { email: string } | { wallet: string },
  role: 'owner' | 'operator' | 'auditor',
): Promise<number> {
  const ring = fixedKeyRing(server.masterKey);
  const result = await runAdminCommand(
    {
      db: server.database.db,
      dialect: server.database.dialect,
      cipher: async () => createFieldCipher(ring),
      accessTokenTtl: 300,
      publicUrl: server.url,
      emailIndexes: async () => createEmailIndexes(ring),
    },
    [
      'admin',
      'add',
      '--client',
      String(clientId),
      ...('email' in who ? ['--email', who.email] : ['--wallet', who.wallet]),
      '--role',
      role,
    ],
  );
  return (result.json as { id: number }).id;
}

/** Logs in to the console with an e-mail code, headless; returns the console cookie and its Set-Cookie. */
export async function consoleLogin(
  server: TestServer,
  email: string,
): Promise<{ cookie: string; setCookie: string }> {
  const start = await fetch(`${server.url}/console`, { redirect: 'manual' });
  assert.equal(start.status, 303);
  const path = start.headers.get('location')!;
  assert.match(path, /^\/interaction\/[A-Za-z0-9_-]+$/);
  const sent = await postInteraction(server, path, 'login/email', { email });
  assert.equal(sent.status, 202, JSON.stringify(sent.body));
  const code = await codeFromOutbox(server, email);
  const verified = await postInteraction(server, path, 'login/email/verify', { code });
  assert.equal(verified.status, 200, JSON.stringify(verified.body));
  assert.equal(verified.body.redirect_to, '/console');
  const setCookie = verified.cookie!;
  return { cookie: setCookie.split(';')[0]!, setCookie };
}

export const getPage = (server: TestServer, cookie: string, path: string, accept = 'text/html') =>
  fetch(`${server.url}${path}`, { headers: { cookie, accept }, redirect: 'manual' });

/** The form token a console page carries (every page of one session carries the same). */
export async function formToken(server: TestServer, cookie: string, clientId: number): Promise<string> {
  const html = await (await getPage(server, cookie, `/console/clients/${clientId}`)).text();
  const match = html.match(/name="csrf_token" value="([^"]+)"/);
  assert.ok(match, 'the page carries its form token');
  return match[1]!;
}

/** What a browser sends when a console form is submitted: urlencoded, with this origin. */
export const postForm = (
  server: TestServer,
  cookie: string,
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      cookie,
      origin: server.url,
      'content-type': 'application/x-www-form-urlencoded',
      ...headers,
    },
    body: new URLSearchParams(fields).toString(),
  });

export const SUB_CLIENT_FIELDS = {
  name: 'Faculty of Law',
  address_1: '1 Main Street',
  address_2: '',
  city: 'London',
  province: 'GB-ENG',
  country: 'GB',
  timezone: 'Europe/London',
  domain: 'law.example.com',
  subdomain: 'law',
};
