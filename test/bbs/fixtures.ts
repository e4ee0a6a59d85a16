/** The IETF BBS fixtures (BLS12-381-SHA-256), read from ../shared/vectors/ and never copied. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const projectRoot = path.resolve(import.meta.dirname, '../..');
export const FIXTURE_DIR = path.resolve(projectRoot, '../shared/vectors/ietf-bbs-bls12-381-sha-256');

export function readFixture<T>(name: string): T {
  return JSON.parse(readFileSync(path.join(FIXTURE_DIR, name), 'utf8')) as T;
}

/** The fixture files of one folder (signature/ or proof/), sorted by name. */
export function fixtureNames(folder: string): string[] {
  return readdirSync(path.join(FIXTURE_DIR, folder))
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => `${folder}/${name}`);
}

export const hex = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text, 'hex'));
export const toHex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

export interface FixtureResult {
  valid: boolean;
  reason?: string;
}

export interface SignatureFixture {
  caseName: string;
  signerKeyPair: { secretKey: string; publicKey: string };
  header: string;
  messages: string[];
  signature: string;
  result: FixtureResult;
  trace: { B: string; domain: string };
}

export interface ProofFixture {
  caseName: string;
  signerPublicKey: string;
  signature: string;
  header: string;
  presentationHeader: string;
  messages: string[];
  disclosedIndexes: number[];
  proof: string;
  result: FixtureResult;
  trace: {
    random_scalars: {
      r1: string;
      r2: string;
      e_tilde: string;
      r1_tilde: string;
      r3_tilde: string;
      m_tilde_scalars: string[];
    };
    A_bar: string;
    B_bar: string;
    D: string;
    T1: string;
    T2: string;
    domain: string;
    challenge: string;
  };
}

export interface MockedRngFixture {
  seed: string;
  dst: string;
  count: number;
  mockedScalars: string[];
}
