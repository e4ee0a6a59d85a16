// oidc-provider (panva, v9) as the peer for Coffer's refresh and DPoP benchmarks (bench/refresh-dpop.ts):
// the shared anchor's configuration (../shared/bench/oidc-provider-anchor/server.mjs: one
// confidential client, ES256, JWT access tokens through resourceIndicators) plus what issue 19
// measures — the refresh_token grant with rotation at every use, and DPoP with server nonces
// required, as Coffer has them.
// Env: PORT; OIDC_ADAPTER=memory (default) | sqlite (the anchor's node:sqlite adapter, WAL +
// synchronous=NORMAL, so not durable across power loss; Coffer's SQLite commits with FULL).
// Bench-only routes on loopback:
//   GET  /__bench/health
//   POST /__bench/mint-refresh?n=K[&userinfo=1] -> {"refresh_tokens":[…]}
// Minted refresh tokens carry the anchor's resource, so a refresh returns a JWT access token (as
// Coffer's). With userinfo=1 they carry none: oidc-provider accepts only its opaque,
// audience-less access tokens at userinfo, and that is what a refresh of those returns.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Provider from 'oidc-provider';
import MemoryAdapter from 'oidc-provider/lib/adapters/memory_adapter.js';
import LRU from 'oidc-provider/lib/helpers/lru.js';

// The anchor's constants (../shared/bench/oidc-provider-anchor/common.mjs).
const CLIENT_ID = 'anchor-client';
const CLIENT_SECRET = 'anchor-client-secret-0123456789abcdef0123456789abcdef';
const REDIRECT_URI = 'https://rp.example.com/cb';
const RESOURCE = 'urn:anchor:rp-api';
const ACCOUNTS = 1000;

const PORT = Number(process.env.PORT);
if (!PORT) throw new Error('PORT env required');
const ISSUER = `http://127.0.0.1:${PORT}`;
const ADAPTER = process.env.OIDC_ADAPTER || 'memory';

let adapter;
let closeStore = () => {};
if (ADAPTER === 'memory') {
  // The default LRU holds 1000 entries, which would evict minted tokens.
  const store = new LRU({ maxSize: 20_000_000 });
  adapter = (name) => new MemoryAdapter(name, store);
} else if (ADAPTER === 'sqlite') {
  // The anchor's own adapter, imported rather than copied so both benchmarks run the same one
  // (../shared sits beside the project in CI and locally).
  const { createSqliteAdapter } = await import(
    '../../../shared/bench/oidc-provider-anchor/sqlite_adapter.mjs'
  );
  const file = join(tmpdir(), `coffer-peer-oidc-${process.pid}.sqlite`);
  const files = [file, `${file}-wal`, `${file}-shm`];
  for (const f of files) rmSync(f, { force: true });
  const { Adapter, db } = createSqliteAdapter(file);
  adapter = Adapter;
  closeStore = () => {
    try {
      db.close();
    } catch {}
    for (const f of files) rmSync(f, { force: true });
  };
} else {
  throw new Error(`unknown OIDC_ADAPTER ${ADAPTER}`);
}

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const signingJwk = { ...privateKey.export({ format: 'jwk' }), kid: 'es256-1', alg: 'ES256', use: 'sig' };
const accountAddress = (sub) => `0x${Buffer.from(sub).toString('hex').padEnd(40, '0').slice(0, 40)}`;

const provider = new Provider(ISSUER, {
  adapter,
  clients: [
    {
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
      id_token_signed_response_alg: 'ES256',
    },
  ],
  clientAuthMethods: ['client_secret_post', 'client_secret_basic'],
  jwks: { keys: [signingJwk] },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  claims: { openid: ['sub', 'eth_address'] },
  async findAccount(_ctx, sub) {
    return { accountId: sub, claims: async () => ({ sub, eth_address: accountAddress(sub) }) };
  },
  pkce: { required: () => false },
  issueRefreshToken: async () => true,
  // Coffer rotates at every use; the default rotates only public clients' or old tokens.
  rotateRefreshToken: true,
  features: {
    devInteractions: { enabled: false },
    userinfo: { enabled: true },
    // Nonces are stateless (HKDF of the secret and the minute): a new one each 60 s, any of the
    // five around now accepted. Coffer requires them everywhere, so this requires them too.
    dPoP: { enabled: true, nonceSecret: randomBytes(32), requireNonce: () => true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async () => RESOURCE,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, _resource, client) => ({
        scope: 'openid',
        audience: client.clientId,
        accessTokenFormat: 'jwt',
        accessTokenTTL: 3600,
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
  interactions: { url: async (_ctx, interaction) => `/interaction/${interaction.uid}` },
  ttl: {
    AccessToken: 3600,
    AuthorizationCode: 600,
    IdToken: 3600,
    Grant: 86400,
    Session: 86400,
    Interaction: 600,
    RefreshToken: 86400,
  },
});
provider.on('server_error', (_ctx, error) => console.error('server_error', error));

let minted = 0;
// As a log-in with offline_access leaves it: a Grant (consent) and a refresh token bound to it.
async function mintRefreshToken(withResource) {
  const accountId = `user-${minted++ % ACCOUNTS}`;
  const grant = new provider.Grant({ accountId, clientId: CLIENT_ID });
  grant.addOIDCScope('openid offline_access');
  if (withResource) grant.addResourceScope(RESOURCE, 'openid');
  const token = new provider.RefreshToken({
    accountId,
    clientId: CLIENT_ID,
    grantId: await grant.save(),
    gty: 'authorization_code',
    scope: 'openid offline_access',
    ...(withResource ? { resource: RESOURCE } : {}),
    authTime: Math.floor(Date.now() / 1000),
  });
  return token.save();
}

const callback = provider.callback();
const server = createServer(async (req, res) => {
  if (!req.url.startsWith('/__bench/')) return callback(req, res);
  try {
    const url = new URL(req.url, ISSUER);
    let body;
    if (url.pathname === '/__bench/health')
      body = { ok: true, impl: 'oidc-provider', adapter: ADAPTER, node: process.version };
    else if (url.pathname === '/__bench/mint-refresh' && req.method === 'POST') {
      const n = Math.min(Number(url.searchParams.get('n')) || 1, 200_000);
      const withResource = url.searchParams.get('userinfo') !== '1';
      const tokens = new Array(n);
      for (let i = 0; i < n; i++) tokens[i] = await mintRefreshToken(withResource);
      body = { refresh_tokens: tokens };
    } else {
      res.statusCode = 404;
      return res.end();
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(body));
  } catch (error) {
    console.error(error);
    res.statusCode = 500;
    res.end(String(error));
  }
});
server.keepAliveTimeout = 30_000;
server.listen(PORT, '127.0.0.1', () =>
  console.log(`READY oidc-provider peer adapter=${ADAPTER} ${ISSUER} node=${process.version}`),
);
for (const signal of ['SIGTERM', 'SIGINT'])
  process.on(signal, () => {
    server.close();
    server.closeAllConnections();
    closeStore();
    process.exit(0);
  });
