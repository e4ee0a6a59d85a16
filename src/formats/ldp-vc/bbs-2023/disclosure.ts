import {
  canonicalize,
  canonicalizeAndGroup,
  selectCanonicalNQuads,
  selectJsonLd,
  stripBlankNodePrefixes,
} from '@digitalbazaar/di-sd-primitives';
import type { Bbs2023Deps } from './base-proof.ts';
import { shuffledLabelMapFunction } from './label-map.ts';
import { type PreparedStatements, preparedFor } from './prepared-statements.ts';
import { type BaseProofValue, parseBaseProofValue, serializeDerivedProofValue } from './proof-value.ts';
import { type SecuredDocument, unsecured, utf8 } from './shared.ts';

/** Everything a disclosure needs except the (randomised) BBS proof; deterministic. */
export interface DisclosurePlan {
  base: BaseProofValue;
  /** The reveal document: the selected parts of the credential, without proof. */
  revealDocument: Record<string, unknown>;
  /** The signed messages (non-mandatory statements), as BBS takes them. */
  bbsMessages: Uint8Array[];
  /** Which of bbsMessages are disclosed (indexes into the non-mandatory statements). */
  selectiveIndexes: number[];
  /** Where the mandatory statements sit among the disclosed ones. */
  mandatoryIndexes: number[];
  /** Indexes, in the base proof's canonical statement order, of every disclosed statement. */
  revealedIndexes: number[];
  /** Verifier's canonical labels → the HMAC labels of the base proof. */
  verifierLabelMap: Map<string, string>;
}

type GroupName = 'mandatory' | 'selective' | 'combined';
type Grouping = Pick<Awaited<ReturnType<typeof canonicalizeAndGroup<GroupName>>>, 'groups' | 'labelMap'>;

/**
 * canonicalizeAndGroup's result from the statements prepared when the base proof was checked:
 * only the selective and combined selections are turned into N-Quads, the whole credential is
 * not canonicalised again. The steps and the matching are the library's (group.js, 4 and 5).
 */
async function groupPrepared(
  prepared: PreparedStatements,
  pointers: Record<GroupName, string[]>,
  jsonLd: Bbs2023Deps['jsonLd'],
): Promise<Grouping> {
  const labelMap = new Map(prepared.labelMap);
  const select = (selected: string[]) =>
    selectCanonicalNQuads({ document: prepared.skolemized, pointers: selected, labelMap, options: jsonLd });
  const [selective, combined] = await Promise.all([select(pointers.selective), select(pointers.combined)]);
  const group = (isSelected: (statement: string, index: number) => boolean, deskolemizedNQuads: string[]) => {
    const matching = new Map<number, string>();
    const nonMatching = new Map<number, string>();
    prepared.nquads.forEach((statement, index) => {
      (isSelected(statement, index) ? matching : nonMatching).set(index, statement);
    });
    return { matching, nonMatching, deskolemizedNQuads };
  };
  const mandatoryIndexes = new Set(prepared.mandatoryIndexes);
  const inSelection = (nquads: string[]) => {
    const set = new Set(nquads);
    return (statement: string) => set.has(statement);
  };
  return {
    labelMap,
    groups: {
      mandatory: group((_, index) => mandatoryIndexes.has(index), []),
      selective: group(inSelection(selective.nquads), selective.deskolemizedNQuads),
      combined: group(inSelection(combined.nquads), combined.deskolemizedNQuads),
    },
  };
}

/**
 * bbs-2023 createDisclosureData (§3.3.3) up to the BBS proof: groups the statements by the
 * mandatory, selective and combined pointers, and works out the indexes and label map a
 * verifier needs to rebuild the signed statements from the reveal document. With the statements
 * prepared when the base proof was checked, the credential is not canonicalised again.
 */
export async function planDisclosure(
  document: SecuredDocument,
  selectivePointers: string[],
  deps: Pick<Bbs2023Deps, 'jsonLd'>,
  prepared?: PreparedStatements,
): Promise<DisclosurePlan> {
  const base = parseBaseProofValue(document.proof.proofValue);
  const credential = unsecured(document);
  const combinedPointers = [...base.mandatoryPointers, ...selectivePointers];
  if (combinedPointers.length === 0) throw new TypeError('nothing is selected for disclosure');
  const pointers = {
    mandatory: base.mandatoryPointers,
    selective: selectivePointers,
    combined: combinedPointers,
  };
  const { groups, labelMap } = prepared
    ? await groupPrepared(prepared, pointers, deps.jsonLd)
    : await canonicalizeAndGroup({
        document: credential,
        labelMapFactoryFunction: shuffledLabelMapFunction(base.hmacKey),
        groups: pointers,
        options: deps.jsonLd,
      });
  const { mandatory, selective, combined } = groups;

  const revealedIndexes = [...combined.matching.keys()];
  const mandatoryIndexes = revealedIndexes.flatMap((index, relative) =>
    mandatory.matching.has(index) ? [relative] : [],
  );
  const selectiveIndexes = [...mandatory.nonMatching.keys()].flatMap((index, relative) =>
    selective.matching.has(index) ? [relative] : [],
  );

  // The labels a verifier will see are the canonical labels of the revealed statements alone.
  const canonicalIdMap = new Map<string, string>();
  await canonicalize(combined.deskolemizedNQuads.join(''), {
    ...deps.jsonLd,
    inputFormat: 'application/n-quads',
    canonicalIdMap,
  });
  const verifierLabelMap = new Map<string, string>();
  for (const [input, verifierLabel] of stripBlankNodePrefixes(canonicalIdMap)) {
    verifierLabelMap.set(verifierLabel, labelMap.get(input)!);
  }

  return {
    base,
    revealDocument: selectJsonLd({ document: credential, pointers: combinedPointers })!,
    bbsMessages: [...mandatory.nonMatching.values()].map(utf8),
    selectiveIndexes,
    mandatoryIndexes,
    revealedIndexes,
    verifierLabelMap,
  };
}

export interface Disclosure {
  /** The derived credential: the reveal document with a derived bbs-2023 proof. */
  credential: SecuredDocument;
  /** The issuer's mandatory pointers, revealed in every disclosure. */
  mandatoryPointers: string[];
  revealedIndexes: number[];
}

/**
 * Derives a selective disclosure (§3.4.6 "Add Derived Proof") revealing the mandatory
 * statements and those the selective pointers name, bound to the presentation header. Statements
 * prepared for this credential's proof (prepared-statements.ts) make it cheaper, not different.
 */
export async function deriveDisclosure(
  document: SecuredDocument,
  selectivePointers: string[],
  presentationHeader: Uint8Array,
  deps: Bbs2023Deps,
  preparedStatements?: unknown,
): Promise<Disclosure> {
  const prepared = preparedFor(document.proof.proofValue, preparedStatements);
  const plan = await planDisclosure(document, selectivePointers, deps, prepared);
  const bbsProof = await deps.bbs.deriveProof({
    ...(prepared ? { signatureBase: new Uint8Array(Buffer.from(prepared.signatureBase, 'base64url')) } : {}),
    publicKey: plan.base.publicKey,
    signature: plan.base.bbsSignature,
    header: plan.base.bbsHeader,
    messages: plan.bbsMessages,
    presentationHeader,
    disclosedMessageIndexes: plan.selectiveIndexes,
  });
  const { '@context': _context, ...proofOptions } = document.proof;
  const proofValue = serializeDerivedProofValue({
    bbsProof,
    labelMap: plan.verifierLabelMap,
    mandatoryIndexes: plan.mandatoryIndexes,
    selectiveIndexes: plan.selectiveIndexes,
    presentationHeader,
  });
  return {
    credential: { ...plan.revealDocument, proof: { ...proofOptions, proofValue } } as SecuredDocument,
    mandatoryPointers: plan.base.mandatoryPointers,
    revealedIndexes: plan.revealedIndexes,
  };
}
