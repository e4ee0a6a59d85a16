import type { FastifyPluginAsync } from 'fastify';
import { escapeHtml, page, startPage } from '../interaction/page-chrome.ts';

const FRONT_STYLE = `
main { max-width: 40rem; }
ul.links { padding-left: 1.25rem; }
ul.links li { margin: 0.5rem 0; }
ul.links a { font-weight: 600; }
code { overflow-wrap: anywhere; }
`;

/** `GET /`: what this service is and where its doors are, for a newcomer who opens the address. */
export function renderFrontPage(input: { host: string; cspNonce: string }): string {
  const body = `<main>
<h1>Coffer at ${escapeHtml(input.host)}</h1>
<p>Coffer is an OpenID Provider and a hosted wallet for people, and a credential issuer and verifier for the organisations it serves (its tenants): people log in to the tenants' apps here, keep their verifiable credentials in their wallet, receive credentials the tenants issue and present them to the tenants' verifiers.</p>
<section aria-labelledby="people-heading">
<h2 id="people-heading">For people and administrators</h2>
<ul class="links">
<li><a href="/wallet">Your wallet</a>: the credentials you hold, their history, your accounts.</li>
<li><a href="/console">The console</a>: for a tenant's administrators, to run their clients, see their audit trail and more.</li>
</ul>
</section>
<section aria-labelledby="developers-heading">
<h2 id="developers-heading">For developers</h2>
<ul class="links">
<li><a href="/docs">The API reference</a> (and <a href="/openapi.json">its OpenAPI document</a>).</li>
<li><a href="/.well-known/openid-configuration">OpenID Provider discovery</a>.</li>
<li>Each tenant's credential issuer publishes its metadata at <code>/.well-known/openid-credential-issuer/issuers/{client id}</code>.</li>
</ul>
</section>
</main>`;
  return page({ title: `Coffer at ${input.host}`, cspNonce: input.cspNonce, style: FRONT_STYLE, body });
}

export const frontPageRoutes: FastifyPluginAsync<{ publicUrl: string }> = async (app, deps) => {
  const host = new URL(deps.publicUrl).host;
  app.get(
    '/',
    {
      schema: {
        tags: ['Front page'],
        summary: 'What this Coffer is, with links to its pages and documents (HTML)',
      },
    },
    async (_request, reply) => renderFrontPage({ host, cspNonce: startPage(reply) }),
  );
};
