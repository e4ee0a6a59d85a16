import { namesIssuer } from '../../keys/certificate-fields.ts';
import { rejected } from '../credential-format.ts';
import type { IssuerKey } from '../jose-credentials.ts';

/**
 * SD-JWT VC, "Issuer-signed JWT Verification Key Validation" (X.509): when the key comes from an
 * `x5c` certificate and `iss` is an https URI, the leaf must name that issuer — a dNSName of its
 * host, or the URI itself. Otherwise any holder of a certificate from a trusted CA could sign in
 * another issuer's name (a university's certificate issuing a government's PID).
 */
export function checkIssuerNamedByCertificate(payload: Record<string, unknown>, issuer: IssuerKey): void {
  const iss = payload['iss'];
  if (!issuer.leaf || typeof iss !== 'string' || !iss.startsWith('https://')) return;
  if (!namesIssuer(issuer.leaf, iss)) {
    throw rejected(
      `its iss ${iss.slice(0, 200)} is not named by its x5c certificate (a dNSName of its host, or the URI, in the subject alternative name)`,
    );
  }
}
