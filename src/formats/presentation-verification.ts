import type {
  DcqlInput,
  NamedCheck,
  PresentationExpectation,
  VerifiedPresentation,
} from './credential-format.ts';
import { authorityOfChain } from './jose-credentials.ts';

export type {
  CheckName,
  NamedCheck,
  PresentationExpectation,
  VerifiedPresentation,
} from './credential-format.ts';

/**
 * The verifier side of a format (OpenID4VP 1.0 §8.6, §14.1, Appendix B): what one presentation
 * in a `vp_token` is checked against, and every check's outcome by a stable name, so that a
 * result says what passed and what failed. The verifier (src/verifier/) adds the checks that
 * span presentations: DCQL satisfaction and status.
 */

/** Builds a result from the checks run so far; the first failing check ends a format's work. */
export function presentationResult(
  checks: NamedCheck[],
  rest: Omit<VerifiedPresentation, 'ok' | 'checks'>,
): VerifiedPresentation {
  return { ok: checks.every((check) => check.ok), checks, ...rest };
}

/** Whether a DID is one of the trusted issuer DIDs. */
export const trustedDid = (did: string, expected: PresentationExpectation) =>
  expected.trustedIssuerDids.includes(did);

/**
 * The DCQL input of a presented credential with the authority key identifiers of its chain, so
 * that a query's `trusted_authorities` (§6.1.1) is judged on the verifier side as the wallet does.
 */
export function withAuthority(input: DcqlInput, chain: Uint8Array[] | null): DcqlInput {
  const authority = chain ? authorityOfChain(chain) : undefined;
  return authority ? { ...input, authority } : input;
}
