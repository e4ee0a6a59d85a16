/**
 * At most `size` file operations at once; the others wait in arrival order. A person with
 * thousands of credentials, listed by ten clients at once, asked the block store for tens of
 * thousands of open files, and the process ran out of descriptors (EMFILE) for everything else.
 */
export function createFileSlots(size: number) {
  let free = size;
  const waiting: Array<() => void> = [];
  return async function inSlot<T>(work: () => Promise<T>): Promise<T> {
    if (free > 0) free--;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else free++;
    }
  };
}
