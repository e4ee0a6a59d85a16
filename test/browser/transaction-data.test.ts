import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import type { Browser } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { logInUser } from '../credentials/helpers.ts';
import { holderJwkOf } from '../helpers/issuers/holder.ts';
import { type IssuerIdentity, makeIssuerIdentity } from '../helpers/issuers/issuer-ca.ts';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { checkSdJwtPresentation } from '../oid4vp/format-checks.ts';
import { registerRelyingParty } from '../oidc/flow-helpers.ts';
import { chromiumMissing, injectWallet, launchChromium, openPage, serveStandIn } from './browser.ts';
import {
  fragmentOf,
  presentationRequest,
  registerVerifier,
  VERIFIER_ORIGIN,
  VERIFIER_REDIRECT_URI,
} from './flows.ts';

/**
 * A payment confirmation in Chromium: the consent page shows the transaction field by field, the
 * person confirms, and the SD-JWT key binding JWT the verifier gets binds the transaction's hash
 * (checked with @sd-jwt/sd-jwt-vc and node:crypto, not Coffer's code).
 */
const PAYMENT = 'urn:example:payment';

describe('OpenID4VP transaction data in Chromium', { skip: chromiumMissing }, () => {
  let browser: Browser;
  let server: TestServer;
  let identity: IssuerIdentity;
  let anchorFile: string;

  before(async () => {
    identity = await makeIssuerIdentity('Bank Issuer');
    anchorFile = path.join(tmpdir(), `coffer-issuers-${randomBytes(6).toString('hex')}.pem`);
    await writeFile(anchorFile, identity.ca.pem);
    [browser, server] = await Promise.all([
      launchChromium(),
      startTestServer('sqlite', { ISSUER_TRUST_ANCHORS: anchorFile, TRANSACTION_DATA_TYPES: PAYMENT }),
    ]);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    if (anchorFile) await rm(anchorFile, { force: true });
  });

  test('the person reads the payment, confirms it, and the presentation binds it', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const { did } = await logInUser(server, await registerRelyingParty(server), account);
    const { token } = await server.createMaster('Bank');
    const stored = await server.request('POST', '/v1/vc/issuer/store', {
      headers: { 'x-api-token': token },
      body: { vc: await issueSdJwtVc(identity, { holderJwk: holderJwkOf(did) }) },
    });
    assert.equal(stored.status, 201, stored.text);
    const clientId = await registerVerifier(server, 'Example Shop Checkout');

    const item = Buffer.from(
      JSON.stringify({
        type: PAYMENT,
        credential_ids: ['pid'],
        amount: '42.00',
        currency: 'EUR',
        payee: 'Example Shop Ltd',
      }),
    ).toString('base64url');
    const request = presentationRequest(
      server,
      clientId,
      {
        credentials: [
          {
            id: 'pid',
            format: 'dc+sd-jwt',
            meta: { vct_values: [PID_VCT] },
            claims: [{ path: ['given_name'] }],
          },
        ],
      },
      { transaction_data: JSON.stringify([item]) },
    );

    const t = await openPage(browser);
    await serveStandIn(t.context, VERIFIER_ORIGIN, 'Verifier');
    await injectWallet(t.context, account);
    const { page } = t;
    await page.goto(request.url);
    const confirm = page.getByRole('region', { name: 'What you confirm' });
    const shown = await confirm.innerText();
    for (const line of [
      /Type\s+urn:example:payment/,
      /amount\s+42\.00/,
      /currency\s+EUR/,
      /payee\s+Example Shop Ltd/,
    ]) {
      assert.match(shown, line);
    }
    await page.getByRole('button', { name: 'Connect wallet' }).click();
    await page.getByRole('button', { name: 'Confirm and share' }).waitFor();
    // The certificate's organisation and the vct's last segment in words, not the URL (issue #29).
    await page.getByRole('radio', { name: /^Identity credential from Bank Issuer — / }).waitFor();
    await t.screenshot('consent-transaction-data');
    await page.getByRole('button', { name: 'Confirm and share' }).click();

    await page.waitForURL((url) => url.href.startsWith(`${VERIFIER_REDIRECT_URI}#`));
    const fragment = fragmentOf(page.url());
    assert.equal(fragment.get('state'), request.state);
    const [presentation] = JSON.parse(fragment.get('vp_token')!).pid;
    await checkSdJwtPresentation(presentation, identity, holderJwkOf(did), {
      clientId,
      nonce: request.nonce,
      responseUri: VERIFIER_REDIRECT_URI,
      encryptionJwk: null,
    });
    const kb = decodeJwt(presentation.slice(presentation.lastIndexOf('~') + 1));
    assert.deepEqual(kb['transaction_data_hashes'], [createHash('sha256').update(item).digest('base64url')]);
    await t.close();
  });
});
