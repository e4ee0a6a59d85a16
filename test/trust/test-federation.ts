import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { type Certified, makeCertificate, privateKeyPem } from '../oid4vp/certificates.ts';

/**
 * A federation made in the tests (OpenID Federation 1.0): entities with their own keys, their
 * Entity Configurations at the well-known path and, for superiors, a fetch endpoint that signs
 * Subordinate Statements — all served over HTTPS on 127.0.0.1 under a CA of the test's own.
 * Statements are made with jose, not Coffer's code. Every statement can be altered per test
 * (keys, times, claims) to play a broken or hostile federation.
 */

type Key = Awaited<ReturnType<typeof generateKeyPair>>;

export interface TestEntity {
  id: string;
  kid: string;
  keys: Key;
  publicJwk: JWK;
  /** The superiors it names (authority_hints); none for an anchor. */
  superiors: string[];
  metadata: Record<string, Record<string, unknown>>;
  /** Claims of the statement a superior makes about it, by superior id (metadata_policy, …). */
  about: Map<string, Record<string, unknown>>;
  /** An entity served elsewhere (registered by its keys): statements about it list these. */
  jwks?: JWK[];
  /** Changes to its own Entity Configuration (claims) and how it is signed. */
  configurationClaims?: Record<string, unknown>;
  signConfigurationWith?: { keys: Key; kid: string };
}

export interface TestFederation {
  url: string;
  ca: Certified;
  /** Requests served, as paths with queries. */
  served: string[];
  entity(
    name: string,
    options?: { superiors?: TestEntity[]; metadata?: TestEntity['metadata'] },
  ): Promise<TestEntity>;
  /** Registers an entity served elsewhere (its Entity Configuration is its own) under `superiors`. */
  external(id: string, jwks: JWK[], superiors: TestEntity[]): TestEntity;
  /** The configured anchor form of an entity: {entityId, jwks}. */
  anchorOf(entity: TestEntity): { entityId: string; jwks: { keys: JWK[] } };
  /** Signs a statement about `subject` by `issuer` as the fetch endpoint would, with `extra` claims. */
  statement(issuer: TestEntity, subject: TestEntity, extra?: Record<string, unknown>): Promise<string>;
  configuration(entity: TestEntity): Promise<string>;
  close(): Promise<void>;
}

const now = () => Math.floor(Date.now() / 1000);

async function newEntityKeys(): Promise<{ keys: Key; publicJwk: JWK; kid: string }> {
  const keys = await generateKeyPair('ES256', { extractable: true });
  const kid = `k-${Math.random().toString(36).slice(2, 10)}`;
  return { keys, kid, publicJwk: { ...(await exportJWK(keys.publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

export async function startTestFederation(): Promise<TestFederation> {
  const ca = await makeCertificate({ subject: 'CN=Test Federation TLS CA', ca: true });
  const leaf = await makeCertificate({ subject: 'CN=127.0.0.1', issuer: ca, ipAddresses: ['127.0.0.1'] });
  const entities = new Map<string, TestEntity>();
  const served: string[] = [];
  let base = '';

  const sign = (claims: Record<string, unknown>, by: { keys: Key; kid: string }) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', typ: 'entity-statement+jwt', kid: by.kid })
      .sign(by.keys.privateKey);

  const federation: TestFederation = {
    url: '',
    ca,
    served,
    async entity(name, options = {}) {
      const made = await newEntityKeys();
      const id = `${base}/${name}`;
      const entity: TestEntity = {
        id,
        ...made,
        superiors: (options.superiors ?? []).map((s) => s.id),
        metadata: {
          federation_entity: {
            organization_name: name,
            ...(name.includes('leaf')
              ? {}
              : {
                  federation_fetch_endpoint: `${id}/fetch`,
                  federation_list_endpoint: `${id}/list`,
                }),
          },
          ...options.metadata,
        },
        about: new Map(),
      };
      entities.set(id, entity);
      return entity;
    },
    external(id, jwks, superiors) {
      const entity = {
        id,
        jwks,
        superiors: superiors.map((s) => s.id),
        metadata: {},
        about: new Map(),
      } as unknown as TestEntity;
      entities.set(id, entity);
      return entity;
    },
    anchorOf: (entity) => ({ entityId: entity.id, jwks: { keys: [entity.publicJwk] } }),
    statement(issuer, subject, extra = {}) {
      return sign(
        {
          iss: issuer.id,
          sub: subject.id,
          iat: now() - 10,
          exp: now() + 3600,
          jwks: { keys: subject.jwks ?? [subject.publicJwk] },
          source_endpoint: `${issuer.id}/fetch`,
          ...subject.about.get(issuer.id),
          ...extra,
        },
        issuer,
      );
    },
    configuration(entity) {
      return sign(
        {
          iss: entity.id,
          sub: entity.id,
          iat: now() - 10,
          exp: now() + 3600,
          jwks: { keys: [entity.publicJwk] },
          metadata: entity.metadata,
          ...(entity.superiors.length ? { authority_hints: entity.superiors } : {}),
          ...entity.configurationClaims,
        },
        entity.signConfigurationWith ?? entity,
      );
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const server = createServer(
    { key: await privateKeyPem(leaf.keys.privateKey), cert: leaf.pem },
    (request, response) => {
      const url = new URL(request.url ?? '/', base);
      served.push(url.pathname + url.search);
      const answer = (status: number, type: string, body: string) =>
        response.writeHead(status, { 'content-type': type }).end(body);
      void (async () => {
        const wellKnown = url.pathname.match(/^(.*)\/\.well-known\/openid-federation$/);
        const fetchPath = url.pathname.match(/^(.*)\/fetch$/);
        if (wellKnown) {
          const entity = entities.get(`${base}${wellKnown[1]}`);
          if (!entity) return answer(404, 'application/json', '{"error":"not_found"}');
          return answer(200, 'application/entity-statement+jwt', await federation.configuration(entity));
        }
        if (fetchPath) {
          const issuer = entities.get(`${base}${fetchPath[1]}`);
          const subject = entities.get(url.searchParams.get('sub') ?? '');
          if (!issuer || !subject?.superiors.includes(issuer.id))
            return answer(404, 'application/json', '{"error":"not_found"}');
          return answer(200, 'application/entity-statement+jwt', await federation.statement(issuer, subject));
        }
        answer(404, 'application/json', '{"error":"not_found"}');
      })();
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  federation.url = base;
  return federation;
}
