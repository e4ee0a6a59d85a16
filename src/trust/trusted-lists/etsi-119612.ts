import type { X509Certificate } from 'node:crypto';
import type { Element, Node } from '@xmldom/xmldom';
import { parseCertificate } from '../../keys/certificate-chain.ts';
import { TrustError } from '../trust-error.ts';
import type { ListedService, ListPointer, ReadList } from './trusted-list.ts';
import { verifiedRoot } from './xml-signature.ts';

/**
 * An ETSI TS 119 612 trusted list (XML): its signature checked first (xml-signature.ts), then read
 * from the signed root only — SchemeInformation (TSLSequenceNumber, SchemeTerritory,
 * PointersToOtherTSL, NextUpdate) and every TSPService (type, name, status, X509Certificate
 * digital identities).
 */

const TSL = 'http://uri.etsi.org/02231/v2#';
const invalid = (message: string) => new TrustError('invalid_list', message);

function children(parent: Element, name: string): Element[] {
  return Array.from(parent.childNodes as ArrayLike<Node>).filter(
    (n): n is Element =>
      n.nodeType === 1 && (n as Element).namespaceURI === TSL && (n as Element).localName === name,
  );
}
/** The element at the end of a path of TSL-namespace children (the first at each step). */
const at = (parent: Element, ...path: string[]): Element | undefined =>
  path.reduce<Element | undefined>((el, name) => (el ? children(el, name)[0] : undefined), parent);
/** Every element reached by a path, fanning out at each step. */
const all = (parent: Element, ...path: string[]): Element[] =>
  path.reduce<Element[]>((els, name) => els.flatMap((el) => children(el, name)), [parent]);
const text = (el: Element | undefined) => el?.textContent?.trim() || undefined;

/** The X509Certificate digital identities under `identities` (ServiceDigitalIdentity elements). */
function certificatesOf(identities: Element[], url: string): X509Certificate[] {
  return identities
    .flatMap((identity) => all(identity, 'DigitalId', 'X509Certificate'))
    .map((el) => {
      try {
        return parseCertificate(Buffer.from(text(el) ?? '', 'base64'));
      } catch {
        throw invalid(`${url} lists a certificate that cannot be read`);
      }
    });
}

/** The name in English, else the first one given. */
function nameOf(names: Element | undefined): string {
  const all = names ? children(names, 'Name') : [];
  const english = all.find((n) => (n.getAttribute('xml:lang') ?? '').toLowerCase().startsWith('en'));
  return text(english ?? all[0]) ?? '';
}

export async function readEtsiTrustedList(
  body: string,
  url: string,
  signers: X509Certificate[],
): Promise<ReadList> {
  const root = await verifiedRoot(body, url, signers);
  if (root.namespaceURI !== TSL || root.localName !== 'TrustServiceStatusList')
    throw invalid(`${url} is not a TrustServiceStatusList`);
  const scheme = at(root, 'SchemeInformation');
  if (!scheme) throw invalid(`${url} has no SchemeInformation`);
  const nextUpdate = new Date(text(at(scheme, 'NextUpdate', 'dateTime')) ?? '');
  if (Number.isNaN(nextUpdate.getTime()))
    throw invalid(`${url} has no NextUpdate (a closed list trusts no one)`);
  const sequence = Number(text(at(scheme, 'TSLSequenceNumber')));
  const pointers: ListPointer[] = all(scheme, 'PointersToOtherTSL', 'OtherTSLPointer').flatMap((pointer) => {
    const location = text(at(pointer, 'TSLLocation'));
    // A pointer to a PDF rendering or one naming no signer cannot be followed.
    const signersOf = certificatesOf(all(pointer, 'ServiceDigitalIdentities', 'ServiceDigitalIdentity'), url);
    if (!location || signersOf.length === 0 || location.toLowerCase().endsWith('.pdf')) return [];
    return [{ url: location, signers: signersOf }];
  });
  const services: ListedService[] = all(
    root,
    'TrustServiceProviderList',
    'TrustServiceProvider',
    'TSPServices',
    'TSPService',
    'ServiceInformation',
  ).map((info) => ({
    type: text(at(info, 'ServiceTypeIdentifier')) ?? '',
    name: nameOf(at(info, 'ServiceName')),
    status: text(at(info, 'ServiceStatus')) ?? '',
    certificates: certificatesOf(children(info, 'ServiceDigitalIdentity'), url),
  }));
  return {
    nextUpdate,
    territory: text(at(scheme, 'SchemeTerritory')),
    sequenceNumber: Number.isInteger(sequence) ? sequence : undefined,
    pointers,
    services,
  };
}
