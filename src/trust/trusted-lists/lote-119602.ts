import type { X509Certificate } from 'node:crypto';
import { compactVerify, decodeProtectedHeader } from 'jose';
import { parseCertificate } from '../../keys/certificate-chain.ts';
import { TrustError } from '../trust-error.ts';
import type { ListedService, ListPointer, ReadList } from './trusted-list.ts';

/**
 * An ETSI TS 119 602 list of trusted entities (LoTE): JSON in a JAdES compact JWS, verified with
 * jose against a pinned signer (the header's x5c, when present, must begin with one of them).
 * Fields read, all under `LoTE` (or at the top, as some publishers send it):
 * `ListAndSchemeInformation.{NextUpdate, LoTESequenceNumber, SchemeTerritory, PointersToOtherLoTE[].{LoTELocation, ServiceDigitalIdentities[].X509Certificates[].val}}`
 * and `TrustedEntitiesList[].TrustedEntityServices[].ServiceInformation.{ServiceTypeIdentifier, ServiceName[], ServiceStatus, ServiceDigitalIdentity.X509Certificates[].val}`.
 */

const ALGORITHMS = ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512', 'EdDSA'];
const invalid = (message: string) => new TrustError('invalid_list', message);
const badSignature = (message: string) => new TrustError('signature_invalid', message);

type Json = Record<string, unknown>;
const object = (value: unknown): Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
const array = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const string = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim() : undefined);

function certificatesOf(identity: unknown, url: string): X509Certificate[] {
  return array(object(identity)['X509Certificates']).map((entry) => {
    try {
      return parseCertificate(Buffer.from(string(object(entry)['val']) ?? '', 'base64'));
    } catch {
      throw invalid(`${url} lists a certificate that cannot be read`);
    }
  });
}

/** The English name of a multilingual list ([{lang, value}]), else the first. */
function nameOf(names: unknown): string {
  const all = array(names).map(object);
  const english = all.find((n) =>
    String(n['lang'] ?? '')
      .toLowerCase()
      .startsWith('en'),
  );
  return string((english ?? all[0])?.['value']) ?? '';
}

/** The payload, once the JWS verifies with a pinned signer's key. */
async function verifiedPayload(jws: string, url: string, signers: X509Certificate[]): Promise<Json> {
  let candidates = signers;
  try {
    const { x5c } = decodeProtectedHeader(jws);
    if (x5c !== undefined) {
      const first =
        Array.isArray(x5c) && typeof x5c[0] === 'string' ? Buffer.from(x5c[0], 'base64') : undefined;
      candidates = signers.filter((signer) => first && signer.raw.equals(first));
      if (candidates.length === 0)
        throw badSignature(`${url} is signed by a certificate that is not a configured signer`);
    }
  } catch (error) {
    if (error instanceof TrustError) throw error;
    throw invalid(`${url} is not a compact JWS`);
  }
  for (const signer of candidates) {
    try {
      const { payload } = await compactVerify(jws, signer.publicKey, { algorithms: ALGORITHMS });
      return object(JSON.parse(new TextDecoder().decode(payload)));
    } catch {
      // Not this signer's signature (or not JSON): try the next one.
    }
  }
  throw badSignature(`${url}: the signature does not verify with any configured signer certificate`);
}

export async function readListOfTrustedEntities(
  body: string,
  url: string,
  signers: X509Certificate[],
): Promise<ReadList> {
  const payload = await verifiedPayload(body.trim(), url, signers);
  const lote = object(payload['LoTE'] ?? payload);
  const scheme = object(lote['ListAndSchemeInformation']);
  const next = scheme['NextUpdate'];
  const nextUpdate = new Date(string(next) ?? string(object(next)['dateTime']) ?? '');
  if (Number.isNaN(nextUpdate.getTime())) throw invalid(`${url} has no NextUpdate`);
  const sequence = scheme['LoTESequenceNumber'];
  const pointers: ListPointer[] = array(scheme['PointersToOtherLoTE']).flatMap((pointer) => {
    const location = string(object(pointer)['LoTELocation']);
    const signersOf = array(object(pointer)['ServiceDigitalIdentities']).flatMap((i) =>
      certificatesOf(i, url),
    );
    return location && signersOf.length ? [{ url: location, signers: signersOf }] : [];
  });
  const services: ListedService[] = array(lote['TrustedEntitiesList'])
    .flatMap((entity) => array(object(entity)['TrustedEntityServices']))
    .map((service) => {
      const info = object(object(service)['ServiceInformation']);
      return {
        type: string(info['ServiceTypeIdentifier']) ?? '',
        name: nameOf(info['ServiceName']),
        status: string(info['ServiceStatus']),
        certificates: certificatesOf(info['ServiceDigitalIdentity'], url),
      };
    });
  return {
    nextUpdate,
    territory: string(scheme['SchemeTerritory']),
    sequenceNumber: typeof sequence === 'number' && Number.isInteger(sequence) ? sequence : undefined,
    pointers,
    services,
  };
}
