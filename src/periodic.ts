/**
 * Background work from the database (deferred issuances, verifier callbacks): `work` every
 * `everyMs`, one round at a time, never overlapping, its failures left to the next round; the
 * timer does not keep the process alive, and `stop` waits for the round under way.
 */
export function runPeriodically(work: () => Promise<unknown>, everyMs: number) {
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const timer = setInterval(() => {
    running = running.then(() => (stopped ? undefined : work())).catch(() => undefined);
  }, everyMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
