/**
 * Types for the Digital Bazaar JSON-LD and Data Integrity packages, which ship none: only what
 * Coffer calls, as the packages' own documentation and code define it.
 */

declare module '@digitalbazaar/di-sd-primitives' {
  export type LabelMap = Map<string, string>;
  export type LabelMapFactory = (args: { canonicalIdMap: LabelMap }) => Promise<LabelMap>;
  export interface JsonLdOptions {
    documentLoader: (url: string) => Promise<unknown>;
    [option: string]: unknown;
  }
  export interface Group {
    matching: Map<number, string>;
    nonMatching: Map<number, string>;
    deskolemizedNQuads: string[];
  }
  export function canonicalize(
    input: unknown,
    options: JsonLdOptions & Record<string, unknown>,
  ): Promise<string>;
  export function canonicalizeAndGroup<G extends string>(args: {
    document: object;
    labelMapFactoryFunction: LabelMapFactory;
    groups: Record<G, string[]>;
    options: JsonLdOptions;
  }): Promise<{
    groups: Record<G, Group>;
    labelMap: LabelMap;
    nquads: string[];
    skolemized: { expanded: unknown[]; compact: Record<string, unknown> };
  }>;
  export function selectCanonicalNQuads(args: {
    document: object;
    pointers: string[];
    labelMap: LabelMap;
    options: JsonLdOptions;
  }): Promise<{ selection: object | null; deskolemizedNQuads: string[]; nquads: string[] }>;
  export function createLabelMapFunction(args: { labelMap: LabelMap }): LabelMapFactory;
  export function hashCanonizedProof(args: {
    document: object;
    proof: object;
    options: JsonLdOptions;
  }): Promise<Uint8Array>;
  export function hashMandatory(args: { mandatory: string[] }): Promise<{ mandatoryHash: Uint8Array }>;
  export function labelReplacementCanonicalizeJsonLd(args: {
    document: object;
    labelMapFactoryFunction: LabelMapFactory;
    options: JsonLdOptions;
  }): Promise<string[]>;
  export function selectJsonLd(args: {
    document: object;
    pointers: string[];
  }): Record<string, unknown> | null;
  export function stripBlankNodePrefixes(map: LabelMap): LabelMap;
  export function parsePointer(pointer: string): Array<string | number>;
}

declare module '@digitalbazaar/credentials-context' {
  export const contexts: Map<string, object>;
}
declare module '@digitalbazaar/data-integrity-context' {
  const module: { contexts: Map<string, object> };
  export default module;
}
declare module '@digitalbazaar/multikey-context' {
  const module: { contexts: Map<string, object> };
  export default module;
}
declare module 'did-context' {
  const module: { contexts: Map<string, object> };
  export default module;
}

declare module 'jsonld' {
  interface Options {
    documentLoader?: (url: string) => Promise<unknown>;
    safe?: boolean;
    [option: string]: unknown;
  }
  const jsonld: {
    expand(input: unknown, options?: Options): Promise<unknown[]>;
  };
  export default jsonld;
}

declare module '@digitalbazaar/ed25519-multikey' {
  export interface Ed25519KeyPair {
    id?: string;
    controller?: string;
    signer(): { id: string; algorithm: string; sign(args: { data: Uint8Array }): Promise<Uint8Array> };
  }
  export function fromJwk(args: {
    jwk: Record<string, unknown>;
    secretKey?: boolean;
    id?: string;
    controller?: string;
  }): Promise<Ed25519KeyPair>;
}

declare module '@digitalbazaar/eddsa-rdfc-2022-cryptosuite' {
  export const cryptosuite: object;
}

declare module '@digitalbazaar/data-integrity' {
  export class DataIntegrityProof {
    constructor(options: { signer?: object; cryptosuite: object; date?: Date | string });
  }
}

declare module 'jsonld-signatures' {
  class AuthenticationProofPurpose {
    constructor(options: { challenge: string; domain?: string });
  }
  /** A purpose whose verification method its controller document lists under `term`. */
  class ControllerProofPurpose {
    constructor(options: { term: string; controller?: object });
  }
  const jsigs: {
    sign<T extends object>(
      document: T,
      options: { suite: object; purpose: object; documentLoader: (url: string) => Promise<unknown> },
    ): Promise<T & { proof: Record<string, unknown> }>;
    /** Never throws: `error` is a VerificationError (its `errors`) or the errors of each proof. */
    verify(
      document: object,
      options: {
        suite: object | object[];
        purpose: object;
        documentLoader: (url: string) => Promise<unknown>;
      },
    ): Promise<{ verified: boolean; error?: unknown }>;
    purposes: {
      AuthenticationProofPurpose: typeof AuthenticationProofPurpose;
      ControllerProofPurpose: typeof ControllerProofPurpose;
    };
  };
  export default jsigs;
}
