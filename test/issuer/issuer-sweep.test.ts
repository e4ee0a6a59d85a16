import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sweepExpired } from '../../src/issuer/issuer-repository.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { type IssuerWorld, startIssuerWorld } from './issuer-helpers.ts';

for (const kind of DATABASE_KINDS) {
  describe(`issuer, expired rows (${kind})`, () => {
    let world: IssuerWorld;
    before(async () => {
      world = await startIssuerWorld(kind);
      const put = await world.api('PUT', '/v1/issuer/configurations/card', {
        format: 'dc+sd-jwt',
        vct: 'https://example.edu/card',
        claims: [{ path: ['name'] }],
      });
      assert.equal(put.status, 201, put.text);
    });
    after(() => world.close());

    it('drops the claims of an offer that expired unredeemed, and keeps those of a live one', async () => {
      const offer = (expires_in: number) =>
        world.api('POST', '/v1/issuer/offers', {
          configuration_ids: ['card'],
          claims: { card: { name: 'Ada' } },
          expires_in,
        });
      const expiring = (await offer(1)).body.data.id as string;
      const live = (await offer(3600)).body.data.id as string;
      await sweepExpired(world.server.database.db, new Date(Date.now() + 5000));
      const rows = await world.server.database.db
        .selectFrom('issuer_offers')
        .select(['id', 'claims_sealed'])
        .where('id', 'in', [expiring, live])
        .execute();
      const claimsOf = (id: string) => rows.find((r) => r.id === id)?.claims_sealed;
      assert.equal(claimsOf(expiring), null);
      assert.equal(typeof claimsOf(live), 'string');
    });

    it('sweeps in bounded batches: no statement touches more than the batch, every expired offer is emptied', async () => {
      const db = world.server.database.db;
      const ids = await Promise.all(
        Array.from(
          { length: 25 },
          async () =>
            (
              await world.api('POST', '/v1/issuer/offers', {
                configuration_ids: ['card'],
                claims: { card: { name: 'Ada' } },
                expires_in: 1,
              })
            ).body.data.id as string,
        ),
      );
      // biome-ignore lint/suspicious/noExplicitAny: the executor is wrapped to count each statement's rows
      const executor = db.getExecutor() as any;
      const original = executor.executeQuery;
      const touched: number[] = [];
      executor.executeQuery = async (...args: unknown[]) => {
        const result = await original.apply(executor, args);
        if (result.numAffectedRows !== undefined) touched.push(Number(result.numAffectedRows));
        return result;
      };
      try {
        await sweepExpired(db, new Date(Date.now() + 5000), 10);
      } finally {
        executor.executeQuery = original;
      }
      assert.ok(Math.max(...touched) <= 10, `rows per statement: ${touched.join(', ')}`);
      const kept = await db
        .selectFrom('issuer_offers')
        .select('id')
        .where('id', 'in', ids)
        .where('claims_sealed', 'is not', null)
        .execute();
      assert.deepEqual(kept, []);
    });
  });
}
