import { createHash } from 'node:crypto';
import { cborEncode, DataItem } from '@owf/mdoc';
import type { Audience } from '../credential-format.ts';

/**
 * The ISO 18013-5 SessionTranscript of an OpenID4VP 1.0 presentation (Appendix B.2.6) and the
 * DeviceAuthenticationBytes a DeviceSignature covers. Built here, array by array, rather than
 * asked of an mdoc library: libraries have shipped earlier drafts' handovers under the same name
 * (DESIGN.md, Known facts). The hosted wallet signs over these bytes and the verifier checks
 * against them, so both sides use this one builder.
 */

/** `[DeviceEngagementBytes, EReaderKeyBytes, Handover]`; both key fields are null for OpenID4VP. */
export type SessionTranscript = [null, null, [handover: string, infoHash: Uint8Array]];

const sha256 = (bytes: Uint8Array) => new Uint8Array(createHash('sha256').update(bytes).digest());

/**
 * The SessionTranscript bound to one request. With `origin` (the Digital Credentials API caller,
 * without the `origin:` prefix) it carries `OpenID4VPDCAPIHandover` over `[origin, nonce,
 * jwkThumbprint]` (B.2.6.2); otherwise `OpenID4VPHandover` over `[client_id, nonce,
 * jwkThumbprint, response_uri]` (B.2.6.1). The thumbprint is the response encryption key's, or
 * null when the response is not encrypted.
 */
export function oid4vpSessionTranscript(audience: Audience, origin?: string): SessionTranscript {
  const thumbprint = audience.encryptionJwkThumbprint ?? null;
  if (origin !== undefined) {
    const info = cborEncode([origin, audience.nonce, thumbprint]);
    return [null, null, ['OpenID4VPDCAPIHandover', sha256(info)]];
  }
  const info = cborEncode([audience.clientId, audience.nonce, thumbprint, audience.responseUri]);
  return [null, null, ['OpenID4VPHandover', sha256(info)]];
}

/**
 * DeviceAuthenticationBytes (ISO 18013-5 §9.1.3.4): tag 24 over
 * `["DeviceAuthentication", SessionTranscript, DocType, DeviceNameSpacesBytes]`, the detached
 * payload of a DeviceSignature. `deviceNameSpaces` is the tag-24 item as the document carries it,
 * so a verifier hashes the wallet's bytes, not a re-encoding of them.
 */
export function deviceAuthenticationBytes(
  transcript: SessionTranscript,
  docType: string,
  deviceNameSpaces: DataItem,
): Uint8Array {
  return cborEncode(DataItem.fromData(['DeviceAuthentication', transcript, docType, deviceNameSpaces]));
}
