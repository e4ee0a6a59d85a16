import type { JsonWebKey } from 'node:crypto';
import type { JsonLdOptions } from '@digitalbazaar/di-sd-primitives';
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
import { expandedTypes } from '../w3c-types.ts';
import { COMPACT_JWS, readVcJwt, vcJwtStatusReference } from './vc-jwt.ts';

/**
 * The verifier side of `jwt_vc_json` (OpenID4VP B.1.3.1, §14.1.2): a VP JWT signed by the holder
 * (`iss` its did:key or did:jwk, `aud` the client id, `nonce`) around one VC-JWT, or, where the
 * request does not ask for holder binding, the VC-JWT alone.
 */

function readPresentation(presented: unknown) {
  if (typeof presented !== 'string' || !COMPACT_JWS.test(presented))
    fail('The presentation is not a compact JWS (a VP JWT).');
  const outer = decodeJws(presented, 'the VP JWT');
  const vp = outer.payload['vp'];
  if (vp === undefined && outer.payload['vc'] !== undefined) {
    return { vpJwt: null, vp: null, credential: readVcJwt(presented) };
  }
  if (vp === null || typeof vp !== 'object' || Array.isArray(vp)) fail('The VP JWT has no vp object.');
  const credentials = (vp as { verifiableCredential?: unknown }).verifiableCredential;
  // One credential per presentation (DESIGN.md): a VP of several answers several queries at once.
  if (!Array.isArray(credentials) || credentials.length !== 1 || typeof credentials[0] !== 'string') {
    fail("The VP JWT's vp.verifiableCredential must hold exactly one VC-JWT.");
  }
  return { vpJwt: presented, vp: outer, credential: readVcJwt(credentials[0]) };
}

/** The VP signer's key: its `iss` DID, resolved locally; a `kid` must name a key of that DID. */
function holderKeyOf(vp: DecodedJws): JsonWebKey {
  const { iss } = vp.payload;
  if (typeof iss !== 'string' || !iss.startsWith('did:')) fail("The VP JWT's iss is not the holder's DID.");
  const { kid } = vp.header;
  const didUrl = typeof kid !== 'string' ? iss : kid.startsWith('#') ? `${iss}${kid}` : kid;
  const resolved = resolveDidKey(didUrl.startsWith('did:') ? didUrl : iss);
  if (resolved.did !== iss) fail(`The VP JWT's kid names a key of ${resolved.did}, not of its iss ${iss}.`);
  return resolved.jwk;
}

function holderSteps(
  vpJwt: string | null,
  vp: DecodedJws | null,
  sub: string,
  expected: PresentationExpectation,
) {
  const steps: Step[] = [
    [
      'holder_binding',
      async () => {
        if (!vpJwt || !vp)
          return fail('The credential was presented alone, not inside a VP JWT signed by its holder.');
        if (!(await signedBy(vpJwt, holderKeyOf(vp), vp.header.alg)))
          fail('The VP JWT is not signed by the key of its iss.');
        const holder = (vp.payload['vp'] as { holder?: unknown }).holder;
        if (holder !== undefined && holder !== vp.payload.iss)
          fail("The VP's holder is not the VP JWT's iss.");
      },
    ],
    [
      'audience',
      () =>
        vp!.payload.aud === expected.audience.clientId ||
        fail(`The VP JWT's aud is not this verifier's client_id ${expected.audience.clientId}.`),
    ],
    [
      'nonce',
      () =>
        vp!.payload['nonce'] === expected.audience.nonce ||
        fail("The VP JWT's nonce is not the request's nonce."),
    ],
    ['freshness', () => checkFreshness(vp!.payload, expected, 'The VP JWT')],
    [
      'subject_binding',
      // readVcJwt has made credentialSubject.id, where given, equal to sub.
      () => sub === vp!.payload.iss || fail(`The credential's subject ${sub} is not the VP's signer.`),
    ],
  ];
  return steps;
}

/**
 * Checks one `jwt_vc_json` vp_token entry against the request, with the JSON-LD contexts the
 * credential's types are expanded by for DCQL (as the store's dcqlInput does). Never throws.
 */
export async function verifyJwtVcPresentation(
  presented: unknown,
  expected: PresentationExpectation,
  jsonLd: JsonLdOptions,
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
  const { vpJwt, vp, credential } = presentation;
  const { jwt, decoded, sub } = credential;
  const context = contextOf(expected);
  const read: { issuer?: PresentedIssuer; issuerKey?: IssuerKey } = {};
  const steps: Step[] = [
    [
      'issuer_signature',
      async () => {
        const issuerKey = issuerKeyOf(decoded, context);
        read.issuerKey = issuerKey;
        read.issuer = issuerOf(decoded.payload, issuerKey, expected);
        await verifyIssuerSignature(jwt, decoded, issuerKey);
      },
    ],
    [
      'issuer_trusted',
      async () =>
        (await issuerTrusted(read.issuer!, read.issuerKey!, expected)) ||
        fail(untrustedAnywhere(read.issuer!, expected)),
    ],
    ['validity', () => checkTimes(decoded.payload, expected.now)],
  ];
  // A bare VC-JWT is a presentation without holder binding, acceptable only when not asked for.
  const binds = vp !== null || expected.holderBinding;
  await runChecks(checks, binds ? [...steps, ...holderSteps(vpJwt, vp, sub, expected)] : steps);
  const issuer = reportedIssuer(read.issuer, checks);
  const summary = {
    ...credential.summary,
    ...(issuer ? { issuerCertificate: issuer.certificate } : {}),
  };
  return presentationResult(checks, {
    issuer,
    summary,
    dcqlInput: withAuthority(
      {
        credential_format: 'jwt_vc_json',
        type: await expandedTypes(summary.claims, jsonLd),
        claims: summary.claims,
      },
      x5cOf(credential.decoded),
    ),
    statusReference: vcJwtStatusReference(jwt, context),
  });
}
