import { createHash, type JsonWebKey } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { resolveDidKey } from '../did-resolution.ts';
import {
  checkTimes,
  type DecodedJws,
  decodeJws,
  type IssuerKey,
  issuerKeyOf,
  verifyIssuerSignature,
  x5cOf,
} from '../jose-credentials.ts';
import {
  checkFreshness,
  contextOf,
  issuerOf,
  issuerTrusted,
  type PresentedIssuer,
  reportedIssuer,
  signedBy,
  untrustedAnywhere,
} from '../jose-presentations.ts';
import { fail, runCheck, runChecks, type Step } from '../presentation-checks.ts';
import {
  type NamedCheck,
  type PresentationExpectation,
  presentationResult,
  type VerifiedPresentation,
  withAuthority,
} from '../presentation-verification.ts';
import { checkIssuerNamedByCertificate } from './issuer-name.ts';
import { checkDigestsReferenced } from './referenced-digests.ts';
import {
  hasher,
  holderOf,
  readDisclosures,
  readIssuerJwt,
  sdJwtStatusReference,
  summaryOf,
} from './sd-jwt-parts.ts';

/**
 * The verifier side of `dc+sd-jwt` (OpenID4VP B.3, RFC 9901 §7): a compact SD-JWT with the
 * disclosures the wallet chose and, for holder binding, a key binding JWT after the last `~`.
 */

const PRESENTATION =
  /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+~([A-Za-z0-9_-]+~)*([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)?$/;
/** Transaction data hash algorithms (IANA Named Information names) and node's names for them. */
const HASHES: Record<string, string> = { 'sha-256': 'sha256', 'sha-384': 'sha384', 'sha-512': 'sha512' };

function readPresentation(presented: unknown) {
  if (typeof presented !== 'string' || !PRESENTATION.test(presented)) {
    fail('The presentation is not a compact SD-JWT (issuer-signed JWT~disclosures~ and a key binding JWT).');
  }
  // The SD-JWT the key binding JWT's sd_hash covers ends at the last `~` (RFC 9901 §4.3.1).
  const sdJwt = presented.slice(0, presented.lastIndexOf('~') + 1);
  const kbJwt = presented.slice(sdJwt.length) || null;
  const issuerJwt = presented.slice(0, presented.indexOf('~'));
  // `iss` may be absent: an SD-JWT VC's issuer may be named by its x5c certificate alone.
  const decodedJws = readIssuerJwt(issuerJwt, false);
  const payload = decodedJws.payload as Record<string, unknown>;
  const { disclosures, claims } = readDisclosures(sdJwt, payload);
  const kb = kbJwt ? decodeJws(kbJwt, 'its key binding JWT') : null;
  return { sdJwt, kbJwt, kb, issuerJwt, decodedJws, payload, disclosures, claims };
}

type Presentation = ReturnType<typeof readPresentation>;

/** The public key `cnf` names (a JWK, or a did:key resolved locally). */
function holderJwkOf(payload: Record<string, unknown>): JsonWebKey {
  const holder = holderOf(payload);
  return holder.kind === 'key' ? holder.jwk : resolveDidKey(holder.did).jwk;
}

/** B.3.3: one hash per transaction data string as received, in order, with an algorithm the request allowed. */
function checkTransactionDataHashes(kb: JWTPayload, expected: PresentationExpectation): void {
  const allowed = expected.transactionDataHashAlgorithms;
  const alg = kb['transaction_data_hashes_alg'];
  if (allowed?.length) {
    if (typeof alg !== 'string' || !allowed.includes(alg))
      fail(`The key binding JWT's transaction_data_hashes_alg is not one of ${allowed.join(', ')}.`);
  } else if (alg !== undefined && alg !== 'sha-256') {
    fail("The key binding JWT's transaction_data_hashes_alg must be sha-256: the request named none.");
  }
  const algorithm = HASHES[(alg as string | undefined) ?? 'sha-256'];
  if (!algorithm) fail(`The transaction data hash algorithm ${String(alg)} is not supported.`);
  const hashes = kb['transaction_data_hashes'];
  if (!Array.isArray(hashes)) fail('The key binding JWT carries no transaction_data_hashes.');
  const wanted = expected.transactionData.map((item) =>
    createHash(algorithm).update(item, 'utf8').digest('base64url'),
  );
  if (hashes.length !== wanted.length || wanted.some((hash, i) => hashes[i] !== hash)) {
    fail(
      "The key binding JWT's transaction_data_hashes are not the hashes of the request's transaction_data, in order.",
    );
  }
}

/** The key binding checks (RFC 9901 §7.3, OpenID4VP B.3.6, §14.1.2). */
function keyBindingSteps(presentation: Presentation, expected: PresentationExpectation): Step[] {
  const { kbJwt, sdJwt, payload } = presentation;
  let kb: DecodedJws;
  return [
    [
      'holder_binding',
      async () => {
        if (!kbJwt || !presentation.kb) return fail('The presentation has no key binding JWT.');
        kb = presentation.kb;
        if (kb.header.typ !== 'kb+jwt')
          fail(`The key binding JWT's typ is ${String(kb.header.typ)}, not kb+jwt.`);
        if (!(await signedBy(kbJwt, holderJwkOf(payload), kb.header.alg)))
          fail('The key binding JWT is not signed by the holder key the credential names (cnf).');
      },
    ],
    [
      'audience',
      () =>
        kb.payload.aud === expected.audience.clientId ||
        fail(`The key binding JWT's aud is not this verifier's client_id ${expected.audience.clientId}.`),
    ],
    [
      'nonce',
      () =>
        kb.payload['nonce'] === expected.audience.nonce ||
        fail("The key binding JWT's nonce is not the request's nonce."),
    ],
    ['freshness', () => checkFreshness(kb.payload, expected, 'The key binding JWT')],
    [
      'sd_hash',
      () =>
        kb.payload['sd_hash'] === createHash('sha256').update(sdJwt).digest('base64url') ||
        fail("The key binding JWT's sd_hash is not the hash of this presentation's SD-JWT and disclosures."),
    ],
    ...(expected.transactionData.length > 0
      ? [['transaction_data_hashes', () => checkTransactionDataHashes(kb.payload, expected)] as Step]
      : []),
  ];
}

/**
 * Checks one `dc+sd-jwt` vp_token entry against the request. Never throws: every failure is a
 * named check, and the first failure ends the run.
 */
export async function verifySdJwtPresentation(
  presented: unknown,
  expected: PresentationExpectation,
): Promise<VerifiedPresentation> {
  const checks: NamedCheck[] = [];
  const presentation = await runCheck(checks, 'format', () => readPresentation(presented));
  if (!presentation) {
    return presentationResult(checks, {
      issuer: null,
      summary: null,
      dcqlInput: null,
      statusReference: null,
    });
  }
  const { issuerJwt, decodedJws, payload, disclosures } = presentation;
  const context = contextOf(expected);
  const read: { issuer?: PresentedIssuer; issuerKey?: IssuerKey } = {};
  const steps: Step[] = [
    [
      'issuer_signature',
      async () => {
        const issuerKey = issuerKeyOf(decodedJws, context);
        read.issuerKey = issuerKey;
        read.issuer = issuerOf(decodedJws.payload, issuerKey, expected);
        await verifyIssuerSignature(issuerJwt, decodedJws, issuerKey);
      },
    ],
    [
      'issuer_named',
      () => checkIssuerNamedByCertificate(decodedJws.payload as Record<string, unknown>, read.issuerKey!),
    ],
    [
      'issuer_trusted',
      async () =>
        (await issuerTrusted(read.issuer!, read.issuerKey!, expected)) ||
        fail(untrustedAnywhere(read.issuer!, expected)),
    ],
    ['digests', () => checkDigestsReferenced(payload, disclosures, hasher)],
    ['validity', () => checkTimes(decodedJws.payload, expected.now)],
  ];
  // Without holder binding asked for, a presentation may come without a key binding JWT; one
  // that is given is checked all the same, and transaction data cannot be bound without one.
  const binds = presentation.kbJwt !== null || expected.holderBinding || expected.transactionData.length > 0;
  await runChecks(checks, binds ? [...steps, ...keyBindingSteps(presentation, expected)] : steps);
  const issuer = reportedIssuer(read.issuer, checks);
  const summary = {
    ...summaryOf(issuerJwt, payload, presentation.claims),
    ...(issuer ? { issuer: issuer.id, issuerCertificate: issuer.certificate } : {}),
  };
  return presentationResult(checks, {
    issuer,
    summary,
    dcqlInput: withAuthority(
      { credential_format: 'dc+sd-jwt', vct: summary.type as string, claims: summary.claims },
      x5cOf(decodedJws),
    ),
    statusReference: sdJwtStatusReference(presented, context),
  });
}
