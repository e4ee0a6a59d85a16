import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import Fastify from 'fastify';
import { loggerOptions } from '../src/app.ts';
import { readConfig } from '../src/config/config.ts';
import { logFormatOf, prettyLine } from '../src/log-format.ts';

const PRODUCTION = {
  NODE_ENV: 'production',
  MASTER_KEY: randomBytes(32).toString('base64'),
  PUBLIC_URL: 'https://id.example',
};

/** A destination that keeps what is written, one entry per line; a terminal when `tty`. */
function capture(tty = false) {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, stream: tty ? Object.assign(stream, { isTTY: true }) : stream };
}

/** Logs through the app's logger options what a request and a handler log, with secrets in it. */
async function logSome(env: Record<string, string>, stream: NodeJS.WritableStream) {
  const app = Fastify({ logger: loggerOptions(readConfig(env), stream) });
  app.get('/thing', async (request) => {
    request.log.info(
      {
        body: { client_secret: 'cfr_cs_must_not_show', name: 'Ada Lovelace', password: 'hunter2' },
        user: { api_token: 'cfr_at_must_not_show', id: 7, tags: ['a', 'b c'], admin: false },
        empty: {},
        nothing: null,
        note: 'two\nlines',
      },
      'stored "it" = done',
    );
    return { ok: true };
  });
  await app.inject({ method: 'GET', url: '/thing?q=1' });
  await app.close();
}

/** Every leaf of a JSON record but time, level and msg, as its dotted path and value. */
function leaves(value: unknown, path: string, out: Array<[string, unknown]>) {
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0) {
    for (const [key, member] of Object.entries(value)) leaves(member, path ? `${path}.${key}` : key, out);
  } else {
    out.push([path, value]);
  }
  return out;
}

const shown = (value: unknown) =>
  typeof value === 'string' && /^[^\s"=\\\p{Cc}]+$/u.test(value)
    ? value
    : typeof value === 'string' || (value !== null && typeof value === 'object')
      ? JSON.stringify(value)
      : String(value);

test('a pretty line holds every field of its JSON line: time, level, message, then key=value', async () => {
  const json = capture();
  await logSome({ NODE_ENV: 'test', LOG_FORMAT: 'json' }, json.stream);
  assert.equal(json.lines.length, 3, 'incoming request, the handler, request completed');
  for (const line of json.lines) {
    const { time, level, msg, ...fields } = JSON.parse(line);
    const pretty = prettyLine(line, { colours: false });
    assert.ok(!pretty.includes('\n'), 'one line per record');
    const label = { 30: 'INFO ' }[level as number];
    assert.ok(pretty.startsWith(`${new Date(time).toISOString()} ${label} `), pretty);
    const shownMessage = msg.includes('\n') ? JSON.stringify(msg) : msg;
    assert.ok(pretty.includes(` ${label} ${shownMessage} `), pretty);
    const expected = leaves(fields, '', []);
    assert.ok(expected.length >= 5, 'pid, hostname, reqId and more');
    for (const [path, value] of expected) {
      assert.ok(pretty.includes(` ${path}=${shown(value)}`), `${path} in ${pretty}`);
    }
  }
  const handler = prettyLine(json.lines[1]!, { colours: false });
  assert.match(
    handler,
    / stored "it" = done pid=\d+ hostname=\S+ reqId=req-1 body\.client_secret=\[redacted\] body\.name="Ada Lovelace" /,
  );
  assert.match(
    handler,
    / user\.tags=\["a","b c"\] user\.admin=false empty=\{\} nothing=null note="two\\nlines"/,
  );
});

test('redacted fields stay redacted in the pretty format, and the lines are not JSON', async () => {
  const pretty = capture();
  await logSome({ NODE_ENV: 'test', LOG_FORMAT: 'pretty' }, pretty.stream);
  assert.equal(pretty.lines.length, 3);
  const log = pretty.lines.join('\n');
  assert.ok(!log.includes('must_not_show') && !log.includes('hunter2'), log);
  assert.match(log, /body\.client_secret=\[redacted\]/);
  assert.match(log, /body\.password=\[redacted\]/);
  assert.match(log, /user\.api_token=\[redacted\]/);
  for (const line of pretty.lines) {
    assert.match(line, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO {2}/);
    assert.ok(!line.includes('\x1b['), 'no colours off a terminal');
  }
  assert.match(pretty.lines[0]!, / incoming request .*req\.method=GET req\.url="\/thing\?q=1" /);
  assert.match(pretty.lines[2]!, / request completed .*res\.statusCode=200 responseTime=/);
});

test('development on a terminal is pretty (coloured); off a terminal, in production or as LOG_FORMAT says, JSON', async () => {
  const development = readConfig({ NODE_ENV: 'development' });
  const production = readConfig(PRODUCTION);
  const terminal = { isTTY: true };
  const pipe = {};
  assert.equal(logFormatOf(development, terminal), 'pretty');
  assert.equal(logFormatOf(development, pipe), 'json');
  assert.equal(logFormatOf(production, terminal), 'json');
  assert.equal(logFormatOf(production, pipe), 'json');
  assert.equal(logFormatOf(readConfig({ NODE_ENV: 'development', LOG_FORMAT: 'json' }), terminal), 'json');
  assert.equal(logFormatOf(readConfig({ ...PRODUCTION, LOG_FORMAT: 'pretty' }), pipe), 'pretty');

  const isJson = (line: string) => {
    const record = JSON.parse(line);
    assert.equal(typeof record.time, 'number');
    assert.equal(record.level, 30);
  };
  for (const [env, tty] of [
    [{ NODE_ENV: 'development' }, false],
    [PRODUCTION, true],
    [PRODUCTION, false],
    [{ NODE_ENV: 'development', LOG_FORMAT: 'json' }, true],
  ] as const) {
    const out = capture(tty);
    await logSome(env, out.stream);
    assert.equal(out.lines.length, 3);
    out.lines.forEach(isJson);
    assert.ok(!out.lines.join('').includes('must_not_show'));
  }
  const onTerminal = capture(true);
  await logSome({ NODE_ENV: 'development' }, onTerminal.stream);
  assert.equal(onTerminal.lines.length, 3);
  for (const line of onTerminal.lines) {
    assert.throws(() => JSON.parse(line));
    assert.ok(line.includes('Z \u001b[32mINFO \u001b[39m '), `the level in colour on a terminal: ${line}`);
  }
});
