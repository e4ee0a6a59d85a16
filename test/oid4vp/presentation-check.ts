import { createVerifyCryptosuite } from '@digitalbazaar/bbs-2023-cryptosuite';
import { DataIntegrityProof } from '@digitalbazaar/data-integrity';
import { cryptosuite as eddsaRdfc2022 } from '@digitalbazaar/eddsa-rdfc-2022-cryptosuite';
import * as vc from '@digitalbazaar/vc';
import { stockDocumentLoader } from '../credentials/stock-issuer.ts';

/**
 * What a verifier checks in an ldp_vc vp_token (OpenID4VP §8.6, §B.1.3.2.5) with the stock Digital
 * Bazaar stack: the holder's eddsa-rdfc-2022 proof over the presentation with challenge = nonce and
 * domain = client_id, the bbs-2023 derived proof of each credential, holder binding, and that
 * each credentialSubject discloses exactly the requested claims.
 */

// biome-ignore lint/suspicious/noExplicitAny: presentations are arbitrary JSON-LD
type Json = any;

export interface Expectation {
  nonce: string;
  clientId: string;
  /** Per DCQL query id, per presentation: the credentialSubject claims it must disclose (besides id). */
  claims: Record<string, string[][]>;
  /** Query ids asked with require_cryptographic_holder_binding false: bare derived credentials. */
  withoutHolderBinding?: string[];
}

export interface CheckedPresentation {
  queryId: string;
  /** The presentation's holder; null for a credential presented without holder binding. */
  holder: string | null;
  credentialId: string;
  subject: Record<string, unknown>;
}

const documentLoader = stockDocumentLoader();

function reasons(result: Json): string {
  // jsonld-signatures wraps the reasons in a VerificationError's `errors`.
  const errors = [result.error, ...(result.credentialResults ?? []).map((r: Json) => r.error)]
    .filter(Boolean)
    .flatMap((e: Json) => (Array.isArray(e.errors) ? e.errors : [e]))
    .map((e: Json) => e.message ?? String(e));
  return errors.join('; ') || 'no reason given';
}

/** A bbs-2023 derived credential that discloses exactly the claims asked for. */
function checkDerived(credential: Json, claims: string[], where: string): Record<string, unknown> {
  if (
    credential.proof?.cryptosuite !== 'bbs-2023' ||
    !String(credential.proof.proofValue).startsWith('u2V0D')
  ) {
    throw new Error(`${where}: the credential is not a bbs-2023 derived credential`);
  }
  if ('revealedPointers' in credential.proof || 'revealedIndices' in credential.proof) {
    throw new Error(`${where}: the proof carries Coffer's API annotations`);
  }
  const subject = credential.credentialSubject;
  const disclosed = Object.keys(subject ?? {})
    .filter((k) => k !== 'id')
    .sort();
  if (JSON.stringify(disclosed) !== JSON.stringify([...claims].sort())) {
    throw new Error(`${where} discloses ${disclosed.join(', ') || 'nothing'}; asked ${claims.join(', ')}`);
  }
  return subject;
}

/** Without holder binding (§5.3): the derived credential itself, not a presentation. */
async function checkBareCredential(
  credential: Json,
  claims: string[],
  where: string,
): Promise<Omit<CheckedPresentation, 'queryId'>> {
  if (credential.type?.includes?.('VerifiablePresentation')) {
    throw new Error(`${where} is a presentation where a credential was expected`);
  }
  const suite = new DataIntegrityProof({ cryptosuite: createVerifyCryptosuite() });
  const result = await vc.verifyCredential({ credential, suite, documentLoader });
  if (!result.verified) throw new Error(`${where} does not verify: ${reasons(result)}`);
  const subject = checkDerived(credential, claims, where);
  return { holder: null, credentialId: credential.id, subject };
}

async function checkPresentation(
  presentation: Json,
  expected: Expectation,
  claims: string[],
  where: string,
): Promise<Omit<CheckedPresentation, 'queryId'>> {
  const suite = [
    new DataIntegrityProof({ cryptosuite: eddsaRdfc2022 }),
    new DataIntegrityProof({ cryptosuite: createVerifyCryptosuite() }),
  ];
  const result = await vc.verify({
    presentation,
    challenge: expected.nonce,
    domain: expected.clientId,
    suite,
    documentLoader,
  });
  if (!result.verified) throw new Error(`${where} does not verify: ${reasons(result)}`);
  const proof = presentation.proof;
  if (proof?.cryptosuite !== 'eddsa-rdfc-2022' || proof.proofPurpose !== 'authentication') {
    throw new Error(`${where} is not an eddsa-rdfc-2022 authentication proof`);
  }
  if (proof.challenge !== expected.nonce || proof.domain !== expected.clientId) {
    throw new Error(`${where} is bound to ${proof.challenge} / ${proof.domain}`);
  }
  const holder = presentation.holder;
  if (typeof holder !== 'string' || !String(proof.verificationMethod).startsWith(`${holder}#`)) {
    throw new Error(`${where} is not signed by its holder`);
  }
  const credentials = presentation.verifiableCredential;
  if (!Array.isArray(credentials) || credentials.length !== 1) {
    throw new Error(`${where} must carry exactly one credential`);
  }
  const [credential] = credentials;
  const subject = checkDerived(credential, claims, where);
  if (subject['id'] !== holder) throw new Error(`${where}: the credential's subject is not the holder`);
  return { holder, credentialId: credential.id, subject };
}

/** Checks a whole vp_token against what was asked; throws on the first problem. */
export async function checkVpToken(
  vpToken: Record<string, unknown[]> | null,
  expected: Expectation,
): Promise<CheckedPresentation[]> {
  if (!vpToken) throw new Error('no vp_token');
  const ids = Object.keys(vpToken).sort();
  const wanted = Object.keys(expected.claims).sort();
  if (JSON.stringify(ids) !== JSON.stringify(wanted)) {
    throw new Error(`vp_token answers ${ids.join(', ')}; expected ${wanted.join(', ')}`);
  }
  const checked: CheckedPresentation[] = [];
  for (const id of ids) {
    const presentations = vpToken[id]!;
    const claims = expected.claims[id]!;
    if (presentations.length !== claims.length) {
      throw new Error(`vp_token.${id} has ${presentations.length} presentations; expected ${claims.length}`);
    }
    for (const [i, presentation] of presentations.entries()) {
      const where = `vp_token.${id}[${i}]`;
      const result = expected.withoutHolderBinding?.includes(id)
        ? await checkBareCredential(presentation, claims[i]!, where)
        : await checkPresentation(presentation, expected, claims[i]!, where);
      checked.push({ queryId: id, ...result });
    }
  }
  return checked;
}
