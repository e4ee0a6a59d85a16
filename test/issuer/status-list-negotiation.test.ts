// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import { verify, X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { inflateSync } from 'node:zlib';
import { decode as cborDecode, encode } from 'cborg';
import { compactVerify, decodeJwt, importX509 } from 'jose';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { type IssuerWorld, proofKey, startIssuerWorld } from './issuer-helpers.ts';

const tags: ((inner: any) => any)[] = [];
tags[18] = (inner) => ({ tag: 18, value: inner });
const decode = (bytes: Uint8Array) => cborDecode(bytes, { useMaps: true, tags });

/**
 * GET /v1/status-lists/{id} for a Token Status List: the JWT form unless the Accept header
 * prefers the CWT form (q-values count). Read here with jose and cborg, not with Coffer's code.
 */

const JWT = 'application/statuslist+jwt';
const CWT = 'application/statuslist+cwt';

const statusAt = (lst: Uint8Array, bits: number, index: number) => {
  const bytes = inflateSync(lst);
  const perByte = 8 / bits;
  return (bytes[Math.floor(index / perByte)]! >> ((index % perByte) * bits)) & ((1 << bits) - 1);
};

for (const kind of DATABASE_KINDS) {
  describe(`issuer, status list JWT/CWT negotiation (${kind})`, () => {
    let world: IssuerWorld;
    let list: { uri: string; index: number };
    let credentialId: string;

    before(async () => {
      world = await startIssuerWorld(kind);
      const put = await world.api('PUT', '/v1/issuer/configurations/degree', {
        format: 'dc+sd-jwt',
        vct: 'https://example.edu/degree',
        claims: [{ path: ['degree'] }],
        status: true,
      });
      assert.equal(put.status, 201, put.text);
      const offer = await world.api('POST', '/v1/issuer/offers', {
        configuration_ids: ['degree'],
        claims: { degree: { degree: 'BSc' } },
      });
      const document = (await (await fetch(offer.body.data.credential_offer_uri)).json()) as any;
      const token = await world.server.request('POST', '/v2/openidc/token', {
        body: {
          grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
          'pre-authorized_code':
            document.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code']['pre-authorized_code'],
        },
      });
      const { c_nonce } = (await (await fetch(`${world.issuerId}/nonce`, { method: 'POST' })).json()) as any;
      const key = await proofKey();
      const credential = await fetch(`${world.issuerId}/credential`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token.body.access_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          credential_configuration_id: 'degree',
          proofs: { jwt: [await key.proof({ aud: world.issuerId, nonce: c_nonce })] },
        }),
      });
      assert.equal(credential.status, 200, await credential.text());
      const tracking = await world.api('GET', `/v1/issuer/offers/${offer.body.data.id}`);
      list = tracking.body.data.credentials[0].status_list;
      credentialId = tracking.body.data.credentials[0].id;
    });
    after(() => world.close());

    const get = (accept?: string, etag?: string) =>
      fetch(list.uri, {
        headers: { ...(accept ? { accept } : {}), ...(etag ? { 'if-none-match': etag } : {}) },
      });

    /** The CWT checked as a verifier would: COSE_Sign1 over its x5chain certificate, then its claims. */
    async function readCwt(response: Response) {
      const body = new Uint8Array(await response.arrayBuffer());
      const sign1 = decode(body) as { tag: number; value: unknown };
      assert.equal(sign1.tag, 18, 'COSE_Sign1_Tagged');
      const [protectedBytes, unprotected, payload, signature] = sign1.value as [
        Uint8Array,
        any,
        Uint8Array,
        Uint8Array,
      ];
      const header = decode(protectedBytes) as Map<number, unknown> | Record<number, unknown>;
      const typ = header instanceof Map ? header.get(16) : header[16];
      assert.equal(typ, CWT);
      const x5chain = unprotected instanceof Map ? unprotected.get(33) : unprotected[33];
      const leaf = new X509Certificate(Buffer.from(Array.isArray(x5chain) ? x5chain[0] : x5chain));
      const toBeSigned = encode(['Signature1', protectedBytes, new Uint8Array(0), payload]);
      assert.ok(
        verify('sha256', toBeSigned, { key: leaf.publicKey, dsaEncoding: 'ieee-p1363' }, signature),
        'signed by the issuer certificate it names',
      );
      const claims = decode(payload) as Map<number, any> | Record<number, any>;
      const claim = (n: number) => (claims instanceof Map ? claims.get(n) : claims[n]);
      assert.equal(claim(2), list.uri, 'sub is the list uri');
      const statusList = claim(65533);
      const bits = statusList instanceof Map ? statusList.get('bits') : statusList.bits;
      const lst = statusList instanceof Map ? statusList.get('lst') : statusList.lst;
      return statusAt(lst, bits, list.index);
    }

    async function readJwt(response: Response) {
      const text = await response.text();
      const claims = decodeJwt(text) as any;
      const { protectedHeader } = await compactVerify(
        text,
        await importX509(
          `-----BEGIN CERTIFICATE-----\n${(JSON.parse(Buffer.from(text.split('.')[0]!, 'base64url').toString()) as any).x5c[0]}\n-----END CERTIFICATE-----`,
          'ES256',
        ),
      );
      assert.equal(protectedHeader.typ, 'statuslist+jwt');
      assert.equal(claims.sub, list.uri);
      return statusAt(Buffer.from(claims.status_list.lst, 'base64url'), claims.status_list.bits, list.index);
    }

    it('serves the JWT by default and when both forms are equally acceptable', async () => {
      for (const accept of [undefined, '*/*', `${JWT}, ${CWT}`, `${CWT}, ${JWT}`]) {
        const response = await get(accept);
        assert.equal(response.status, 200);
        assert.equal(response.headers.get('content-type'), JWT, String(accept));
        assert.match(response.headers.get('vary') ?? '', /accept/i);
        assert.equal(await readJwt(response), 0);
      }
    });

    it('serves the CWT when asked for it, or when the JWT is less wanted or refused (q-values)', async () => {
      for (const accept of [
        CWT,
        `${CWT}, ${JWT};q=0`,
        `${JWT};q=0.5, ${CWT}`,
        'Application/StatusList+CWT',
      ]) {
        const response = await get(accept);
        assert.equal(response.status, 200);
        assert.equal(response.headers.get('content-type'), CWT, accept);
        assert.equal(await readCwt(response), 0);
      }
    });

    it('keeps an ETag per form, and both forms show a revocation', async () => {
      const jwt = await get(JWT);
      const cwt = await get(CWT);
      const jwtTag = jwt.headers.get('etag')!;
      const cwtTag = cwt.headers.get('etag')!;
      assert.notEqual(jwtTag, cwtTag);
      assert.equal((await get(CWT, cwtTag)).status, 304);
      assert.equal((await get(JWT, cwtTag)).status, 200, "the CWT's tag does not stand for the JWT");
      const revoked = await world.api(
        'POST',
        `/v1/issuer/credentials/${encodeURIComponent(credentialId)}/status`,
        {
          status: 'revoked',
        },
      );
      assert.equal(revoked.status, 200, revoked.text);
      assert.equal((await get(CWT, cwtTag)).status, 200, 'a changed list is sent again');
      assert.equal(await readCwt(await get(CWT)), 1);
      assert.equal(await readJwt(await get(JWT)), 1);
    });
  });
}
