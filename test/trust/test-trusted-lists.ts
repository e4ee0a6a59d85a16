import { webcrypto } from 'node:crypto';
import { createServer } from 'node:https';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { DOMParser, XMLSerializer } from '@xmldom/xmldom';
import { CompactSign } from 'jose';
import * as xadesjs from 'xadesjs';
import { type Certified, makeCertificate, privateKeyPem } from '../oid4vp/certificates.ts';

/**
 * Trusted lists made in the tests: ETSI TS 119 612 XML signed with xadesjs (an enveloped XAdES
 * signature, as trusted-list operators make them), ETSI TS 119 602 LoTE JSON signed with jose,
 * and an HTTPS server on 127.0.0.1 under a CA of the test's own to publish them, take them down
 * or serve something else in their place. None of it is Coffer's code.
 */

xadesjs.Application.setEngine('NodeJS', webcrypto as never);
xadesjs.setNodeDependencies({ DOMParser, XMLSerializer, xpath: createRequire(import.meta.url)('xpath') });

const TSL = 'http://uri.etsi.org/02231/v2#';
export const GRANTED = 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted';
export const WITHDRAWN = 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/withdrawn';
export const PID_PROVIDER = 'http://uri.etsi.org/Svc/Svctype/Provider/PID';
export const QEAA = 'http://uri.etsi.org/TrstSvc/Svctype/EAA/Q';
export const WALLET_PROVIDER = 'http://uri.etsi.org/Svc/Svctype/Provider/WalletProvider';
export const LOTE_PID_ISSUANCE = 'http://uri.etsi.org/19602/SvcType/PID/Issuance';

export interface TestService {
  type: string;
  name: string;
  status?: string;
  certificates: Certified[];
}

export interface TestList {
  nextUpdate?: Date;
  sequence?: number;
  territory?: string;
  pointers?: { url: string; signers: Certified[] }[];
  services?: TestService[];
}

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
const day = () => new Date(Date.now() + 86_400_000);
const identities = (certs: Certified[]) =>
  certs
    .map(
      (c) =>
        `<ServiceDigitalIdentity><DigitalId><X509Certificate>${c.der}</X509Certificate></DigitalId></ServiceDigitalIdentity>`,
    )
    .join('');

/** The unsigned XML of a 119 612 list. */
export function etsiListXml(list: TestList): string {
  const pointers = (list.pointers ?? [])
    .map(
      (p) =>
        `<OtherTSLPointer><ServiceDigitalIdentities>${identities(p.signers)}</ServiceDigitalIdentities><TSLLocation>${escapeXml(p.url)}</TSLLocation></OtherTSLPointer>`,
    )
    .join('');
  const services = (list.services ?? [])
    .map(
      (s) =>
        `<TrustServiceProvider><TSPInformation><TSPName><Name xml:lang="en">${escapeXml(s.name)} provider</Name></TSPName></TSPInformation><TSPServices><TSPService><ServiceInformation><ServiceTypeIdentifier>${s.type}</ServiceTypeIdentifier><ServiceName><Name xml:lang="en">${escapeXml(s.name)}</Name></ServiceName>${identities(s.certificates)}<ServiceStatus>${s.status ?? GRANTED}</ServiceStatus><StatusStartingTime>2025-01-01T00:00:00Z</StatusStartingTime></ServiceInformation></TSPService></TSPServices></TrustServiceProvider>`,
    )
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?><TrustServiceStatusList xmlns="${TSL}" Id="tsl" TSLTag="http://uri.etsi.org/19612/TSLTag"><SchemeInformation><TSLVersionIdentifier>6</TSLVersionIdentifier><TSLSequenceNumber>${list.sequence ?? 1}</TSLSequenceNumber><SchemeTerritory>${list.territory ?? 'EU'}</SchemeTerritory>${pointers ? `<PointersToOtherTSL>${pointers}</PointersToOtherTSL>` : ''}<ListIssueDateTime>${new Date().toISOString()}</ListIssueDateTime><NextUpdate><dateTime>${(list.nextUpdate ?? day()).toISOString()}</dateTime></NextUpdate></SchemeInformation>${services ? `<TrustServiceProviderList>${services}</TrustServiceProviderList>` : ''}</TrustServiceStatusList>`;
}

/** Signs XML with an enveloped XAdES-BES signature over the whole document by `signer`. */
export async function signXml(xml: string, signer: Certified): Promise<string> {
  const document = new DOMParser().parseFromString(xml, 'text/xml');
  const signature = await new xadesjs.SignedXml().Sign(
    { name: 'ECDSA', hash: 'SHA-256' } as never,
    signer.keys.privateKey as never,
    document as never,
    {
      x509: [signer.der],
      signingCertificate: signer.der,
      references: [{ uri: '', hash: 'SHA-256', transforms: ['enveloped', 'exc-c14n'] }],
    },
  );
  document.documentElement!.appendChild(signature.GetXml() as never);
  return new XMLSerializer().serializeToString(document);
}

export const signEtsiList = (list: TestList, signer: Certified) => signXml(etsiListXml(list), signer);

/** A 119 602 LoTE payload, signed as a compact JWS with the signer's certificate in x5c. */
export async function signLote(
  list: TestList,
  signer: Certified,
  x5c: Certified[] = [signer],
): Promise<string> {
  const lote = {
    LoTE: {
      ListAndSchemeInformation: {
        LoTEVersionIdentifier: 1,
        LoTESequenceNumber: list.sequence ?? 1,
        LoTEType: 'http://uri.etsi.org/19602/LoTEType/EUPIDProvidersList',
        SchemeOperatorName: [{ lang: 'en', value: 'Test scheme operator' }],
        SchemeTerritory: list.territory ?? 'EU',
        ListIssueDateTime: new Date().toISOString(),
        NextUpdate: (list.nextUpdate ?? day()).toISOString(),
      },
      TrustedEntitiesList: (list.services ?? []).map((s) => ({
        TrustedEntityInformation: { TEName: [{ lang: 'en', value: `${s.name} provider` }] },
        TrustedEntityServices: [
          {
            ServiceInformation: {
              ServiceTypeIdentifier: s.type,
              ServiceName: [{ lang: 'en', value: s.name }],
              ...(s.status ? { ServiceStatus: s.status } : {}),
              ServiceDigitalIdentity: { X509Certificates: s.certificates.map((c) => ({ val: c.der })) },
            },
          },
        ],
      })),
    },
  };
  return new CompactSign(new TextEncoder().encode(JSON.stringify(lote)))
    .setProtectedHeader({ alg: 'ES256', typ: 'JWT', x5c: x5c.map((c) => c.der) })
    .sign(signer.keys.privateKey);
}

export const newListSigner = (name = 'Test Trusted List Signer') =>
  makeCertificate({ subject: `CN=${name}, O=Test Scheme Operator, C=EU` });

export interface ListServer {
  url: string;
  ca: Certified;
  /** Paths requested, in order. */
  served: string[];
  /** Publishes `body` at `path`; `null` makes the path answer 503 (the list server is down). */
  put(path: string, body: string | null): void;
  close(): Promise<void>;
}

export async function startListServer(): Promise<ListServer> {
  const ca = await makeCertificate({ subject: 'CN=Test Trusted List TLS CA', ca: true });
  const leaf = await makeCertificate({ subject: 'CN=127.0.0.1', issuer: ca, ipAddresses: ['127.0.0.1'] });
  const bodies = new Map<string, string | null>();
  const served: string[] = [];
  const server = createServer(
    { key: await privateKeyPem(leaf.keys.privateKey), cert: leaf.pem },
    (request, response) => {
      const path = new URL(request.url ?? '/', 'https://127.0.0.1').pathname;
      served.push(path);
      const body = bodies.get(path);
      if (body === null) return response.writeHead(503).end('down');
      if (body === undefined) return response.writeHead(404).end('not found');
      response
        .writeHead(200, { 'content-type': body.startsWith('<') ? 'application/xml' : 'application/jwt' })
        .end(body);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ca,
    served,
    put: (path, body) => bodies.set(path, body),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
