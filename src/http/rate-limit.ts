import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { CofferError } from '../errors.ts';

/**
 * Fixed-window counters in the database, so every instance that shares it shares the limits.
 * Used where attempts must be bounded across instances: log-in attempts and failed token
 * requests (successful exchanges need a fresh code from a log-in, so they are bounded already).
 */
export interface RateLimiter {
  /** Counts one hit; throws 429 once the bucket is over its limit. */
  hit(bucket: string, limit: number, windowSeconds: number): Promise<void>;
  /** Throws 429 if the bucket is already over its limit; counts nothing. */
  check(bucket: string, limit: number, windowSeconds: number): Promise<void>;
}

function limited(windowStart: number, windowSeconds: number, nowSeconds: number): CofferError {
  const retry = Math.max(1, windowStart + windowSeconds - nowSeconds);
  return new CofferError('rate_limited', `Too many attempts; retry in ${retry} seconds.`, {
    headers: { 'retry-after': String(retry) },
  });
}

export function createRateLimiter(db: Kysely<Database>, clock: () => number = () => Date.now()): RateLimiter {
  const windowOf = (windowSeconds: number) => {
    const nowSeconds = Math.floor(clock() / 1000);
    return { nowSeconds, start: nowSeconds - (nowSeconds % windowSeconds) };
  };
  return {
    async hit(bucket, limit, windowSeconds) {
      const { nowSeconds, start } = windowOf(windowSeconds);
      const row = await db
        .insertInto('rate_limits')
        .values({ bucket, window_start: start, hits: 1 })
        .onConflict((oc) =>
          oc.column('bucket').doUpdateSet((eb) => ({
            hits: eb
              .case()
              .when('rate_limits.window_start', '=', start)
              .then(eb('rate_limits.hits', '+', 1))
              .else(1)
              .end(),
            window_start: start,
          })),
        )
        .returning('hits')
        .executeTakeFirstOrThrow();
      if (row.hits > limit) throw limited(start, windowSeconds, nowSeconds);
    },
    async check(bucket, limit, windowSeconds) {
      const { nowSeconds, start } = windowOf(windowSeconds);
      const row = await db
        .selectFrom('rate_limits')
        .select('hits')
        .where('bucket', '=', bucket)
        .where('window_start', '=', start)
        .executeTakeFirst();
      if (row && row.hits >= limit) throw limited(start, windowSeconds, nowSeconds);
    },
  };
}
