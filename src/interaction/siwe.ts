import { randomBytes } from 'node:crypto';
import { getAddress, verifyMessage } from 'viem';
import { createSiweMessage, parseSiweMessage, type SiweMessage } from 'viem/siwe';
import { CofferError } from '../errors.ts';

/**
 * Sign-In with Ethereum (EIP-4361) for the log-in interaction. The interaction hands out a
 * challenge (domain, URI, nonce, times); the browser or a headless client builds the message
 * from it, the wallet signs it with personal_sign (EIP-191), and verifySiweLogin checks both.
 * Only externally owned accounts are verified (ecrecover); contract wallets (ERC-1271) would
 * need a chain connection, which Coffer does not have.
 */

/** Clock difference tolerated between the wallet's idea of "now" and ours. */
export const SIWE_CLOCK_SKEW_MS = 60_000;
/** A signed message older than this is refused even when it names no expiration time. */
export const SIWE_MAX_AGE_MS = 10 * 60_000;
/** Longer messages are refused before parsing; a real one is a few hundred characters. */
const MAX_MESSAGE_LENGTH = 4096;

/** What GET /interaction/{id} shows under `siwe`: the fields a client puts into the message. */
export interface SiweChallenge {
  domain: string;
  uri: string;
  chain_id: number;
  nonce: string;
  issued_at: string;
  expiration_time: string;
  statement: string;
}

/** 128 random bits as 32 hex digits: alphanumeric and ≥ 8 characters, as EIP-4361 requires. */
export function newSiweNonce(): string {
  return randomBytes(16).toString('hex');
}

/** An address no one signs with, to let createSiweMessage validate the other fields. */
const PLACEHOLDER_ADDRESS = '0x0000000000000000000000000000000000000000';

/**
 * The challenge of one interaction. The fields are checked by building a message from them, so
 * a misconfigured domain or statement fails here, not in every person's wallet.
 */
export function buildSiweChallenge(input: {
  domain: string;
  uri: string;
  chainId: number;
  nonce: string;
  issuedAt: Date;
  expirationTime: Date;
  statement: string;
}): SiweChallenge {
  createSiweMessage({ ...input, address: PLACEHOLDER_ADDRESS, version: '1' });
  return {
    domain: input.domain,
    uri: input.uri,
    chain_id: input.chainId,
    nonce: input.nonce,
    issued_at: input.issuedAt.toISOString(),
    expiration_time: input.expirationTime.toISOString(),
    statement: input.statement,
  };
}

export interface SiweExpectation {
  /** The service's host (with port when not the default), as the browser shows it. */
  domain: string;
  /** Any URI of the service; the message's URI must have the same origin. */
  uri: string;
  /** The interaction's nonce. */
  nonce: string;
  now: Date;
  /** When given, the chain ids a message may name. */
  chainIds?: number[];
}

const invalid = (sentence: string) => new CofferError('invalid_request', sentence);

const DATE_LABELS = ['Issued At: ', 'Expiration Time: ', 'Not Before: '];

/**
 * Whether the submitted text is exactly the message that the parsed fields describe. viem's
 * parser is lenient (it skips text it does not recognise), so without this a person could be
 * shown one thing and Coffer accept another. Date-times may be written in any RFC 3339 form,
 * so those lines are compared by instant.
 */
function isCanonical(submitted: string, rebuilt: string): boolean {
  const a = submitted.split('\n');
  const b = rebuilt.split('\n');
  if (a.length !== b.length) return false;
  return a.every((line, i) => {
    const other = b[i]!;
    if (line === other) return true;
    const label = DATE_LABELS.find((l) => line.startsWith(l) && other.startsWith(l));
    return !!label && Date.parse(line.slice(label.length)) === Date.parse(other.slice(label.length));
  });
}

function parse(message: unknown): SiweMessage {
  if (typeof message !== 'string' || message.length === 0 || message.length > MAX_MESSAGE_LENGTH) {
    throw invalid('The message is not a Sign-In with Ethereum (EIP-4361) message.');
  }
  const fields = parseSiweMessage(message);
  if (!fields.domain || !fields.address || !fields.uri || !fields.nonce || fields.chainId === undefined) {
    throw invalid('The message is not a Sign-In with Ethereum (EIP-4361) message.');
  }
  if (fields.version !== '1') throw invalid('The message must have Version 1.');
  for (const [label, date] of [
    ['Issued At', fields.issuedAt],
    ['Expiration Time', fields.expirationTime],
    ['Not Before', fields.notBefore],
  ] as const) {
    if (date && Number.isNaN(date.getTime())) {
      throw invalid(`The message's ${label} is not an RFC 3339 date-time.`);
    }
  }
  if (!fields.issuedAt) throw invalid('The message has no Issued At time.');
  if (fields.address !== getAddress(fields.address)) {
    throw invalid('The address in the message must be written in its EIP-55 mixed-case checksum form.');
  }
  const complete = fields as SiweMessage;
  let rebuilt: string;
  try {
    rebuilt = createSiweMessage(complete);
  } catch {
    throw invalid('The message is not a valid Sign-In with Ethereum (EIP-4361) message.');
  }
  if (!isCanonical(message, rebuilt)) {
    throw invalid(
      'The message contains text that is not part of a Sign-In with Ethereum (EIP-4361) message.',
    );
  }
  return complete;
}

function originOf(uri: string): string | undefined {
  try {
    return new URL(uri).origin;
  } catch {
    return undefined;
  }
}

function checkFields(fields: SiweMessage, expected: SiweExpectation): void {
  if (fields.domain.toLowerCase() !== expected.domain.toLowerCase()) {
    throw invalid(`The message is for ${fields.domain}, not for ${expected.domain}.`);
  }
  // Throws on a misconfigured expectation, which is a bug, not the person's mistake.
  const expectedUrl = new URL(expected.uri);
  if (fields.scheme !== undefined && `${fields.scheme.toLowerCase()}:` !== expectedUrl.protocol) {
    throw invalid(`The message's scheme ${fields.scheme} does not match ${expectedUrl.origin}.`);
  }
  if (originOf(fields.uri) !== expectedUrl.origin) {
    throw invalid(`The message's URI must be on ${expectedUrl.origin}.`);
  }
  if (fields.nonce !== expected.nonce) {
    throw invalid("The message's nonce is not the one this log-in handed out; start again.");
  }
  if (expected.chainIds && !expected.chainIds.includes(fields.chainId)) {
    throw invalid(
      `Chain ID ${fields.chainId} is not accepted here (accepted: ${expected.chainIds.join(', ')}).`,
    );
  }
}

function checkTimes(fields: SiweMessage, now: Date): void {
  const t = now.getTime();
  const issuedAt = fields.issuedAt!.getTime();
  if (issuedAt > t + SIWE_CLOCK_SKEW_MS)
    throw invalid('The message is not valid yet: it was issued in the future.');
  if (fields.notBefore && fields.notBefore.getTime() > t + SIWE_CLOCK_SKEW_MS) {
    throw invalid(`The message is not valid before ${fields.notBefore.toISOString()}.`);
  }
  if (fields.expirationTime && fields.expirationTime.getTime() <= t) {
    throw invalid(`The message expired at ${fields.expirationTime.toISOString()}; start again.`);
  }
  if (issuedAt < t - SIWE_MAX_AGE_MS) {
    throw invalid('The message was issued more than 10 minutes ago; start again.');
  }
}

/**
 * Verifies a signed Sign-In with Ethereum message against what this interaction expects, and
 * returns the signer's address in EIP-55 form. Every refusal says what is wrong.
 */
export async function verifySiweLogin(input: {
  message: unknown;
  signature: unknown;
  expected: SiweExpectation;
}): Promise<{ address: `0x${string}`; chainId: number }> {
  const fields = parse(input.message);
  checkFields(fields, input.expected);
  checkTimes(fields, input.expected.now);

  const { signature } = input;
  if (typeof signature !== 'string' || !/^0x[0-9a-fA-F]{130}$/.test(signature)) {
    throw invalid('The signature must be a 65-byte hexadecimal personal_sign (EIP-191) signature.');
  }
  let signedByAddress: boolean;
  try {
    signedByAddress = await verifyMessage({
      address: fields.address,
      message: input.message as string,
      signature: signature as `0x${string}`,
    });
  } catch {
    throw invalid('The signature is malformed: no signer can be recovered from it.');
  }
  if (!signedByAddress) throw invalid(`The message was not signed by ${fields.address}.`);
  return { address: getAddress(fields.address), chainId: fields.chainId };
}
