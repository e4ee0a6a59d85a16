import type { Static } from 'typebox';
import { invalidField } from '../errors.ts';
import { ISSUED_LDP_CONTEXTS } from '../formats/ldp-vc/issue-credential.ts';
import { OPENID_SCOPES } from '../oidc/authorize-request.ts';
import type { ConfigurationBody } from './issuer-schemas.ts';

export type CredentialConfiguration = Static<typeof ConfigurationBody>;
export type IssuedFormat = CredentialConfiguration['format'];

/** The proof key algorithms wallets may use; Coffer's own wallet proves with ES256 (or EdDSA). */
export const PROOF_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/** Where a W3C credential's claims about its holder sit, and so where its claim paths start. */
export const SUBJECT = 'credentialSubject';

/** The W3C formats, whose claim paths and offer claims address the credential from its root. */
export const isW3cFormat = (format: IssuedFormat) => format === 'jwt_vc_json' || format === 'ldp_vc';

/**
 * A W3C claim path is a claims path pointer into the credential (Appendix C, as the spec's
 * jwt_vc_json and ldp_vc examples use it): the issuer sets everything but the subject's claims,
 * and the subject's `id` is the holder's DID.
 */
function checkW3cPath(
  format: IssuedFormat,
  path: CredentialConfiguration['claims'][number]['path'],
  at: string,
) {
  if (path[0] !== SUBJECT) {
    const meant = typeof path[0] === 'string' ? ` (${JSON.stringify([SUBJECT, ...path])}?)` : '';
    throw invalidField(
      at,
      `${JSON.stringify(path)} must start with "${SUBJECT}": a ${format} claim path points into the credential (OpenID4VCI Appendix C)${meant}`,
    );
  }
  if (typeof path[1] !== 'string') {
    throw invalidField(at, `${JSON.stringify(path)} must name a claim of ${SUBJECT}`);
  }
  if (path[1] === 'id') {
    throw invalidField(at, `${JSON.stringify(path)} is the holder's DID, which the issuer sets`);
  }
}

/**
 * What the schema cannot say about a configuration: the type member its format needs, mdoc
 * claim paths of namespace and element, W3C claim paths from credentialSubject, and profile
 * claims only where a person logs in.
 */
export function checkConfiguration(configuration: CredentialConfiguration): void {
  const needed = { 'dc+sd-jwt': 'vct', mso_mdoc: 'doctype', jwt_vc_json: 'type', ldp_vc: 'type' } as const;
  const member = needed[configuration.format];
  if (configuration[member] === undefined) {
    throw invalidField(`/body/${member}`, `is required for ${configuration.format}`);
  }
  for (const other of ['vct', 'doctype', 'type'] as const) {
    if (other !== member && configuration[other] !== undefined) {
      throw invalidField(`/body/${other}`, `is not used by ${configuration.format}`);
    }
  }
  configuration.claims.forEach((claim, index) => {
    const at = `/body/claims/${index}/path`;
    // An offer names a claim's value by its steps as members of a JSON body, and the body parser
    // refuses a member named __proto__ (prototype poisoning): such a claim could never be offered.
    if (claim.path.includes('__proto__')) {
      throw invalidField(
        at,
        'a step named __proto__ cannot be offered: a request body may not carry that member',
      );
    }
    if (configuration.format === 'mso_mdoc') {
      if (claim.path.length !== 2 || claim.path.some((p) => typeof p !== 'string')) {
        throw invalidField(at, 'must be [namespace, element] for mso_mdoc');
      }
    } else if (isW3cFormat(configuration.format)) {
      checkW3cPath(configuration.format, claim.path, at);
    } else if (typeof claim.path[0] !== 'string') {
      throw invalidField(at, 'must start with a claim name');
    }
  });
  const paths = configuration.claims.map((c) => JSON.stringify(c.path));
  const repeated = paths.findIndex((p, i) => paths.indexOf(p) !== i);
  if (repeated >= 0) throw invalidField(`/body/claims/${repeated}/path`, 'names a claim twice');
  if (configuration.from_profile && configuration.format === 'mso_mdoc') {
    throw invalidField('/body/from_profile', 'is not offered for mso_mdoc (claims need a namespace)');
  }
  if (
    configuration.batch_size !== undefined &&
    configuration.batch_size > 1 &&
    configuration.format === 'ldp_vc'
  ) {
    // One BBS signature serves any number of unlinkable presentations: copies add nothing.
    throw invalidField('/body/batch_size', 'is 1 for ldp_vc: bbs-2023 presentations are unlinkable already');
  }
  if (configuration.scope !== undefined && OPENID_SCOPES.includes(configuration.scope)) {
    // An app asking its users to log in would be sent to this issuance instead.
    throw invalidField(
      '/body/scope',
      `is a scope of OpenID Connect (${OPENID_SCOPES.join(', ')}); choose another`,
    );
  }
}

/**
 * Claims descriptions as metadata carries them (§12.2.4, Appendix B): the configuration's paths
 * point into the credential already (W3C ones from credentialSubject), so wallets apply them as
 * they are.
 */
const claimsMetadata = (configuration: CredentialConfiguration) =>
  configuration.claims.map((claim) => ({
    path: claim.path,
    ...(claim.mandatory !== undefined ? { mandatory: claim.mandatory } : {}),
    ...(claim.display ? { display: claim.display } : {}),
  }));

/** One entry of `credential_configurations_supported` (§12.2.4 and the format profiles). */
export function configurationMetadata(
  configuration: CredentialConfiguration,
  options: { keyAttestations: boolean },
): Record<string, unknown> {
  const proofSigning = { proof_signing_alg_values_supported: PROOF_ALGORITHMS };
  const keyAttestations =
    options.keyAttestations || configuration.key_attestations_required
      ? { key_attestations_required: {} }
      : {};
  const common = {
    format: configuration.format,
    ...(configuration.scope ? { scope: configuration.scope } : {}),
    proof_types_supported: {
      jwt: { ...proofSigning, ...keyAttestations },
      attestation: { proof_signing_alg_values_supported: ['ES256'], key_attestations_required: {} },
    },
    credential_metadata: {
      ...(configuration.display ? { display: configuration.display } : {}),
      claims: claimsMetadata(configuration),
    },
  };
  switch (configuration.format) {
    case 'dc+sd-jwt':
      return {
        ...common,
        vct: configuration.vct,
        credential_signing_alg_values_supported: ['ES256'],
        cryptographic_binding_methods_supported: ['jwk'],
      };
    case 'mso_mdoc':
      return {
        ...common,
        doctype: configuration.doctype,
        credential_signing_alg_values_supported: [-7],
        cryptographic_binding_methods_supported: ['cose_key'],
      };
    case 'jwt_vc_json':
      return {
        ...common,
        credential_definition: { type: ['VerifiableCredential', configuration.type] },
        credential_signing_alg_values_supported: ['ES256'],
        cryptographic_binding_methods_supported: ['did:jwk', 'did:key'],
      };
    case 'ldp_vc':
      return {
        ...common,
        credential_definition: {
          '@context': ISSUED_LDP_CONTEXTS,
          type: ['VerifiableCredential', configuration.type],
        },
        credential_signing_alg_values_supported: ['bbs-2023'],
        cryptographic_binding_methods_supported: ['did:key', 'did:jwk'],
      };
  }
}
