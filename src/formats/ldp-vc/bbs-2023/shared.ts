/** A JSON-LD document with a Data Integrity proof. */
export interface SecuredDocument {
  '@context': unknown;
  proof: {
    type?: unknown;
    cryptosuite?: unknown;
    proofValue?: unknown;
    verificationMethod?: unknown;
    proofPurpose?: unknown;
    [option: string]: unknown;
  };
  [property: string]: unknown;
}

/** The outcome of a proof check: a failure says, for a person, what did not hold. */
export type ProofCheck = { ok: true } | { ok: false; reason: string };

export const proofFailure = (reason: string): { ok: false; reason: string } => ({ ok: false, reason });

export const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

/** The document without its proof: what the proof secures. */
export function unsecured(document: SecuredDocument): Record<string, unknown> {
  const { proof: _proof, ...rest } = document;
  return rest;
}
