import { createHash, type X509Certificate } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { anchorOf, MAX_CHAIN, parseCertificate, validAt } from '../keys/certificate-chain.ts';
import { dnsNamesOf, maySign } from '../keys/certificate-fields.ts';
import { invalidRequest, invalidRequestObject, Oid4vpError } from './oid4vp-errors.ts';
import { protectedHeaderOf, verifySignature } from './request-object.ts';

/**
 * Request objects of verifiers identified by certificate (§5.9.3): signed by the key of the leaf
 * certificate in `x5c`, which the client identifier names by hash (`x509_hash`) or by a dNSName
 * SAN (`x509_san_dns`).
 */
export interface VerifierCertificate {
  subject: string;
  issuer: string;
  /** SHA-256 of the DER certificate, hex pairs joined by colons, for people to compare. */
  fingerprint: string;
  notAfter: string;
  /** True when the certificate chains to one of the configured trust anchors. */
  trusted: boolean;
  /** The subject of the trust anchor it chains to, when it does. */
  anchor: string | null;
}

interface Options {
  now: Date;
  trustAnchors: X509Certificate[];
}

const display = (name: string) => name.replaceAll('\n', ', ');

function chainOf(header: { x5c?: unknown }, prefix: string): X509Certificate[] {
  const x5c = header.x5c;
  if (
    !Array.isArray(x5c) ||
    x5c.length === 0 ||
    x5c.length > MAX_CHAIN ||
    !x5c.every((c) => typeof c === 'string')
  ) {
    throw invalidRequestObject(`an ${prefix} request object must carry its certificate chain in x5c`);
  }
  try {
    return x5c.map((der) => parseCertificate(Buffer.from(der, 'base64')));
  } catch {
    throw invalidRequestObject('a certificate in x5c cannot be read');
  }
}

function describe(leaf: X509Certificate, chain: X509Certificate[], options: Options): VerifierCertificate {
  const anchor = anchorOf(leaf, chain.slice(1), options.trustAnchors, options.now);
  return {
    subject: display(leaf.subject),
    issuer: display(leaf.issuer),
    fingerprint: leaf.fingerprint256,
    notAfter: new Date(leaf.validTo).toISOString(),
    trusted: anchor !== undefined,
    anchor: anchor ? display(anchor.subject) : null,
  };
}

/** The leaf must be valid now and allowed to sign; `refuse` makes the error a failure is reported with. */
function checkLeaf(leaf: X509Certificate, now: Date, refuse: (why: string) => Oid4vpError): void {
  if (!validAt(leaf, now)) throw refuse('the verifier certificate is not valid at this time');
  if (!maySign(leaf)) throw refuse('the verifier certificate may not sign (key usage)');
}

/** `x509_hash`: the client identifier is the base64url SHA-256 of the leaf's DER; trust is shown, not required. */
export async function verifyX509HashRequestObject(
  jwt: string,
  expectedHash: string,
  options: Options,
): Promise<{ payload: JWTPayload; certificate: VerifierCertificate }> {
  const header = protectedHeaderOf(jwt);
  const chain = chainOf(header, 'x509_hash');
  const leaf = chain[0]!;
  const digest = createHash('sha256').update(leaf.raw).digest();
  if (digest.toString('base64url') !== expectedHash) {
    throw invalidRequest('the client_id is not the SHA-256 hash of the certificate that signed the request');
  }
  checkLeaf(leaf, options.now, invalidRequestObject);
  const payload = await verifySignature(jwt, leaf.publicKey, header.alg, options.now);
  return { payload, certificate: describe(leaf, chain, options) };
}

/**
 * `x509_san_dns`: the leaf names the client identifier's DNS name in a dNSName SAN (exactly: no
 * wildcard), and the chain must reach VERIFIER_TRUST_ANCHORS; a name anyone can put in a
 * self-signed certificate proves nothing.
 */
export async function verifyX509SanDnsRequestObject(
  jwt: string,
  dnsName: string,
  options: Options,
): Promise<{ payload: JWTPayload; certificate: VerifierCertificate }> {
  const header = protectedHeaderOf(jwt);
  const chain = chainOf(header, 'x509_san_dns');
  const leaf = chain[0]!;
  if (!dnsNamesOf(leaf).includes(dnsName)) {
    throw new Oid4vpError(
      'invalid_client',
      `the certificate that signed the request does not name ${dnsName} in its subject alternative names`,
    );
  }
  checkLeaf(leaf, options.now, (why) => new Oid4vpError('invalid_client', why));
  const certificate = describe(leaf, chain, options);
  if (!certificate.trusted) {
    throw new Oid4vpError(
      'invalid_client',
      'the verifier certificate does not chain to an authority this wallet trusts (VERIFIER_TRUST_ANCHORS)',
    );
  }
  const payload = await verifySignature(jwt, leaf.publicKey, header.alg, options.now);
  return { payload, certificate };
}
