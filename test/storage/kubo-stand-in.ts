/**
 * A STAND-IN for a Kubo node, for tests only: a real HTTP server on 127.0.0.1 that answers the
 * few Kubo RPC calls Coffer's kubo backend makes (version, block put/get/stat, pin add/rm/ls), in the wire format Kubo uses and that
 * kubo-rpc-client sends (POST only; multipart body for block/put; options as kebab-case query
 * parameters; errors as HTTP 500 with `{"Message", "Code": 0, "Type": "error"}`). It is not Kubo:
 * it keeps blocks in memory and knows nothing of the network (nor of pin names or indirect pins). Like Kubo it computes every CID
 * itself from the bytes and the requested codec and hash (never trusting the caller's idea of
 * it), refuses bytes that are not valid for the named codec, and records pins and requests so
 * tests can see what Coffer asked for.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as dagCbor from '@ipld/dag-cbor';
import * as dagJson from '@ipld/dag-json';
import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';
import { sha256 } from 'multiformats/hashes/sha2';

const CODECS: Record<string, { code: number; decode(bytes: Uint8Array): unknown }> = {
  raw,
  'dag-cbor': dagCbor,
  'dag-json': dagJson,
};

export interface StandInRequest {
  path: string;
  query: Record<string, string>;
}

export interface KuboStandIn {
  url: string;
  /** Blocks by the CID the stand-in computed (base32 CIDv1 text). */
  blocks: Map<string, Uint8Array>;
  pins: Set<string>;
  requests: StandInRequest[];
  /** Misbehaviour switches, to prove that Coffer notices. */
  /** holdPinRemovals: pin/rm is recorded and never answered (a caller killed while it waits). */
  faults: { corruptGets: boolean; misnamePuts: boolean; holdPinRemovals: boolean };
  close(): Promise<void>;
}

class RpcError extends Error {}

function parseMultipartFile(contentType: string, body: Buffer): Buffer {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  if (!contentType.startsWith('multipart/form-data') || !boundary) {
    throw new RpcError('expected a multipart/form-data body');
  }
  const delimiter = `--${boundary[1] ?? boundary[2]}`;
  const start = body.indexOf(`${delimiter}\r\n`);
  if (start < 0) throw new RpcError('multipart body has no part');
  const headersEnd = body.indexOf('\r\n\r\n', start);
  const headers = body.subarray(start + delimiter.length + 2, headersEnd).toString('latin1');
  if (!/^content-disposition: form-data; name="file"/im.test(headers)) {
    throw new RpcError('file argument "data" is required');
  }
  const contentEnd = body.indexOf(`\r\n${delimiter}`, headersEnd + 4);
  if (contentEnd < 0) throw new RpcError('multipart part is not terminated');
  if (body.indexOf(`\r\n${delimiter}--`, headersEnd + 4) !== contentEnd) {
    throw new RpcError('the stand-in accepts exactly one block per request');
  }
  return body.subarray(headersEnd + 4, contentEnd);
}

function argCid(query: Record<string, string>): CID {
  const arg = query['arg'];
  if (!arg) throw new RpcError('argument "cid" is required');
  try {
    return CID.parse(arg);
  } catch {
    throw new RpcError(`invalid path "${arg}": invalid cid`);
  }
}

export async function startKuboStandIn(): Promise<KuboStandIn> {
  const blocks = new Map<string, Uint8Array>();
  const pins = new Set<string>();
  const requests: StandInRequest[] = [];
  const faults = { corruptGets: false, misnamePuts: false, holdPinRemovals: false };

  function stored(cid: CID): { key: string; bytes: Uint8Array } {
    const key = CID.createV1(cid.code, cid.multihash).toString();
    const bytes = blocks.get(key);
    // Kubo's own wording when an offline lookup misses, which clients match on.
    if (!bytes) throw new RpcError(`block was not found locally (offline): ipld: could not find ${cid}`);
    return { key, bytes };
  }

  async function blockPut(req: IncomingMessage, query: Record<string, string>) {
    if (query['format'] !== undefined)
      throw new RpcError('the stand-in speaks cid-codec, not the deprecated format');
    const codecName = query['cid-codec'] ?? 'raw';
    const mhtype = query['mhtype'] ?? 'sha2-256';
    const codec = CODECS[codecName];
    if (!codec) throw new RpcError(`unrecognized codec: ${codecName}`);
    if (mhtype !== 'sha2-256') throw new RpcError(`the stand-in only hashes sha2-256, not ${mhtype}`);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const bytes = new Uint8Array(
      parseMultipartFile(req.headers['content-type'] ?? '', Buffer.concat(chunks)),
    );
    try {
      codec.decode(bytes);
    } catch (error) {
      throw new RpcError(`block is not valid ${codecName}: ${(error as Error).message}`);
    }
    const cid = CID.createV1(codec.code, await sha256.digest(bytes));
    blocks.set(cid.toString(), bytes);
    if (query['pin'] === 'true') pins.add(cid.toString());
    const key = faults.misnamePuts ? CID.createV1(codec.code, await sha256.digest(new Uint8Array(1))) : cid;
    return { Key: key.toString(), Size: bytes.length };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const query = Object.fromEntries(url.searchParams);
    requests.push({ path: url.pathname, query });
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(`${JSON.stringify(body)}\n`);
    };
    if (req.method !== 'POST') {
      res.writeHead(405, { 'Content-Type': 'text/plain' });
      res.end('405 - Method Not Allowed\n');
      return;
    }
    try {
      switch (url.pathname) {
        case '/api/v0/version':
          return json(200, {
            Version: '0.0.0-stand-in',
            Commit: '',
            Repo: '16',
            System: 'stand-in',
            Golang: '',
          });
        case '/api/v0/block/put':
          return json(200, await blockPut(req, query));
        case '/api/v0/block/stat': {
          const { key, bytes } = stored(argCid(query));
          return json(200, { Key: key, Size: bytes.length });
        }
        case '/api/v0/block/get': {
          const bytes = Buffer.from(stored(argCid(query)).bytes);
          if (faults.corruptGets) bytes[bytes.length - 1]! ^= 0x01;
          res.writeHead(200, { 'Content-Type': 'text/plain', 'X-Stream-Output': '1' });
          res.end(bytes);
          return;
        }
        case '/api/v0/pin/add': {
          const { key } = stored(argCid(query));
          pins.add(key);
          return json(200, { Pins: [key] });
        }
        case '/api/v0/pin/ls': {
          // The stand-in pins recursively only (a block without links is its own whole DAG).
          const type = query['type'] ?? 'all';
          if (!['all', 'recursive', 'direct', 'indirect'].includes(type))
            throw new RpcError(`invalid type '${type}', must be one of {direct, indirect, recursive, all}`);
          const listed = type === 'all' || type === 'recursive' ? [...pins] : [];
          if (query['stream'] === 'true') {
            res.writeHead(200, { 'Content-Type': 'application/json', 'X-Chunked-Output': '1' });
            res.end(
              listed.map((cid) => `${JSON.stringify({ Cid: cid, Name: '', Type: 'recursive' })}\n`).join(''),
            );
            return;
          }
          return json(200, {
            Keys: Object.fromEntries(listed.map((cid) => [cid, { Type: 'recursive', Name: '' }])),
          });
        }
        case '/api/v0/pin/rm': {
          if (faults.holdPinRemovals) return;
          const key = argCid(query).toString();
          if (!pins.delete(key))
            return json(500, { Message: 'not pinned or pinned indirectly', Code: 0, Type: 'error' });
          return json(200, { Pins: [key] });
        }
        default:
          res.writeHead(404, { 'Content-Type': 'text/plain' });
          res.end('404 page not found\n');
      }
    } catch (error) {
      const message =
        error instanceof RpcError ? error.message : `stand-in failure: ${(error as Error).message}`;
      json(500, { Message: message, Code: 0, Type: 'error' });
    }
  }

  const server = createServer((req, res) => {
    void handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    blocks,
    pins,
    requests,
    faults,
    close() {
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/** A port on 127.0.0.1 that nothing listens on: bound once to learn a free number, then released. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
