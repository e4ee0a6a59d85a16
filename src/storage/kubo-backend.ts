import { create } from 'kubo-rpc-client';
import type { CID } from 'multiformats/cid';
import type { BlockBackend, ListedBlock } from './backend.ts';
import { codecOf, parseCid } from './cid.ts';
import { StorageError } from './errors.ts';

const NOT_FOUND = /not found|could not find/i;

/**
 * Blocks in a Kubo node through its RPC API. Kubo computes the CID itself from the bytes and the
 * codec/hash named here; the answer must equal Coffer's own CID, or the two disagree about what
 * was stored. Every block is pinned, since Kubo's garbage collector removes unpinned blocks.
 */
export function createKuboBackend(url: string, options: { timeoutMs?: number } = {}): BlockBackend {
  const client = create({ url });
  const timeoutMs = options.timeoutMs ?? 10_000;
  // kubo-rpc-client's own `timeout` option is not applied to requests, so every call carries a signal.
  const signal = () => AbortSignal.timeout(timeoutMs);
  // Reads are local only: an online node asked for a block it lacks searches the network for it
  // instead of answering, so a missing block would hang until the timeout.
  const offline = () => ({ signal: signal(), offline: true });

  function failure(error: unknown, cid?: CID): StorageError {
    if (error instanceof StorageError) return error;
    const message = error instanceof Error ? error.message : String(error);
    if (cid && error instanceof Error && error.name === 'HTTPError' && NOT_FOUND.test(message)) {
      return new StorageError('block_not_found', `Block ${cid} is not stored in Kubo.`, { cause: error });
    }
    // fetch reports only "fetch failed"; the reason (ECONNREFUSED, a timeout, …) is in its cause.
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason = cause?.code ?? cause?.message ?? message;
    return new StorageError('backend_unavailable', `Kubo at ${url} failed: ${reason}`, { cause: error });
  }

  return {
    async put(cid, bytes) {
      try {
        // Options are passed kebab-cased as query parameters: cid-codec=…&mhtype=sha2-256.
        const putOptions = { signal: signal(), cidCodec: codecOf(cid), mhtype: 'sha2-256' };
        const named = await client.block.put(bytes, putOptions);
        if (!named.equals(cid)) {
          throw new StorageError('integrity_error', `Kubo named block ${cid} as ${named}; the two disagree.`);
        }
        await client.pin.add(cid, { signal: signal() });
      } catch (error) {
        throw failure(error);
      }
    },

    async get(cid) {
      try {
        return await client.block.get(cid, offline());
      } catch (error) {
        throw failure(error, cid);
      }
    },

    async has(cid) {
      try {
        await client.block.stat(cid, offline());
        return true;
      } catch (error) {
        const mapped = failure(error, cid);
        if (mapped.code === 'block_not_found') return false;
        throw mapped;
      }
    },

    async remove(cid) {
      try {
        await client.pin.rm(cid, { signal: signal() });
      } catch (error) {
        const mapped = failure(error, cid);
        // Not pinned (or never stored): nothing to remove.
        if (mapped.code !== 'block_not_found' && !/not pinned/i.test(String((error as Error).message)))
          throw mapped;
      }
    },

    // Kubo keeps no time for a pin; garbage collection times unreferenced blocks itself.
    async *list(): AsyncGenerator<ListedBlock> {
      let pins: AsyncIterable<{ cid: CID }>;
      try {
        pins = client.pin.ls({ type: 'recursive', signal: AbortSignal.timeout(timeoutMs * 30) });
        for await (const pin of pins) {
          let cid: CID;
          try {
            cid = parseCid(pin.cid.toString());
          } catch {
            continue; // a pin Coffer cannot have made (another codec, CIDv0): not listed
          }
          yield { cid, writtenAt: undefined };
        }
      } catch (error) {
        throw failure(error);
      }
    },

    async check() {
      try {
        await client.version({ signal: signal() });
      } catch (error) {
        throw failure(error);
      }
    },
  };
}
