import { notFound } from '../errors.ts';
import { escapeHtml, page } from '../interaction/page-chrome.ts';
import { qrCodeSvg } from '../interaction/qr-code.ts';
import type { IssuerDeps } from './issuer-deps.ts';
import { findOffer, listConfigurations } from './issuer-repository.ts';
import { offerPaths } from './offers.ts';

const STYLE = `
.qr { display: block; width: 100%; max-width: 18rem; height: auto; margin: 1rem auto; }
.open { display: inline-block; min-height: 44px; box-sizing: border-box; padding: 0.7rem 1.2rem; background: #1d4ed8; color: #fff; border-radius: 4px; text-decoration: none; font-weight: 600; }
`;

/**
 * GET /offer/{id}: the page a tenant sends people to — what is offered, a QR code for a wallet
 * on another device and an "Add to your wallet" link for this one. It shows no claim and no
 * transaction code (the tenant gives that on another channel).
 */
export async function renderOfferPage(deps: IssuerDeps, offerId: string, cspNonce: string): Promise<string> {
  const offer = await findOffer(deps.db, offerId);
  const live = offer && offer.status === 'offered' && offer.expires_at > deps.now().toISOString();
  if (!offer || !live) throw notFound('This offer has been used or has expired; it');
  const client = await deps.db
    .selectFrom('clients')
    .select('name')
    .where('client_id', '=', offer.client_id)
    .executeTakeFirst();
  const issuer = client?.name ?? 'An issuer';
  const configurations = await listConfigurations(deps.db, offer.client_id);
  const names = (JSON.parse(offer.configuration_ids) as string[]).map((id) => {
    const display = configurations.get(id)?.display?.[0]?.name;
    return `<li>${escapeHtml(display ?? id)}</li>`;
  });
  const paths = offerPaths(deps.config.publicUrl, offer.client_id, offer.id);
  // A HAIP issuer's offer opens HAIP wallets by their scheme (HAIP 1.0, Credential Offer); the
  // common scheme stays beside it for the others.
  const haip = (await deps.issuerKeys(offer.client_id))?.haip === true;
  const offerLink = haip ? paths.haipLink : paths.offerLink;
  const qr = await qrCodeSvg(offerLink, 'QR code of the offer, for a wallet on another device');
  const body = `<main>
<h1>${escapeHtml(issuer)} offers you a credential</h1>
<ul>${names.join('')}</ul>
${offer.tx_code_hash ? `<p>Your wallet will ask for a transaction code; ${escapeHtml(issuer)} gives it to you separately.</p>` : ''}
<h2>On another device</h2>
<p>Scan this code with your phone's wallet.</p>
${qr}
<h2>On this device</h2>
<p><a class="open" href="${escapeHtml(offerLink)}">Add to your wallet</a></p>
${haip ? `<p>Another wallet? <a href="${escapeHtml(paths.offerLink)}">Open the offer in it</a>.</p>` : ''}
<p>This offer works once and expires at <time datetime="${escapeHtml(offer.expires_at)}">${escapeHtml(offer.expires_at.replace('T', ' ').slice(0, 16))} UTC</time>.</p>
</main>`;
  return page({ title: `Add a credential – ${issuer}`, cspNonce, body, style: STYLE });
}
