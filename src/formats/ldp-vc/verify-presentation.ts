import { DataIntegrityProof } from '@digitalbazaar/data-integrity';
import type { JsonLdOptions } from '@digitalbazaar/di-sd-primitives';
import { cryptosuite as eddsaRdfc2022 } from '@digitalbazaar/eddsa-rdfc-2022-cryptosuite';
import jsonld from 'jsonld';
import jsigs from 'jsonld-signatures';
import { DidResolutionError, resolveDidKey } from '../did-resolution.ts';
import {
  type NamedCheck,
  type PresentationExpectation,
  presentationResult,
  trustedDid,
  type VerifiedPresentation,
} from '../presentation-verification.ts';
import { expandedTypes } from '../w3c-types.ts';
import type { Bbs2023Operations } from './bbs-2023/operations.ts';
import { ProofValueError, parseDerivedProofValue } from './bbs-2023/proof-value.ts';
import type { SecuredDocument } from './bbs-2023/shared.ts';
import { describeJsonLdError } from './contexts/jsonld-errors.ts';
import { IssuerKeyError, resolveIssuerKey } from './issuer-key.ts';
import { dateTimeOf, VC_V2_CONTEXT } from './ldp-vc-rules.ts';
import { issuerOf, ldpStatusReference, summaryOf } from './ldp-vc-summary.ts';

/**
 * The verifier side of `ldp_vc` (OpenID4VP 1.0 §8.6, B.1.3.2; DESIGN.md, Verifying
 * presentations): one vp_token entry, a Verifiable Presentation of one bbs-2023 derived
 * credential that the holder's did:key signs with eddsa-rdfc-2022 (challenge = nonce,
 * domain = client_id), or, where the query does not ask for holder binding, the derived credential
 * itself, as Coffer's own wallet sends it (presentation.ts).
 */

type Json = Record<string, unknown>;

export type LdpPresentationVerifier = (
  presented: unknown,
  expected: PresentationExpectation,
) => Promise<VerifiedPresentation>;

const MULTIKEY_CONTEXT = 'https://w3id.org/security/multikey/v1';

const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
const valuesOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);
const idOf = (value: unknown): unknown => (isObject(value) ? value['id'] : value);
/** A value quoted for a sentence, long enough for a did:key of BLS12-381 but bounded. */
const quoted = (value: unknown) => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 300 ? `${text.slice(0, 297)}...` : text;
};

/** A check that did not pass; its detail is one sentence for the tenant's developers. */
class CheckFailure extends Error {
  override readonly name = 'CheckFailure';
}
function fail(detail: string): never {
  throw new CheckFailure(detail);
}

/** What a failure in a library says, as the end of a sentence. */
function reasonOf(error: unknown): string {
  const jsonLd = describeJsonLdError(error);
  if (jsonLd) return jsonLd;
  const message = error instanceof Error ? error.message : String(error);
  return `it could not be checked (${message.slice(0, 200)})`;
}

interface ReadPresentation {
  /** The VP; null for a bare derived credential (no holder binding asked). */
  presentation: Json | null;
  credential: SecuredDocument;
}

/** The `format` check's reading: a VP of one credential, or a bare credential where allowed. */
function readPresented(presented: unknown, holderBinding: boolean): ReadPresentation {
  if (!isObject(presented)) fail('The presentation is not a JSON object.');
  const document = presented as Json;
  const types = valuesOf(document['type']);
  if (types.includes('VerifiablePresentation')) {
    if (valuesOf(document['@context'])[0] !== VC_V2_CONTEXT) {
      fail(`The presentation's first @context is not ${VC_V2_CONTEXT}.`);
    }
    const credentials = valuesOf(document['verifiableCredential']);
    if (credentials.length !== 1 || !isObject(credentials[0])) {
      fail('The presentation does not carry exactly one credential.');
    }
    return { presentation: document, credential: readCredential(credentials[0] as Json) };
  }
  if (types.includes('VerifiableCredential')) {
    if (holderBinding) {
      fail('A bare credential was sent, but the query asks for a presentation signed by the holder.');
    }
    return { presentation: null, credential: readCredential(document) };
  }
  return fail('The presentation is neither a VerifiablePresentation nor a VerifiableCredential.');
}

function readCredential(credential: Json): SecuredDocument {
  if (valuesOf(credential['@context'])[0] !== VC_V2_CONTEXT) {
    fail(
      `The credential is not a VC Data Model 2.0 credential (its first @context must be ${VC_V2_CONTEXT}).`,
    );
  }
  if (!valuesOf(credential['type']).includes('VerifiableCredential')) {
    fail("The credential's type does not include VerifiableCredential.");
  }
  if (typeof idOf(credential['issuer']) !== 'string') fail('The credential names no issuer.');
  if (!isObject(credential['proof'])) fail('The credential has no single proof.');
  return credential as SecuredDocument;
}

/**
 * The bbs-2023 derived proof with Coffer's own verifier, by a key the issuer controls. The
 * presentation header is whatever the wallet chose: OpenID4VP defines none for ldp_vc, and the
 * holder's signature over the presentation is what binds it to this request.
 */
async function checkIssuerSignature(credential: SecuredDocument, operations: Bbs2023Operations) {
  const proof = credential.proof;
  if (proof.type !== 'DataIntegrityProof' || proof.cryptosuite !== 'bbs-2023') {
    fail("The credential's proof is not a bbs-2023 DataIntegrityProof.");
  }
  if (proof.proofPurpose !== 'assertionMethod')
    fail("The credential's proof purpose is not assertionMethod.");
  let key: ReturnType<typeof resolveIssuerKey>;
  try {
    key = resolveIssuerKey(proof.verificationMethod);
  } catch (error) {
    if (error instanceof IssuerKeyError)
      fail(`The credential's issuer key cannot be used: ${error.message}.`);
    throw error;
  }
  let header: Uint8Array;
  try {
    header = parseDerivedProofValue(proof.proofValue).presentationHeader;
  } catch (error) {
    if (error instanceof ProofValueError) {
      fail(`The credential's proof is not a bbs-2023 derived proof: ${error.message}.`);
    }
    throw error;
  }
  const verified = await operations.verifyDerivedProof(credential, key.publicKey, header);
  if (!verified.ok) fail(`The credential's derived proof was refused: ${verified.reason}.`);
  const issuer = issuerOf(credential);
  if (key.controller !== issuer) {
    fail(
      `The credential's proof verifies with a key of ${key.controller}, which is not its issuer ${quoted(issuer)}.`,
    );
  }
}

function checkValidity(credential: Json, now: Date) {
  const validFrom = dateTimeOf(credential['validFrom']);
  const validUntil = dateTimeOf(credential['validUntil']);
  if (validFrom === null) fail("The credential's validFrom is not an XML Schema dateTime.");
  if (validUntil === null) fail("The credential's validUntil is not an XML Schema dateTime.");
  if (validFrom && validFrom > now) fail(`The credential is not valid before ${credential['validFrom']}.`);
  if (validUntil && validUntil <= now) fail(`The credential expired at ${credential['validUntil']}.`);
}

/**
 * The holder's eddsa-rdfc-2022 authentication proof over the whole presentation (the credential
 * and the proof's challenge and domain included), by the holder's did:key resolved locally.
 * Challenge and domain are compared with the request afterwards, as checks of their own.
 */
async function checkHolderBinding(presentation: Json, jsonLd: JsonLdOptions) {
  const proof = presentation['proof'];
  if (!isObject(proof)) fail('The presentation has no single proof by its holder.');
  const holderProof = proof as Json;
  if (holderProof['type'] !== 'DataIntegrityProof' || holderProof['cryptosuite'] !== 'eddsa-rdfc-2022') {
    fail("The presentation's proof is not an eddsa-rdfc-2022 DataIntegrityProof.");
  }
  if (holderProof['proofPurpose'] !== 'authentication') {
    fail("The presentation's proof purpose is not authentication.");
  }
  const holder = presentation['holder'];
  if (typeof holder !== 'string' || !holder.startsWith('did:key:')) {
    fail('The presentation names no did:key as its holder.');
  }
  const holderDid = holder as string;
  let publicKeyMultibase: string;
  try {
    const { jwk } = resolveDidKey(holderDid);
    if (jwk.crv !== 'Ed25519')
      fail(`The holder ${holderDid} is not an Ed25519 did:key, which eddsa-rdfc-2022 needs.`);
    publicKeyMultibase = holderDid.slice('did:key:'.length);
  } catch (error) {
    if (error instanceof DidResolutionError) fail(`The holder cannot be resolved: ${error.message}.`);
    throw error;
  }
  const verificationMethodId = `${holderDid}#${publicKeyMultibase}`;
  if (holderProof['verificationMethod'] !== verificationMethodId) {
    fail(
      `The presentation is signed with ${quoted(holderProof['verificationMethod'])}, not with the key of its holder ${holderDid}.`,
    );
  }
  const verificationMethod = {
    '@context': MULTIKEY_CONTEXT,
    id: verificationMethodId,
    type: 'Multikey',
    controller: holderDid,
    publicKeyMultibase,
  };
  // A did:key document authorises its one key for authentication (did:key method, §3.1.2).
  const controller = {
    '@context': 'https://www.w3.org/ns/did/v1',
    id: holderDid,
    authentication: [verificationMethodId],
  };
  const documentLoader = async (url: string) =>
    url === verificationMethodId
      ? { contextUrl: null, documentUrl: url, document: verificationMethod }
      : jsonLd.documentLoader(url);
  const result = await jsigs.verify(presentation, {
    suite: new DataIntegrityProof({ cryptosuite: eddsaRdfc2022 }),
    purpose: new jsigs.purposes.ControllerProofPurpose({ term: 'authentication', controller }),
    documentLoader,
  });
  if (!result.verified) {
    const errors = valuesOf(result.error).flatMap((error) =>
      Array.isArray((error as { errors?: unknown })?.errors)
        ? (error as { errors: unknown[] }).errors
        : [error],
    );
    const jsonLdReason = errors.map(describeJsonLdError).find((reason) => reason !== undefined);
    fail(
      jsonLdReason
        ? `The presentation's proof cannot be checked: ${jsonLdReason}.`
        : `The presentation's proof does not verify with the key of its holder ${holderDid}.`,
    );
  }
}

function checkSubjectBinding(credential: Json, holder: unknown) {
  const subjects = valuesOf(credential['credentialSubject']);
  if (subjects.length !== 1 || !isObject(subjects[0]))
    fail('The credential does not have exactly one subject.');
  const subject = (subjects[0] as Json)['id'];
  if (subject === undefined)
    fail("The credential does not disclose its subject's id, so it cannot be bound to the holder.");
  if (subject !== holder)
    fail(`The credential's subject ${quoted(subject)} is not the presentation's holder.`);
}

/**
 * Verifies one ldp_vc vp_token entry against a request. Never throws: whatever is wrong with the
 * input is a failed check, named, with a sentence; the first failed check ends the work.
 */
export function createLdpPresentationVerifier(deps: {
  operations: Bbs2023Operations;
  jsonLd: JsonLdOptions;
}): LdpPresentationVerifier {
  return async (presented, expected) => {
    const checks: NamedCheck[] = [];
    let rest: Omit<VerifiedPresentation, 'ok' | 'checks'> = {
      issuer: null,
      summary: null,
      dcqlInput: null,
      statusReference: null,
    };
    const run = async (name: NamedCheck['name'], check: () => unknown): Promise<boolean> => {
      try {
        await check();
        checks.push({ name, ok: true });
        return true;
      } catch (error) {
        const detail =
          error instanceof CheckFailure ? error.message : `The presentation was refused: ${reasonOf(error)}.`;
        checks.push({ name, ok: false, detail });
        return false;
      }
    };
    const done = () => presentationResult(checks, rest);

    let read: ReadPresentation | undefined;
    const readable = await run('format', async () => {
      read = readPresented(presented, expected.holderBinding);
      try {
        // Every term of the presentation, its credential and both proofs must be defined by
        // contexts Coffer has (bundled or registered): the loader fetches nothing.
        await jsonld.expand(presented, { documentLoader: deps.jsonLd.documentLoader, safe: true });
      } catch (error) {
        fail(`The presentation cannot be read as JSON-LD: ${reasonOf(error)}.`);
      }
    });
    if (!readable || !read) return done();
    const { presentation, credential } = read;
    const issuer = issuerOf(credential);
    const summary = {
      ...summaryOf(credential),
      id: typeof credential['id'] === 'string' ? credential['id'] : '',
    };
    rest = {
      issuer: { id: issuer, trusted: false, certificate: null },
      summary,
      dcqlInput: {
        credential_format: 'ldp_vc',
        type: await expandedTypes(credential, deps.jsonLd),
        claims: summary.claims,
      },
      statusReference: null,
    };

    // The verifier refuses ldp_vc queries with transaction data; should one reach here, it fails.
    if (expected.transactionData.length > 0) {
      await run('transaction_data_hashes', () =>
        fail('An ldp_vc presentation cannot carry the transaction data the request asks it to confirm.'),
      );
      return done();
    }
    if (!(await run('issuer_signature', () => checkIssuerSignature(credential, deps.operations))))
      return done();
    // Only a status entry the issuer signed is worth fetching.
    rest.statusReference = ldpStatusReference(credential);
    const trusted = trustedDid(issuer, expected);
    rest.issuer = { id: issuer, trusted, certificate: null };
    const trustCheck = () => {
      if (!trusted) fail(`The issuer ${quoted(issuer)} is not one of the request's trusted issuers.`);
    };
    if (!(await run('issuer_trusted', trustCheck))) return done();
    if (!(await run('validity', () => checkValidity(credential, expected.now)))) return done();
    if (presentation === null) return done();

    const proof = isObject(presentation['proof']) ? presentation['proof'] : {};
    if (!(await run('holder_binding', () => checkHolderBinding(presentation, deps.jsonLd)))) return done();
    if (!(await run('subject_binding', () => checkSubjectBinding(credential, presentation['holder'])))) {
      return done();
    }
    const nonceCheck = () => {
      if (proof['challenge'] !== expected.audience.nonce) {
        fail(`The presentation's challenge ${quoted(proof['challenge'])} is not the request's nonce.`);
      }
    };
    if (!(await run('nonce', nonceCheck))) return done();
    const audienceCheck = () => {
      if (proof['domain'] !== expected.audience.clientId) {
        fail(
          `The presentation's domain ${quoted(proof['domain'])} is not the request's client_id ${quoted(expected.audience.clientId)}.`,
        );
      }
    };
    await run('audience', audienceCheck);
    return done();
  };
}
