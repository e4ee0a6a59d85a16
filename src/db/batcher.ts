/**
 * Gathers the calls made while the event loop runs one turn and hands them to `run` together.
 * On SQLite a durable commit costs an fsync and holds the (single) connection: committing the
 * writes of concurrent requests in one transaction turns N fsyncs into one ("group commit").
 * If the batch fails, each call is retried alone, so one bad item cannot fail its neighbours.
 */
export function createBatcher<I, O>(
  run: (items: I[]) => Promise<O[]>,
  maxBatch = 256,
): (item: I) => Promise<O> {
  const queue: Array<{ item: I; resolve: (value: O) => void; reject: (error: unknown) => void }> = [];
  let scheduled = false;

  async function flush(): Promise<void> {
    scheduled = false;
    const batch = queue.splice(0, maxBatch);
    if (queue.length > 0) schedule();
    try {
      const results = await run(batch.map((entry) => entry.item));
      for (const [i, entry] of batch.entries()) entry.resolve(results[i] as O);
    } catch {
      for (const entry of batch) {
        run([entry.item]).then((results) => entry.resolve(results[0] as O), entry.reject);
      }
    }
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => void flush());
  }

  return (item) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      schedule();
    });
}
