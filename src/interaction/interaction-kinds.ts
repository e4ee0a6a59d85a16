import type { FastifyReply } from 'fastify';
import type { InteractionKind as InteractionKindName } from '../db/schema.ts';
import type { SameSite } from '../http/cookies.ts';
import type { InteractionRow } from './interaction-repository.ts';
import type { SiweChallenge } from './siwe.ts';

export type { InteractionKindName };

/**
 * One interaction mechanism serves every person-facing flow (DESIGN.md, Logging in): an app's
 * log-in, a verifier's presentation request, a credential offer, a sign-out confirmation, the
 * wallet page's log-in. The core (this folder) keeps the rows, the log-in methods, the sessions
 * and the page chrome; each flow registers a kind saying what it shows, how it renders, what a
 * proven identity leads to and what the person's answer does. This folder imports no flow.
 */
export interface InteractionKind {
  readonly name: InteractionKindName;
  /**
   * True when the person logs in to the client's tenant (an app's log-in: signed up there when
   * unknown); false when they prove an identity that every account of the wallet shares.
   */
  readonly tenantLogin: boolean;
  /** Who asks, as the log-in part and the JSON view's `client` show it. */
  asker(row: InteractionRow): Promise<Asker>;
  /** What proving who one is leads to; absent where nobody logs in (a sign-out confirmation). */
  logIn?(row: InteractionRow, proof: LoginProof): Promise<FinishedLogin>;
  /** Members the JSON view adds for this kind (`consent`, `issuance`). */
  describe?(id: string): Promise<Record<string, unknown>>;
  /** The HTML page; the kind starts the page (CSP) on the reply itself. */
  render(view: InteractionView, reply: FastifyReply): Promise<string>;
  /** The person's answer, taken at `POST /interaction/{id}/{answer.at}`. */
  answer?: {
    at: 'consent' | 'logout';
    decide(row: InteractionRow, body: Record<string, unknown>): Promise<InteractionAnswer>;
  };
}

/** Who asks: the client, the verifier, the credential issuer (client_id null when not a client). */
export interface Asker {
  client_id: number | null;
  name: string;
  privacy_link: string | null;
}

/**
 * What a person proved in a log-in step. A method added later adds its own member and reaches
 * the kind through `completeLogIn`: `credential` is a verified presentation from a wallet whose
 * claim named the account's e-mail, with the claims it disclosed (ExtraLoginMethod below).
 */
export type LoginProof =
  | { method: 'wallet'; address: string; chainId: number }
  | { method: 'email'; email: string }
  | { method: 'credential'; email: string; claims: Record<string, unknown> };

export type LoginType = LoginProof['method'];

/** What the JSON view of `GET /interaction/{id}` holds for every kind. */
export interface InteractionView {
  id: string;
  kind: InteractionKindName;
  client: Asker;
  methods: string[];
  siwe: SiweChallenge;
  csrf_token: string;
  email_code_sent: boolean;
  /** For a consent or an offer: whether the person has proved who they are in it. */
  logged_in: boolean;
}

export interface FinishedLogin {
  /** Where the browser goes: back to the client with a code. Absent when the consent comes next. */
  redirectTo?: string;
  next?: 'consent';
  /** The session cookie's value; only its hash is stored. Absent when no account was found. */
  sessionId?: string;
  sessionMaxAgeSeconds: number;
  /** A session of its own (the console's) rather than the person's `coffer_session`. */
  cookie?: { name: string; sameSite: SameSite };
}

/** The body of an answer: where to go next; `endSession` also ends the browser's session. */
export interface InteractionAnswer {
  redirect_to?: string;
  next?: string;
  endSession?: boolean;
  [member: string]: unknown;
}

/** The log-in methods that a flow above this core provides; the core carries requests to them. */
export type ExtraLoginMethodName = 'credential';
export const EXTRA_LOGIN_METHODS: readonly ExtraLoginMethodName[] = ['credential'];

/**
 * A log-in method this core does not implement itself (a credential presented from a wallet,
 * made by the verifier): registered in app.ts, offered where it says so, and reached at
 * `POST /interaction/{id}/login/{name}` (start) and `…/{name}/check` (where it stands).
 */
export interface ExtraLoginMethod {
  readonly name: ExtraLoginMethodName;
  /** Whether this interaction's log-in page offers the method. */
  offeredFor(row: InteractionRow): Promise<boolean>;
  /** The person starts it: what the page shows (a QR code, a link). Called again, it may answer the same. */
  start(row: InteractionRow): Promise<Record<string, unknown>>;
  /** Still waiting (with a status word), or proven; a refusal throws a CofferError with a sentence. */
  check(row: InteractionRow): Promise<{ pending: string } | { proof: LoginProof }>;
}

/** The kinds an instance serves, registered at start (src/app.ts). */
export interface InteractionKinds {
  register(kind: InteractionKind): void;
  /** The kind of a row; a kind nobody registered is "gone" to the person, like an unknown row. */
  of(row: InteractionRow): InteractionKind | undefined;
}

export function createInteractionKinds(): InteractionKinds {
  const kinds = new Map<InteractionKindName, InteractionKind>();
  return {
    register(kind) {
      if (kinds.has(kind.name)) throw new Error(`interaction kind ${kind.name} is registered twice`);
      kinds.set(kind.name, kind);
    },
    of: (row) => kinds.get(row.kind),
  };
}
