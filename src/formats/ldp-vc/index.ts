import type { JsonLdOptions } from '@digitalbazaar/di-sd-primitives';
import { type CredentialFormat, type DcqlInput, rejected } from '../credential-format.ts';
import { expandedTypes } from '../w3c-types.ts';
import type { Bbs2023Operations } from './bbs-2023/operations.ts';
import type { SecuredDocument } from './bbs-2023/shared.ts';
import { checkCredential } from './ldp-vc-rules.ts';
import { ldpStatusReference, summaryOf } from './ldp-vc-summary.ts';
import { discloseForVerifier, signPresentation } from './presentation.ts';
import { createLdpPresentationVerifier } from './verify-presentation.ts';

type Document = Record<string, unknown>;

/**
 * Whether a verifier's `vp_formats_supported.ldp_vc` takes a bbs-2023 credential, and, when the
 * presentation is signed by the holder, an eddsa-rdfc-2022 presentation (§B.1.3.2.3).
 */
export function acceptsDataIntegrity(parameters: Record<string, unknown>, holderBinding: boolean): boolean {
  const proofTypes = parameters['proof_type_values'];
  if (Array.isArray(proofTypes) && !proofTypes.includes('DataIntegrityProof')) return false;
  const suites = parameters['cryptosuite_values'];
  if (!Array.isArray(suites)) return true;
  return suites.includes('bbs-2023') && (!holderBinding || suites.includes('eddsa-rdfc-2022'));
}

/**
 * W3C VC Data Model 2.0 credentials secured with bbs-2023 (`ldp_vc`): stored as the JSON object,
 * presented as a bbs-2023 derived credential in a VP signed by the holder key.
 */
export function createLdpVcFormat(deps: {
  operations: Bbs2023Operations;
  jsonLd: JsonLdOptions;
}): CredentialFormat {
  return {
    id: 'ldp_vc',
    shape: 'json-object',
    disclosesEverything: false,
    recognises: (value) => value !== null && typeof value === 'object' && !Array.isArray(value),
    parse(value, context) {
      const checked = checkCredential(value as Document, context.now);
      return {
        summary: summaryOf(value as Document),
        holder: { kind: 'did', did: checked.subject },
        stored: value,
        async verify() {
          const result = await deps.operations.verifyBaseProof(
            checked.document,
            checked.issuerKey.publicKey,
            {
              prepare: true,
            },
          );
          if (!result.ok) throw rejected(result.reason);
          return { prepared: result.prepared };
        },
      };
    },
    summarize: (stored) => summaryOf(stored as Document),
    listEntry: (stored) => ({
      ...(stored as Document),
      credentialStatus: (stored as Document)['credentialStatus'] ?? null,
    }),
    async dcqlInput(stored, summary): Promise<DcqlInput> {
      return {
        credential_format: 'ldp_vc',
        type: await expandedTypes(stored as Document, deps.jsonLd),
        claims: summary.claims,
      };
    },
    verifierCanVerify: (_stored, parameters, holderBinding) =>
      parameters !== undefined && acceptsDataIntegrity(parameters, holderBinding),
    async present({ stored, disclosed, holder, audience, prepared }) {
      const derived = await discloseForVerifier(
        stored as SecuredDocument,
        disclosed,
        deps.operations,
        prepared,
      );
      return holder ? signPresentation(derived, holder, audience, deps.jsonLd) : derived;
    },
    statusReference: (stored) => ldpStatusReference(stored as Document),
    verifyPresentation: createLdpPresentationVerifier(deps),
  };
}
