import assert from 'node:assert/strict';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import Fastify from 'fastify';
import { trackInFlight } from '../../src/http/in-flight.ts';

/** A handler that waits until the test releases it, to hold a request in flight. */
async function appWithHeldRoute() {
  const app = Fastify();
  const tracker = trackInFlight(app);
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  let entered!: () => void;
  const handlerEntered = new Promise<void>((r) => {
    entered = r;
  });
  app.get('/held', async () => {
    entered();
    await released;
    return { ok: true };
  });
  app.get('/quick', async () => ({ ok: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  return { app, tracker, release, handlerEntered, port };
}

test('shutdown waits for a handler whose client has already disconnected', async (t) => {
  const { app, tracker, release, handlerEntered, port } = await appWithHeldRoute();
  t.after(async () => {
    release();
    await app.close();
  });
  const client = request({ host: '127.0.0.1', port, path: '/held' });
  client.on('error', () => {});
  client.end();
  await handlerEntered;
  client.destroy();
  await new Promise((r) => setTimeout(r, 50));

  let drained = false;
  const draining = tracker.drain(5_000).then(() => {
    drained = true;
  });
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(drained, false, 'drain returned while the handler was still running');
  release();
  await draining;
  assert.equal(drained, true);
});

test('drain returns at once when every request has been answered', async () => {
  const { app, tracker, release, port } = await appWithHeldRoute();
  for (let i = 0; i < 5; i++) assert.equal((await fetch(`http://127.0.0.1:${port}/quick`)).status, 200);
  assert.equal((await fetch(`http://127.0.0.1:${port}/nowhere`)).status, 404);
  const started = Date.now();
  await tracker.drain(5_000);
  assert.ok(Date.now() - started < 1_000, 'drain waited although nothing was in flight');
  release();
  await app.close();
});
