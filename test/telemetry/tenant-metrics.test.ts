// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import type { JsonWebKey } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { proofKey, startIssuerWorld } from '../issuer/issuer-helpers.ts';
import { logInWithWallet, postInteraction, registerRelyingParty, startLogin } from '../oidc/flow-helpers.ts';
import { answer, resolveRequest } from '../verifier/test-wallet.ts';
import { presentSdJwt, sdJwtQuery, startVerifierWorld } from '../verifier/verifier-helpers.ts';

/**
 * Per-tenant counters in /metrics (issue 42): issuances by format and outcome, verifications by
 * format, outcome and failing check, log-ins by method and outcome — each moving with the act, for
 * the tenant that acted, and labelled with ids and bounded names only.
 */
async function counter(url: string, name: string, labels: Record<string, string | number>): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const inside = line.slice(name.length + 1, line.indexOf('}'));
    const have = inside.split(',');
    if (wanted.every((label) => have.includes(label)) && have.length === wanted.length)
      return Number(line.slice(line.indexOf('}') + 1));
  }
  return 0;
}

for (const kind of DATABASE_KINDS) {
  describe(`tenant metrics on ${kind}`, () => {
    const cleanups: Array<() => Promise<void>> = [];
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    test('an issuance counts for its tenant and format, a refused second request as refused', async () => {
      const world = await startIssuerWorld(kind);
      cleanups.push(() => world.close());
      const put = await world.api('PUT', '/v1/issuer/configurations/degree', {
        format: 'dc+sd-jwt',
        vct: 'https://example.edu/degree',
        claims: [{ path: ['degree'] }],
      });
      assert.equal(put.status, 201, put.text);
      const offer = await world.api('POST', '/v1/issuer/offers', {
        configuration_ids: ['degree'],
        claims: { degree: { degree: 'BSc' } },
      });
      const document = (await (await fetch(offer.body.data.credential_offer_uri)).json()) as any;
      const grant = document.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code'];
      const token = await world.server.request('POST', '/v2/openidc/token', {
        body: {
          grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
          'pre-authorized_code': grant['pre-authorized_code'],
        },
      });
      assert.equal(token.status, 200, token.text);
      const labels = { tenant: world.clientId, format: 'dc+sd-jwt' };
      assert.equal(
        await counter(world.server.url, 'coffer_issuances_total', { ...labels, outcome: 'issued' }),
        0,
      );
      const requestCredential = async () => {
        const { c_nonce } = (await (
          await fetch(`${world.issuerId}/nonce`, { method: 'POST' })
        ).json()) as any;
        const key = await proofKey();
        return fetch(`${world.issuerId}/credential`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token.body.access_token}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            credential_configuration_id: 'degree',
            proofs: { jwt: [await key.proof({ aud: world.issuerId, nonce: c_nonce })] },
          }),
        });
      };
      assert.equal((await requestCredential()).status, 200);
      assert.equal(
        await counter(world.server.url, 'coffer_issuances_total', { ...labels, outcome: 'issued' }),
        1,
      );
      assert.equal((await requestCredential()).status, 400, 'the configuration was issued already');
      assert.equal(
        await counter(world.server.url, 'coffer_issuances_total', { ...labels, outcome: 'refused' }),
        1,
      );
    });

    test('a verified answer and a tampered one count by format, outcome and failing check', async () => {
      const world = await startVerifierWorld(kind);
      cleanups.push(() => world.close());
      const holder = await generateKeyPair('ES256', { extractable: true });
      const credential = await issueSdJwtVc(world.issuer, {
        holderJwk: (await exportJWK(holder.publicKey)) as JsonWebKey,
      });
      const present = async (nonceOf: (nonce: string) => string) => {
        const created = await world.createRequest({ dcql_query: sdJwtQuery(PID_VCT, [['given_name']]) });
        const request = await resolveRequest(created.body.data.authorization_request);
        const presentation = await presentSdJwt(credential, { given_name: true }, holder, {
          aud: request.clientId,
          nonce: nonceOf(request.payload.nonce),
        });
        return answer(request, { pid: [presentation] });
      };
      const base = { tenant: world.clientId, format: 'dc+sd-jwt' };
      assert.equal((await present((nonce) => nonce)).status, 200);
      assert.equal(
        await counter(world.server.url, 'coffer_verifications_total', {
          ...base,
          outcome: 'verified',
          failing_check: 'none',
        }),
        1,
      );
      await present(() => "another request's nonce");
      assert.equal(
        await counter(world.server.url, 'coffer_verifications_total', {
          ...base,
          outcome: 'rejected',
          failing_check: 'nonce',
        }),
        1,
      );
    });

    test('log-ins count by method and outcome for the app that asked', async () => {
      const world = await startIssuerWorld(kind);
      cleanups.push(() => world.close());
      const rp = await registerRelyingParty(world.server);
      const account = privateKeyToAccount(generatePrivateKey());
      await logInWithWallet(world.server, rp, account);
      const url = world.server.url;
      assert.equal(
        await counter(url, 'coffer_logins_total', {
          tenant: rp.clientId,
          method: 'wallet',
          outcome: 'success',
        }),
        1,
      );
      const started = await startLogin(world.server, rp);
      const sent = await postInteraction(world.server, started.interactionPath, 'login/email', {
        email: 'metrics.person@example.com',
      });
      assert.equal(sent.status, 202);
      const wrong = await postInteraction(world.server, started.interactionPath, 'login/email/verify', {
        code: '000000',
      });
      assert.equal(wrong.status, 400);
      assert.equal(
        await counter(url, 'coffer_logins_total', {
          tenant: rp.clientId,
          method: 'email',
          outcome: 'failure',
        }),
        1,
      );
      const text = await (await fetch(`${url}/metrics`)).text();
      assert.ok(!text.includes('metrics.person'), 'no address in any label');
      assert.ok(!text.includes(account.address.toLowerCase().slice(2, 12)), 'no wallet address in any label');
    });
  });
}
