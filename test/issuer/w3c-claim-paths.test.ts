// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import type { TestResponse } from '../helpers/server.ts';
import { deriveAndVerifyLdpVc, verifyVcJwt } from './independent-checks.ts';
import { type InteropIssuer, startInteropIssuer } from './test-wallet.ts';

/**
 * W3C claim paths point into the credential (issue #39, OpenID4VCI 1.0 Appendix C and its
 * jwt_vc_json and ldp_vc examples): a tenant writes `["credentialSubject", "degree", "name"]`,
 * gives the claims as the credential addresses them, and gets them once under
 * credentialSubject; the metadata's paths select them in the credential. Checked with other
 * people's code: @openid4vc/openid4vci reads the metadata, jose and the Digital Bazaar stack the
 * credentials, and the paths are applied here as Appendix C processes them.
 */

const SUBJECT_CLAIMS = [
  {
    path: ['credentialSubject', 'given_name'],
    mandatory: true,
    display: [{ name: 'Given name', locale: 'en' }],
  },
  { path: ['credentialSubject', 'degree', 'name'], display: [{ name: 'Degree', locale: 'en' }] },
  { path: ['credentialSubject', 'nationalities', null], display: [{ name: 'Nationalities', locale: 'en' }] },
];

const CONFIGURATIONS: Record<string, Record<string, unknown>> = {
  'degree-jwt': { format: 'jwt_vc_json', type: 'UniversityDegreeCredential', claims: SUBJECT_CLAIMS },
  'degree-ldp': {
    format: 'ldp_vc',
    type: 'UniversityDegreeCredential',
    // The given name is in every presentation: a bbs-2023 mandatory statement.
    claims: SUBJECT_CLAIMS.map((claim, i) =>
      i === 0 ? { ...claim, selectively_disclosable: false } : claim,
    ),
    status: true,
  },
  'member-jwt': {
    format: 'jwt_vc_json',
    type: 'MembershipCredential',
    claims: [{ path: ['credentialSubject', 'given_name'] }],
    from_profile: { given_name: 'first_name' },
  },
};

const SUBJECT = {
  given_name: 'Ada',
  degree: { type: 'BachelorDegree', name: 'BSc Mathematics' },
  nationalities: ['GB'],
};

/** Appendix C processing of a claims path pointer over JSON, written here from the spec's steps. */
function select(credential: unknown, path: (string | number | null)[]): unknown[] {
  let selected: unknown[] = [credential];
  for (const step of path) {
    if (typeof step === 'string') {
      if (selected.some((e) => e === null || typeof e !== 'object' || Array.isArray(e)))
        throw new Error(`${JSON.stringify(path)}: a selected element is not an object`);
      selected = selected.filter((e) => Object.hasOwn(e as object, step)).map((e) => (e as any)[step]);
    } else if (step === null) {
      if (selected.some((e) => !Array.isArray(e)))
        throw new Error(`${JSON.stringify(path)}: a selected element is not an array`);
      selected = selected.flatMap((e) => e as unknown[]);
    } else {
      if (selected.some((e) => !Array.isArray(e)))
        throw new Error(`${JSON.stringify(path)}: a selected element is not an array`);
      selected = selected.filter((e) => step < (e as unknown[]).length).map((e) => (e as unknown[])[step]);
    }
  }
  if (selected.length === 0) throw new Error(`${JSON.stringify(path)} selects nothing in the credential`);
  return selected;
}

/** The project's error body for a bad field: the code, a sentence, the field's path and why. */
function assertFieldError(response: TestResponse, path: string, why: RegExp) {
  assert.equal(response.status, 400, response.text);
  assert.equal(response.body.error, 'invalid_request', response.text);
  assert.equal(typeof response.body.error_description, 'string', response.text);
  const detail = (response.body.details ?? []).find((d: { path: string }) => d.path === path);
  assert.ok(detail, `expected a detail at ${path}: ${response.text}`);
  assert.match(detail.message, why);
}

for (const kind of DATABASE_KINDS) {
  describe(`W3C claim paths point into the credential (${kind})`, () => {
    let world: InteropIssuer;
    before(async () => {
      world = await startInteropIssuer(kind);
      for (const [id, configuration] of Object.entries(CONFIGURATIONS)) {
        const put = await world.api('PUT', `/v1/issuer/configurations/${id}`, configuration);
        assert.equal(put.status, 201, put.text);
      }
    });
    after(() => world.close());

    async function received(configurationId: string, offer: Record<string, unknown>) {
      const created = await world.offer({ configuration_ids: [configurationId], ...offer });
      const got = await world.wallet.receive(created.offer_link);
      assert.equal(got.credentials.length, 1);
      return { ...got, credential: got.credentials[0] as any };
    }

    /** The metadata as @openid4vc/openid4vci parsed it: the configuration's claims paths, as given. */
    function metadataClaims(metadata: any, configurationId: string): any[] {
      const configuration = metadata.credentialIssuer.credential_configurations_supported[configurationId];
      const claims = configuration.credential_metadata.claims;
      assert.deepEqual(
        claims.map((c: any) => c.path),
        (CONFIGURATIONS[configurationId]!['claims'] as any[]).map((c) => c.path),
      );
      return claims;
    }

    it("jwt_vc_json: the spec's paths issue the claims once under credentialSubject (jose), and the metadata's paths select them", async () => {
      const { credential, metadata } = await received('degree-jwt', {
        claims: { 'degree-jwt': { credentialSubject: SUBJECT } },
      });
      const { payload } = await verifyVcJwt(credential, world.ca);
      const vc = payload['vc'] as any;
      assert.deepEqual(vc.credentialSubject, { id: payload.sub, ...SUBJECT });
      const claims = metadataClaims(metadata, 'degree-jwt');
      assert.deepEqual(
        claims.map((c) => select(vc, c.path)),
        [['Ada'], ['BSc Mathematics'], ['GB']],
      );
      assert.deepEqual(claims[0].display, [{ name: 'Given name', locale: 'en' }]);
      assert.equal(claims[0].mandatory, true);
    });

    it('ldp_vc: the Digital Bazaar stack derives and verifies; a claim kept disclosed comes unasked', async () => {
      const { credential, metadata } = await received('degree-ldp', {
        claims: { 'degree-ldp': { credentialSubject: SUBJECT } },
      });
      assert.deepEqual(credential.credentialSubject, { id: credential.credentialSubject.id, ...SUBJECT });
      const claims = metadataClaims(metadata, 'degree-ldp');
      assert.deepEqual(
        claims.map((c) => select(credential, c.path)),
        [['Ada'], ['BSc Mathematics'], ['GB']],
      );
      const { derived, result } = await deriveAndVerifyLdpVc(credential, ['/credentialSubject/degree/name']);
      assert.equal(result.verified, true, JSON.stringify(result.error ?? result.results, null, 1));
      assert.equal(derived.credentialSubject.degree.name, 'BSc Mathematics');
      assert.equal(derived.credentialSubject.given_name, 'Ada', 'selectively_disclosable: false');
      assert.equal(derived.credentialSubject.nationalities, undefined, 'not asked, not disclosed');
    });

    it("from_profile: the person's profile claims sit under credentialSubject", async () => {
      const user = await world.api('POST', '/v1/user/create', {
        profile: { email_address: `grace.${kind}@example.org`, first_name: 'Grace', last_name: 'Hopper' },
      });
      assert.equal(user.status, 201, user.text);
      const { credential, metadata } = await received('member-jwt', { user_id: user.body.data.user_id });
      const { payload } = await verifyVcJwt(credential, world.ca);
      const vc = payload['vc'] as any;
      assert.deepEqual(vc.credentialSubject, { id: payload.sub, given_name: 'Grace' });
      assert.deepEqual(select(vc, metadataClaims(metadata, 'member-jwt')[0].path), ['Grace']);
    });

    it('a path that does not start with credentialSubject is 400, naming the path', async () => {
      for (const format of ['jwt_vc_json', 'ldp_vc']) {
        const put = await world.api('PUT', '/v1/issuer/configurations/old', {
          format,
          type: 'UniversityDegreeCredential',
          claims: [{ path: ['credentialSubject', 'given_name'] }, { path: ['degree', 'name'] }],
        });
        assertFieldError(
          put,
          '/body/claims/1/path',
          /\["degree","name"\] must start with "credentialSubject".*\["credentialSubject","degree","name"\]/,
        );
        for (const [path, why] of [
          [['credentialSubject'], /must name a claim of credentialSubject/],
          [['credentialSubject', 0], /must name a claim of credentialSubject/],
          [['credentialSubject', 'id'], /holder's DID/],
          [[0, 'name'], /must start with "credentialSubject"/],
        ] as const) {
          assertFieldError(
            await world.api('PUT', '/v1/issuer/configurations/old', {
              format,
              type: 'UniversityDegreeCredential',
              claims: [{ path }],
            }),
            '/body/claims/0/path',
            why,
          );
        }
      }
      assert.equal(
        (await world.api('GET', '/v1/issuer/configurations')).body.data.some((c: any) => c.id === 'old'),
        false,
        'nothing was saved',
      );
    });

    it('a claim path with a step named __proto__ is 400 in every format, and nothing is saved', async () => {
      const shapes = {
        'dc+sd-jwt': { vct: 'https://issuer.example/proto', path: ['address', '__proto__'] },
        mso_mdoc: { doctype: 'org.example.proto', path: ['org.example.proto', '__proto__'] },
        jwt_vc_json: { type: 'ProtoCredential', path: ['credentialSubject', '__proto__', 'x'] },
        ldp_vc: { type: 'ProtoCredential', path: ['credentialSubject', '__proto__'] },
      };
      for (const [format, { path, ...member }] of Object.entries(shapes)) {
        assertFieldError(
          await world.api('PUT', '/v1/issuer/configurations/proto', {
            format,
            ...member,
            claims: [{ path }],
          }),
          '/body/claims/0/path',
          /__proto__ cannot be offered/,
        );
      }
      assert.equal(
        (await world.api('GET', '/v1/issuer/configurations')).body.data.some((c: any) => c.id === 'proto'),
        false,
        'nothing was saved',
      );
      const pollution = ({} as Record<string, unknown>)['x'];
      assert.equal(pollution, undefined, 'no object of the process gained a member');
    });

    it('offer claims in the old shape are 400, saying they go under credentialSubject', async () => {
      const offer = await world.api('POST', '/v1/issuer/offers', {
        configuration_ids: ['degree-jwt'],
        claims: { 'degree-jwt': SUBJECT },
      });
      assertFieldError(
        offer,
        '/body/claims/degree-jwt/given_name',
        /\{"credentialSubject": \{"given_name": …\}\}/,
      );
      assertFieldError(
        await world.api('POST', '/v1/issuer/offers', {
          configuration_ids: ['degree-ldp'],
          claims: { 'degree-ldp': { credentialSubject: { ...SUBJECT, shoe_size: 44 } } },
        }),
        '/body/claims/degree-ldp/credentialSubject/shoe_size',
        /is not a claim of this configuration/,
      );
      assertFieldError(
        await world.api('POST', '/v1/issuer/offers', {
          configuration_ids: ['degree-ldp'],
          claims: { 'degree-ldp': { credentialSubject: { degree: { name: 'BSc' } } } },
        }),
        '/body/claims/degree-ldp/credentialSubject/given_name',
        /is mandatory/,
      );
      // A deferred offer's claims are held to the same shape.
      const deferred = await world.offer({ configuration_ids: ['degree-jwt'] });
      assertFieldError(
        await world.api('PUT', `/v1/issuer/offers/${deferred.id}/claims`, {
          claims: { 'degree-jwt': SUBJECT },
        }),
        '/body/claims/degree-jwt/given_name',
        /credentialSubject/,
      );
      const completed = await world.api('PUT', `/v1/issuer/offers/${deferred.id}/claims`, {
        claims: { 'degree-jwt': { credentialSubject: SUBJECT } },
      });
      assert.equal(completed.status, 200, completed.text);
    });
  });
}
