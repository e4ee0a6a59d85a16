// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary CBOR
import assert from 'node:assert/strict';
import { verify, X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { inflateSync } from 'node:zlib';
import * as cborg from 'cborg';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import type { Certified } from '../oid4vp/certificates.ts';
import { verifyMdoc } from './independent-checks.ts';
import { type InteropIssuer, startInteropIssuer } from './test-wallet.ts';

/**
 * The Token Status List of an mso_mdoc as CWT (draft-ietf-oauth-status-list §6), read with
 * cborg and node:crypto only: the COSE_Sign1 signature (RFC 9052 Sig_structure) checked with
 * the x5chain leaf, chained to the test's CA; the 2-bit entry the mdoc's MSO points at read
 * from the DEFLATE'd list before and after the tenant revokes it.
 */

const MDL = 'org.iso.18013.5.1.mDL';
const MDL_NS = 'org.iso.18013.5.1';
const CWT_MEDIA_TYPE = 'application/statuslist+cwt';

/** CBOR tags met here: 24 (embedded CBOR), 0/1004 (dates in the MSO), 18 (a tagged COSE_Sign1). */
const TAGS: ((inner: any) => any)[] = [];
TAGS[0] = (inner) => inner;
TAGS[18] = (inner) => inner;
TAGS[24] = (inner) => inner;
TAGS[1004] = (inner) => inner;
const decode = (bytes: Uint8Array) => cborg.decode(bytes, { tags: TAGS, useMaps: true });

/** The MSO of an IssuerSigned (base64url CBOR): issuerAuth's payload is tag 24 over the MSO's bytes. */
function msoOf(credential: string): Map<string, any> {
  const issuerSigned = decode(new Uint8Array(Buffer.from(credential, 'base64url'))) as Map<string, any>;
  const [, , payload] = issuerSigned.get('issuerAuth') as Uint8Array[];
  return decode(decode(payload!)) as Map<string, any>;
}

/**
 * A statuslist+cwt: its COSE_Sign1 verified (ES256) with the leaf of its x5chain (header 33),
 * that leaf issued by the CA; its claims (sub 2, iat 6, exp 4, ttl 65534, status_list 65533).
 */
function verifyStatusListCwt(bytes: Uint8Array, ca: Certified) {
  const [protectedBytes, unprotected, payload, signature] = decode(bytes) as [
    Uint8Array,
    Map<number, any>,
    Uint8Array,
    Uint8Array,
  ];
  const protectedHeader = decode(protectedBytes) as Map<number, any>;
  const x5chain = protectedHeader.get(33) ?? unprotected.get(33);
  const first = x5chain instanceof Uint8Array ? x5chain : (x5chain as Uint8Array[])[0]!;
  const leaf = new X509Certificate(first);
  assert.ok(leaf.verify(new X509Certificate(ca.pem).publicKey), 'the x5chain leaf is issued by the CA');
  const toBeSigned = cborg.encode(['Signature1', protectedBytes, new Uint8Array(0), payload]);
  assert.equal(protectedHeader.get(1), -7, 'alg ES256');
  assert.ok(
    verify('sha256', toBeSigned, { key: leaf.publicKey, dsaEncoding: 'ieee-p1363' }, signature),
    'the COSE_Sign1 signature verifies with the x5chain leaf',
  );
  return { protectedHeader, leaf, claims: decode(payload) as Map<number, any> };
}

/** The 2-bit status at `index`: the least significant bits of a byte hold the lowest index. */
function twoBitStatus(claims: Map<number, any>, index: number): number {
  const list = claims.get(65533) as Map<string, any>;
  assert.equal(list.get('bits'), 2);
  const bytes = inflateSync(list.get('lst') as Uint8Array);
  return (bytes[index >> 2]! >> ((index & 3) * 2)) & 0b11;
}

for (const kind of DATABASE_KINDS) {
  describe(`issuer: the Token Status List as CWT, read without Coffer (${kind})`, () => {
    let world: InteropIssuer;
    before(async () => {
      world = await startInteropIssuer(kind);
      const put = await world.api('PUT', '/v1/issuer/configurations/mdl', {
        format: 'mso_mdoc',
        doctype: MDL,
        claims: [{ path: [MDL_NS, 'given_name'], mandatory: true }, { path: [MDL_NS, 'age_over_18'] }],
        status: true,
      });
      assert.equal(put.status, 201, put.text);
    });
    after(() => world.close());

    async function issuedMdoc() {
      const offer = await world.offer({
        configuration_ids: ['mdl'],
        claims: { mdl: { [MDL_NS]: { given_name: 'Ada', age_over_18: true } } },
      });
      const { credentials } = await world.wallet.receive(offer.offer_link);
      const credential = credentials[0] as string;
      await verifyMdoc(credential, world.ca);
      const records = await world.api('GET', `/v1/issuer/credentials?offer=${offer.id}`);
      return { credential, record: records.body.data[0] };
    }

    const fetchCwt = async (uri: string) => {
      const response = await world.front.fetch(uri, { headers: { accept: CWT_MEDIA_TYPE } });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), CWT_MEDIA_TYPE);
      return verifyStatusListCwt(new Uint8Array(await response.arrayBuffer()), world.ca);
    };

    it("the mdoc's MSO status entry points at a statuslist+cwt that is signed by the issuer and shows the revocation", async () => {
      const revoked = await issuedMdoc();
      const kept = await issuedMdoc();
      const entryOf = (credential: string) => {
        const status = msoOf(credential).get('status') as Map<string, any>;
        const entry = status.get('status_list') as Map<string, any>;
        return { uri: entry.get('uri') as string, idx: entry.get('idx') as number };
      };
      const entry = entryOf(revoked.credential);
      const keptEntry = entryOf(kept.credential);
      assert.deepEqual(revoked.record.status_list, { uri: entry.uri, index: entry.idx }, 'the API agrees');
      assert.equal(keptEntry.uri, entry.uri, 'one list for the issuer');
      assert.notEqual(keptEntry.idx, entry.idx);
      assert.ok(entry.uri.startsWith(`${world.server.env['PUBLIC_URL']}/v1/status-lists/`));

      const before = await fetchCwt(entry.uri);
      assert.equal(before.protectedHeader.get(16), CWT_MEDIA_TYPE, 'typ');
      assert.equal(before.leaf.fingerprint256, new X509Certificate(world.leaf.pem).fingerprint256);
      assert.equal(before.claims.get(2), entry.uri, 'sub is the list URI the MSO names');
      const now = Date.now() / 1000;
      assert.ok(Math.abs(before.claims.get(6) - now) < 120, 'iat now');
      assert.ok(before.claims.get(4) > now, 'exp ahead');
      assert.ok(before.claims.get(65534) > 0, 'ttl');
      assert.equal(twoBitStatus(before.claims, entry.idx), 0, 'VALID');
      assert.equal(twoBitStatus(before.claims, keptEntry.idx), 0, 'VALID');

      const change = await world.api(
        'POST',
        `/v1/issuer/credentials/${encodeURIComponent(revoked.record.id)}/status`,
        { status: 'revoked' },
      );
      assert.equal(change.status, 200, change.text);
      const after = await fetchCwt(entry.uri);
      assert.equal(twoBitStatus(after.claims, entry.idx), 1, 'INVALID');
      assert.equal(twoBitStatus(after.claims, keptEntry.idx), 0, 'the other still VALID');

      // Without asking for CWT the same list is a JWT.
      const plain = await world.front.fetch(entry.uri);
      assert.equal(plain.headers.get('content-type'), 'application/statuslist+jwt');
    });
  });
}
