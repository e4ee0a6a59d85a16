import assert from 'node:assert/strict';
import { createHash, createPublicKey, X509Certificate } from 'node:crypto';
import { DeviceResponse, IssuerSigned, Verifier } from '@owf/mdoc';
import * as cborg from 'cborg';
import {
  calculateJwkThumbprint,
  compactDecrypt,
  compactVerify,
  decodeJwt,
  decodeProtectedHeader,
  type JWK,
} from 'jose';
import { testMdocContext } from '../../helpers/issuers/mdoc-issuer.ts';
import type { Conditions } from '../harness.ts';
import type { Incoming, Run } from './verifier.ts';
import type { SuiteVerifierWorld } from './world.ts';

/**
 * What the suite checks of the wallet's response at its response_uri (AbstractVP1FinalWalletTest
 * handleDirectPost and processReceivedResponse), condition by condition, written here from the
 * conditions' Java with jose, cborg and @owf/mdoc.
 */

// biome-ignore lint/suspicious/noExplicitAny: response JSON
type Json = any;

export interface Unpacked {
  /** `authorization_endpoint_response`. */
  response: Record<string, Json>;
  /** The JWE protected header, for direct_post.jwt. */
  jweHeader: Record<string, unknown> | null;
}

/** The direct_post checks (handleDirectPost) and the unpacking of the response (decrypting it where encrypted). */
export async function checkDirectPost(c: Conditions, run: Run, post: Incoming): Promise<Unpacked> {
  await c.check('EnsureIncomingRequestMethodIsPost', () => assert.equal(post.method, 'POST'));
  await c.check('EnsureIncomingRequestContentTypeIsFormUrlEncoded', () =>
    assert.match(String(post.headers['content-type']), /^application\/x-www-form-urlencoded\s*(;|$)/i),
  );
  await c.check('EnsureIncomingUrlQueryIsEmpty', () => assert.equal(post.query, ''));
  await c.check('ExtractAuthorizationEndpointResponseFromFormBody', () =>
    assert.ok(Object.keys(post.form).length > 0, 'an empty form body'),
  );
  if (run.variant.mode === 'direct_post') {
    const response: Record<string, Json> = {};
    await c.check('ExtractAuthorizationEndpointResponse', () => {
      for (const [name, value] of Object.entries(post.form)) {
        // vp_token is JSON (§8.1); other parameters are strings.
        response[name] = name === 'vp_token' ? JSON.parse(value) : value;
      }
    });
    return { response, jweHeader: null };
  }
  await c.check('ValidateAuthResponseContainsOnlyResponse', () =>
    assert.deepEqual(Object.keys(post.form), ['response']),
  );
  let response: Record<string, Json> = {};
  let jweHeader: Record<string, unknown> = {};
  await c.check('DecryptResponse', async () => {
    const jwe = post.form['response']!;
    assert.equal(jwe.split('.').length, 5, "'response' is not a compact JWE");
    jweHeader = decodeProtectedHeader(jwe) as Record<string, unknown>;
    // JWEUtil.selectAsymmetricKeyForEncryption: the suite's key of that alg (and kid).
    const key = run.encryption!;
    if (jweHeader['kid'] !== undefined) assert.equal(jweHeader['kid'], key.publicJwk.kid);
    const { plaintext } = await compactDecrypt(jwe, key.privateKey);
    response = JSON.parse(new TextDecoder().decode(plaintext));
  });
  const metadata = run.request['client_metadata'] as {
    jwks: { keys: JWK[] };
    encrypted_response_enc_values_supported?: string[];
  };
  await c.check('ValidateJWEHeaderKidIsInClientMetadataJWKs', () => {
    assert.ok(typeof jweHeader['kid'] === 'string' && jweHeader['kid'] !== '', 'no kid in the JWE header');
    assert.ok(metadata.jwks.keys.some((k) => k.kid === jweHeader['kid']));
  });
  await c.check('ValidateJWEHeaderCtyJson', () => {
    if (jweHeader['cty'] !== undefined) assert.equal(jweHeader['cty'], 'json');
  });
  await c.check('ValidateJWEHeaderAlgMatchesRequestedAlgorithm', () =>
    assert.ok(
      metadata.jwks.keys.some((k) => k.alg !== undefined && k.alg === jweHeader['alg']),
      `alg ${jweHeader['alg']}`,
    ),
  );
  await c.check('ValidateJWEHeaderEncMatchesRequestedAlgorithm', () =>
    assert.ok(
      (metadata.encrypted_response_enc_values_supported ?? ['A128GCM']).includes(String(jweHeader['enc'])),
    ),
  );
  await c.check('ValidateJWEBodyDoesNotIncludeIssExpAud', () => {
    for (const claim of ['iss', 'aud', 'exp'])
      assert.equal(response[claim], undefined, `${claim} in the JWE body`);
  });
  return { response, jweHeader };
}

const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest();

/** CreateVP1FinalWalletIsoMdocRedirectSessionTranscript (B.2.6.1): OpenID4VPHandover over client_id, nonce, the key's thumbprint, response_uri. */
async function sessionTranscript(run: Run, decryptionJwk: JWK | null): Promise<Uint8Array> {
  const thumbprint = decryptionJwk
    ? Buffer.from(await calculateJwkThumbprint(decryptionJwk, 'sha256'), 'base64url')
    : null;
  const info = cborg.encode([run.clientId, run.nonce, thumbprint, run.responseUri]);
  return cborg.encode([null, null, ['OpenID4VPHandover', sha256(info)]]);
}

/** DcqlQueryUtils.extractClaimPathsFromCredential: the claims' paths as strings (null: any element). */
const requestedPaths = (query: Json): string[][] =>
  (query.claims ?? []).map((claim: { path: unknown[] }) => claim.path.map((p) => String(p)));

/** processReceivedResponse: the response holds one presentation for the query's credential, checked as the format asks. */
export async function checkPresentation(
  c: Conditions,
  world: SuiteVerifierWorld,
  run: Run,
  unpacked: Unpacked,
  options: { haip: boolean },
): Promise<void> {
  const { response } = unpacked;
  await c.check('CheckIfAuthorizationEndpointError', () =>
    assert.equal(
      response['error'],
      undefined,
      `the wallet answered ${response['error']}: ${response['error_description']}`,
    ),
  );
  let credentialId = '';
  let credential = '';
  await c.check('ExtractVP1FinalVpTokenDCQL', () => {
    const vpToken = response['vp_token'];
    assert.ok(
      vpToken && typeof vpToken === 'object' && !Array.isArray(vpToken),
      'vp_token is not a JSON object',
    );
    const ids = Object.keys(vpToken);
    assert.equal(ids.length, 1, `vp_token holds ${ids.length} credentials`);
    credentialId = ids[0]!;
    const entry = vpToken[credentialId];
    assert.ok(Array.isArray(entry), 'vp_token credential must be inside a JSON array');
    assert.ok(
      entry.length > 0 && typeof entry[0] === 'string',
      'vp_token credential array is empty or not strings',
    );
    credential = entry[0];
  });
  const query = run.dcql.credentials.find((q) => q['id'] === credentialId) as Json;
  await c.check('ValidateVpTokenCredentialIdMatchesDcqlQuery', () =>
    assert.ok(query, `no query ${credentialId}`),
  );
  await c.check('ValidateVpTokenPresentationCountMatchesDcqlQuery', () => {
    if (query.multiple !== true) assert.equal(response['vp_token'][credentialId].length, 1);
  });
  await c.check('CheckNoPresentationSubmissionParameter', () =>
    assert.equal(response['presentation_submission'], undefined),
  );
  await c.check('CheckForUnexpectedParametersInVpAuthorizationResponse', () => {
    const unexpected = Object.keys(response).filter((name) => !['vp_token', 'state', 'iss'].includes(name));
    assert.deepEqual(unexpected, []);
  });
  await c.check('CheckStateInAuthorizationResponse', () => assert.equal(response['state'], run.state));

  if (run.variant.format === 'iso_mdl') {
    await checkMdoc(c, world, run, credential, query, options);
  } else {
    await checkSdJwt(c, world, run, credential, query, options);
  }
}

async function checkMdoc(
  c: Conditions,
  world: SuiteVerifierWorld,
  run: Run,
  credential: string,
  query: Json,
  options: { haip: boolean },
) {
  await c.check('ValidateCredentialIsUnpaddedBase64Url', () => assert.match(credential, /^[A-Za-z0-9_-]+$/));
  let transcript: Uint8Array = new Uint8Array();
  await c.check('CreateVP1FinalWalletIsoMdocRedirectSessionTranscript', async () => {
    transcript = await sessionTranscript(run, run.encryption?.publicJwk ?? null);
  });
  let response: DeviceResponse | undefined;
  await c.check('ParseCredentialAsMdoc', async () => {
    const bytes = new Uint8Array(Buffer.from(credential, 'base64url'));
    // DeviceResponseParser: issuer signature to the trust anchor, digests, and the DeviceSignature over the transcript.
    await Verifier.verifyDeviceResponse(
      {
        deviceResponse: bytes,
        sessionTranscript: transcript,
        trustedCertificates: [new Uint8Array(Buffer.from(world.issuer.ca.der, 'base64'))],
      },
      testMdocContext,
    );
    response = DeviceResponse.decode(bytes);
    assert.equal(response.documents?.length, 1);
  });
  const document = response!.documents![0]!;
  if (options.haip) {
    await c.choice(
      'ValidateMdocMsoRevocationMechanism',
      'HAIP-5.3.1',
      "the MSO's status is the issuer's, not the wallet's: Coffer presents the mdoc's MSO exactly as issued (the test issuer puts no status in it), so the check is that the presented issuerAuth is the stored one's",
      () => {
        const stored = IssuerSigned.fromEncodedForOid4Vci(world.issued.mdoc);
        assert.deepEqual(
          Buffer.from(document.issuerSigned.issuerAuth.encode()),
          Buffer.from(stored.issuerAuth.encode()),
        );
      },
    );
  }
  await c.check('EnsureMdocDeviceSignedElementsEmpty', () => {
    const device = document.deviceSigned?.deviceNamespaces?.deviceNamespaces ?? new Map();
    assert.equal(device.size, 0, 'device-signed elements');
  });
  const disclosed: string[][] = [];
  for (const [namespace, items] of document.issuerSigned.issuerNamespaces?.issuerNamespaces ?? new Map()) {
    for (const item of items) disclosed.push([namespace, item.elementIdentifier]);
  }
  await c.check('ValidateMdocDocTypeMatchesDcqlQuery', () =>
    assert.equal(document.docType, query.meta.doctype_value),
  );
  const requested = requestedPaths(query);
  const key = (p: string[]) => p.join('\u0000');
  await c.check('ValidateDisclosedMdocClaimsMatchDcqlQuery', () => {
    const have = new Set(disclosed.map(key));
    const missing = requested.filter((p) => !have.has(key(p)));
    assert.deepEqual(missing, []);
  });
  await c.check('CheckOnlyRequestedMdocElementsDisclosed', () => {
    const want = new Set(requested.map(key));
    const extra = disclosed.filter((p) => !want.has(key(p)));
    assert.deepEqual(
      extra,
      [],
      requested.length ? 'unrequested elements' : 'elements though no claims were asked',
    );
  });
}

/** ParseCredentialAsSdJwtKb: the issuer JWT, its disclosures, and the key binding JWT. */
function parseSdJwtKb(credential: string) {
  const parts = credential.split('~');
  assert.ok(parts.length >= 2, 'not an SD-JWT');
  const kb = parts.at(-1)!;
  assert.ok(kb.length > 0, 'no key binding JWT after the last ~');
  const issuerJwt = parts[0]!;
  const disclosures = parts
    .slice(1, -1)
    .map((d) => ({ raw: d, value: JSON.parse(Buffer.from(d, 'base64url').toString('utf8')) as unknown[] }));
  return {
    issuerJwt,
    header: decodeProtectedHeader(issuerJwt) as Record<string, Json>,
    claims: decodeJwt(issuerJwt) as Record<string, Json>,
    disclosures,
    kb,
    kbHeader: decodeProtectedHeader(kb) as Record<string, Json>,
    kbClaims: decodeJwt(kb) as Record<string, Json>,
  };
}

async function checkSdJwt(
  c: Conditions,
  world: SuiteVerifierWorld,
  run: Run,
  credential: string,
  query: Json,
  options: { haip: boolean },
) {
  let sd: ReturnType<typeof parseSdJwtKb> | undefined;
  await c.check('ParseCredentialAsSdJwtKb', async () => {
    sd = parseSdJwtKb(credential);
    // The issuer's signature, by the x5c leaf (the suite leaves this to its FIXME; a verifier must).
    const leaf = new X509Certificate(Buffer.from(sd.header['x5c'][0], 'base64'));
    await compactVerify(sd.issuerJwt, leaf.publicKey);
  });
  const s = sd!;
  const now = Date.now() / 1000;
  // ValidateSdJwtVcCredentialClaims(requiresCnf = true, haip).
  await c.check('ValidateCredentialJWTIat', () =>
    assert.ok(typeof s.claims['iat'] === 'number' && s.claims['iat'] <= now + 300),
  );
  await c.check('ValidateCredentialJWTNbf', () =>
    assert.ok(s.claims['nbf'] === undefined || s.claims['nbf'] <= now + 300),
  );
  await c.check('ValidateCredentialJWTExp', () =>
    assert.ok(s.claims['exp'] === undefined || s.claims['exp'] > now - 300),
  );
  await c.check('ValidateCredentialJWTHeaderTyp', () => assert.equal(s.header['typ'], 'dc+sd-jwt'));
  await c.check('ValidateCredentialJWTVct', () => assert.equal(typeof s.claims['vct'], 'string'));
  await c.check('ValidateCredentialCnfJwkIsPublicKey', () => {
    const jwk = s.claims['cnf']?.jwk;
    assert.ok(jwk && typeof jwk === 'object', 'no cnf.jwk');
    assert.equal(jwk.d, undefined, 'cnf.jwk holds a private key');
    createPublicKey({ key: jwk, format: 'jwk' });
  });
  await c.check('ValidateSdJwtDisclosureSaltsAreUnique', () => {
    const salts = s.disclosures.map((d) => d.value[0]);
    assert.equal(new Set(salts).size, salts.length);
  });
  if (options.haip) {
    await c.check('ValidateCredentialValidityInfoIsPresent', () =>
      assert.ok(s.claims['exp'] !== undefined || s.claims['status'] !== undefined, 'neither exp nor status'),
    );
    await c.check('ValidateSdJwtCredentialX5cCertificateChain', () => {
      const chain = (s.header['x5c'] as string[]).map(
        (der) => new X509Certificate(Buffer.from(der, 'base64')),
      );
      const anchor = new X509Certificate(Buffer.from(world.issuer.ca.der, 'base64'));
      const last = chain.at(-1)!;
      assert.ok(last.verify(anchor.publicKey), 'the x5c chain does not reach the credential trust anchor');
    });
  }
  await c.check('ValidateCredentialVctMatchesDcqlQuery', () =>
    assert.ok(query.meta.vct_values.includes(s.claims['vct'])),
  );

  // Disclosed claims: each object-property disclosure's name (SD-JWT §4.2.1), the digests it answers.
  const disclosedNames = s.disclosures.filter((d) => d.value.length === 3).map((d) => String(d.value[1]));
  const requested = requestedPaths(query);
  await c.check('ValidateDisclosedClaimsMatchDcqlQuery', () => {
    const decoded: Record<string, unknown> = { ...s.claims };
    for (const d of s.disclosures) if (d.value.length === 3) decoded[String(d.value[1])] = d.value[2];
    const missing = requested.filter((p) => p.length === 1 && decoded[p[0]!] === undefined);
    assert.deepEqual(missing, []);
  });
  await c.check('CheckOnlyRequestedClaimsDisclosed', () => {
    if (requested.length === 0) {
      assert.equal(s.disclosures.length, 0, 'disclosures though the query asked for no claims');
      return;
    }
    const unrequested = disclosedNames.filter((name) => !requested.some((p) => p.includes(name)));
    assert.deepEqual(unrequested, []);
  });

  await c.check('ValidateSdJwtKeyBindingSignature', async () => {
    const key = createPublicKey({ key: s.claims['cnf'].jwk, format: 'jwk' });
    await compactVerify(s.kb, key);
  });
  await c.check('CheckTypInBindingJwt', () => assert.equal(s.kbHeader['typ'], 'kb+jwt'));
  await c.check('CheckForUnexpectedParametersInBindingJwtHeader', () =>
    assert.deepEqual(
      Object.keys(s.kbHeader).filter((k) => !['typ', 'alg'].includes(k)),
      [],
    ),
  );
  await c.check('CheckIatInBindingJwt', () => {
    const iat = s.kbClaims['iat'];
    assert.equal(typeof iat, 'number', "'iat' claim missing");
    assert.ok(iat <= now + 300, 'iat in the future');
    assert.ok(iat >= now - 300, 'iat more than 5 minutes in the past');
  });
  await c.check('CheckAudInBindingJwt', () => {
    const aud = s.kbClaims['aud'];
    assert.ok(
      Array.isArray(aud) ? aud.includes(run.clientId) : aud === run.clientId,
      `aud ${JSON.stringify(aud)}`,
    );
  });
  await c.check('CheckNonceInBindingJwt', () => assert.equal(s.kbClaims['nonce'], run.nonce));
  await c.check('ValidateSdJwtKbSdHash', () => {
    const presented = credential.slice(0, credential.lastIndexOf('~') + 1);
    if (s.claims['_sd_alg'] !== undefined) assert.equal(s.claims['_sd_alg'], 'sha-256');
    assert.equal(s.kbClaims['sd_hash'], sha256(presented).toString('base64url'));
  });
  await c.check('CheckForUnexpectedClaimsInBindingJwt', () =>
    assert.deepEqual(
      Object.keys(s.kbClaims).filter((k) => !['iat', 'aud', 'nonce', 'sd_hash'].includes(k)),
      [],
    ),
  );
}
