import { webcrypto, type X509Certificate } from 'node:crypto';
import { createRequire } from 'node:module';
import { DOMParser, type Document, type Element, type Node, XMLSerializer } from '@xmldom/xmldom';
import * as xadesjs from 'xadesjs';
import { TrustError } from '../trust-error.ts';

/**
 * An enveloped XAdES signature (ETSI TS 119 612 §5.7.1, EN 319 132) checked with xadesjs against
 * pinned signer certificates — never against the KeyInfo the document carries — and the document
 * root it covers, the only part of the document anyone may read afterwards.
 */

// xpath's typings pull the browser's DOM into every file's globals; its code is all xml-core needs.
const xpath: unknown = createRequire(import.meta.url)('xpath');
xadesjs.Application.setEngine('NodeJS', webcrypto as never);
xadesjs.setNodeDependencies({ DOMParser, XMLSerializer, xpath });

const DSIG = 'http://www.w3.org/2000/09/xmldsig#';
const XADES_PROPERTIES = 'http://uri.etsi.org/01903#SignedProperties';
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';
/** Canonicalisations; any other transform (XPath, XSLT) could leave part of the root unsigned. */
const CANONICAL = new Set([
  'http://www.w3.org/TR/2001/REC-xml-c14n-20010315',
  'http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments',
  'http://www.w3.org/2001/10/xml-exc-c14n#',
  'http://www.w3.org/2001/10/xml-exc-c14n#WithComments',
  'http://www.w3.org/2006/12/xml-c14n11',
]);

const invalid = (message: string) => new TrustError('invalid_list', message);
const badSignature = (message: string) => new TrustError('signature_invalid', message);

/** Parses without DTDs: a DOCTYPE (entities, external references) is refused, not expanded. */
export function parseXml(text: string, url: string): Document {
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw invalid(`${url} declares a DOCTYPE or entities`);
  const fail = (_level: string, message: string) => {
    throw invalid(`${url} is not well-formed XML: ${String(message).slice(0, 200)}`);
  };
  try {
    return new DOMParser({ onError: fail }).parseFromString(text, 'text/xml');
  } catch (error) {
    if (error instanceof TrustError) throw error;
    throw invalid(`${url} is not well-formed XML`);
  }
}

const elementChildren = (parent: Element, ns: string, name: string): Element[] =>
  Array.from(parent.childNodes as ArrayLike<Node>).filter(
    (n): n is Element =>
      n.nodeType === 1 && (n as Element).namespaceURI === ns && (n as Element).localName === name,
  );

/**
 * The one signature, a child of the root, whose every reference is either the whole document
 * (URI "", enveloped, canonicalised only) or its own XAdES SignedProperties — so that no other
 * element can be what was signed while the root says something else (signature wrapping).
 */
function envelopedSignature(document: Document, url: string): Element {
  const root = document.documentElement;
  if (!root) throw badSignature(`${url} has no root element`);
  const all = document.getElementsByTagNameNS(DSIG, 'Signature');
  const own = elementChildren(root, DSIG, 'Signature');
  if (all.length !== 1 || own.length !== 1)
    throw badSignature(`${url} must carry exactly one signature, enveloped in its root element`);
  const signature = own[0]!;
  const signedInfo = elementChildren(signature, DSIG, 'SignedInfo')[0];
  const references = signedInfo ? elementChildren(signedInfo, DSIG, 'Reference') : [];
  let whole = 0;
  for (const reference of references) {
    const uri = reference.getAttribute('URI');
    const transforms = elementChildren(reference, DSIG, 'Transforms').flatMap((t) =>
      elementChildren(t, DSIG, 'Transform').map((e) => e.getAttribute('Algorithm') ?? ''),
    );
    if (uri === '') {
      if (!transforms.includes(ENVELOPED) || !transforms.every((t) => t === ENVELOPED || CANONICAL.has(t)))
        throw badSignature(
          `${url}: the signature over the document must be enveloped and canonicalised only`,
        );
      whole++;
    } else if (reference.getAttribute('Type') === XADES_PROPERTIES && uri?.startsWith('#')) {
      const target = uri.slice(1);
      const properties = signature.getElementsByTagNameNS(
        'http://uri.etsi.org/01903/v1.3.2#',
        'SignedProperties',
      );
      if (!Array.from(properties as ArrayLike<Element>).some((p) => p.getAttribute('Id') === target))
        throw badSignature(`${url}: a reference points outside its signature`);
    } else {
      throw badSignature(`${url}: the signature references something other than the whole document`);
    }
  }
  if (whole !== 1)
    throw badSignature(`${url}: the signature does not cover the whole document (Reference URI="")`);
  return signature;
}

async function verifyingKey(certificate: X509Certificate, algorithm: webcrypto.Algorithm) {
  const jwk = certificate.publicKey.export({ format: 'jwk' });
  const params = jwk.kty === 'EC' ? { ...algorithm, namedCurve: jwk.crv } : algorithm;
  const key = await webcrypto.subtle.importKey('jwk', jwk, params as never, true, ['verify']);
  return { key, params };
}

/**
 * The document root, once its enveloped signature verifies with one of `signers`. Throws
 * `invalid_list` otherwise (no signature, a wrapped one, another key, a changed byte).
 */
export async function verifiedRoot(text: string, url: string, signers: X509Certificate[]): Promise<Element> {
  const document = parseXml(text, url);
  const signatureElement = envelopedSignature(document, url);
  for (const signer of signers) {
    const signed = new xadesjs.SignedXml(document as never);
    try {
      signed.LoadXml(signatureElement as never);
      const { key, params } = await verifyingKey(signer, signed.Algorithm as webcrypto.Algorithm);
      // xmldsigjs re-imports a public key with this algorithm; an EC key needs its curve named.
      signed.Algorithm = params as never;
      if (await signed.Verify(key as never)) return document.documentElement!;
    } catch {
      // A digest that does not match, an algorithm the key cannot do: this signer did not sign it.
    }
  }
  throw badSignature(`${url}: the signature does not verify with any configured signer certificate`);
}
