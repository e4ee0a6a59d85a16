import type { Config, LogFormat } from './config/config.ts';

/**
 * Log lines a person can read while developing. pino writes every record as one JSON line,
 * redaction already applied; in the pretty format a stream between pino and the destination
 * rewrites each line as `time LEVEL message key=value …`, nested objects as dotted keys. It reads
 * only what pino wrote, so it shows the same fields as the JSON and can never show a redacted one.
 */

/** What pino writes to (its DestinationStream): one call per record, each a JSON line. */
export interface LogDestination {
  write(line: string): void;
}

const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};
/** ANSI colours of the level names: grey, cyan, green, yellow, red, magenta. */
const COLOURS: Record<number, number> = { 10: 90, 20: 36, 30: 32, 40: 33, 50: 31, 60: 35 };

/** Text shown as is; anything else (spaces, quotes, `=`, control characters, empty) is JSON-quoted. */
const BARE = /^[^\s"=\\\p{Cc}]+$/u;

export const isTerminal = (stream: unknown): boolean =>
  (stream as { isTTY?: unknown } | undefined)?.isTTY === true;

/** LOG_FORMAT when set; else pretty for development on a terminal, JSON everywhere else. */
export function logFormatOf(
  config: Pick<Config, 'environment' | 'logFormat'>,
  destination: unknown,
): LogFormat {
  if (config.logFormat !== undefined) return config.logFormat;
  return config.environment === 'development' && isTerminal(destination) ? 'pretty' : 'json';
}

const text = (value: string) => (BARE.test(value) ? value : JSON.stringify(value));

function scalar(value: unknown): string {
  if (typeof value === 'string') return text(value);
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** `key=value` for each leaf; an object's members as `key.member`, an empty object as `key={}`. */
function fieldsOf(prefix: string, value: unknown, out: string[]): void {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value);
    if (entries.length > 0) {
      for (const [key, member] of entries) fieldsOf(`${prefix}.${key}`, member, out);
      return;
    }
  }
  out.push(`${text(prefix)}=${scalar(value)}`);
}

/** One JSON line as pino wrote it, as one line for people; a line that is not a record, unchanged. */
export function prettyLine(json: string, options: { colours: boolean }): string {
  let record: unknown;
  try {
    record = JSON.parse(json);
  } catch {
    return json;
  }
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return json;
  const { time, level, msg, ...fields } = record as Record<string, unknown>;
  const parts: string[] = [];
  if (time !== undefined) parts.push(typeof time === 'number' ? new Date(time).toISOString() : scalar(time));
  if (level !== undefined) {
    const name = (typeof level === 'number' ? LEVELS[level] : undefined) ?? scalar(level);
    const colour = typeof level === 'number' ? COLOURS[level] : undefined;
    const padded = name.padEnd(5);
    parts.push(options.colours && colour !== undefined ? `\x1b[${colour}m${padded}\x1b[39m` : padded);
  }
  // A message with a line break or control character is quoted: one record stays one line.
  if (msg !== undefined) parts.push(typeof msg === 'string' && !/\p{Cc}/u.test(msg) ? msg : scalar(msg));
  for (const [key, value] of Object.entries(fields)) fieldsOf(key, value, parts);
  return parts.join(' ');
}

/** A pino destination that writes each record to `destination` as a pretty line. */
export function prettyLogStream(
  destination: NodeJS.WritableStream,
  options: { colours: boolean },
): LogDestination {
  let pending = '';
  return {
    write(chunk) {
      pending += chunk;
      let end = pending.indexOf('\n');
      while (end !== -1) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 1);
        if (line !== '') destination.write(`${prettyLine(line, options)}\n`);
        end = pending.indexOf('\n');
      }
    },
  };
}
