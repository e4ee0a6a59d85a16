import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { type IssuerWorld, startIssuerWorld } from './issuer-helpers.ts';

const SEEDED = 2300;

for (const kind of DATABASE_KINDS) {
  describe(`a tenant's issued credentials page by cursor (${kind})`, () => {
    let world: IssuerWorld;
    before(async () => {
      world = await startIssuerWorld(kind);
      // Two rows share each issuance time, so the cursor must break ties by id.
      const rows = Array.from({ length: SEEDED }, (_, i) => ({
        id: `urn:uuid:seeded-${String(i).padStart(5, '0')}`,
        client_id: world.clientId,
        configuration_id: 'degree',
        format: 'dc+sd-jwt',
        status: 'valid' as const,
        credential_hash: `hash-${i}`,
        issued_at: new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 2) * 1000).toISOString(),
      }));
      for (let i = 0; i < rows.length; i += 500) {
        await world.server.database.db
          .insertInto('issued_credentials')
          .values(rows.slice(i, i + 500))
          .execute();
      }
    });
    after(() => world.close());

    it('every row exactly once across pages of 1,000, in order; the envelope stays { data }', async () => {
      const seen: string[] = [];
      let path: string | undefined = '/v1/issuer/credentials';
      let pages = 0;
      while (path !== undefined) {
        const response = await world.api('GET', path);
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(Object.keys(response.body), ['data']);
        assert.ok(response.body.data.length <= 1000);
        seen.push(...response.body.data.map((c: { id: string }) => c.id));
        pages += 1;
        const link = response.headers.get('link');
        const next = link === null ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)?.[1];
        assert.ok(link === null || next !== undefined, `a Link header: ${link}`);
        path = next === undefined ? undefined : new URL(next).pathname + new URL(next).search;
      }
      assert.equal(pages, 3);
      assert.equal(seen.length, SEEDED);
      assert.equal(new Set(seen).size, SEEDED);
      assert.deepEqual(seen, [...seen].sort());
    });

    it('a cursor this endpoint did not give is a 400 on the cursor field', async () => {
      for (const cursor of ['bm90LWEtY3Vyc29y', 'x'.repeat(301), 'a b']) {
        const response = await world.api(
          'GET',
          `/v1/issuer/credentials?cursor=${encodeURIComponent(cursor)}`,
        );
        assert.equal(response.status, 400, response.text);
      }
    });
  });
}
