import { randomBytes } from 'node:crypto';
import type { JWK } from 'jose';
import type { Attester } from './haip-world.ts';
import { bareJwk, newSuiteKey, randomString, type SuiteKey, seconds, signCompact } from './keys.ts';

/**
 * One client of the suite's configuration (`client`, `client2`) under the VCI HAIP profile: a
 * wallet whose client authentication is a client attestation (OAuth 2.0 Attestation-Based
 * Client Authentication, draft 07, as OpenID4VCI 1.0 Annex E and HAIP 1.0 §4.4.1 use it), with
 * an ES256 DPoP key and generated proof keys (VCIGenerateClientJwksIfMissing).
 */
export class SuiteClient {
  readonly clientId: string;
  /** GenerateClientAttestationClientInstanceKey: cnf of the attestation, signs its PoP. */
  instanceKey: SuiteKey;
  /** CreateClientAttestationJwt */
  attestation = '';
  /** GenerateDpopKey (made on first need, as the suite does). */
  dpopKey: SuiteKey | undefined;
  /** The client JWKS: the keys the credential proofs are made with. */
  readonly proofKeys: SuiteKey[];
  redirectUri: string;
  /** The DPoP-Nonce values last given by the authorization server and the credential issuer. */
  asNonce: string | undefined;
  rsNonce: string | undefined;

  readonly attester: Attester;

  constructor(clientId: string, redirectUri: string, attester: Attester) {
    this.attester = attester;
    this.clientId = clientId;
    this.redirectUri = redirectUri;
    this.instanceKey = newSuiteKey();
    this.proofKeys = [newSuiteKey()];
  }

  /** CreateClientAttestationJwt: iss the attester, sub the client_id, five minutes, cnf the instance key. */
  async createClientAttestation(): Promise<string> {
    const now = seconds();
    this.attestation = await signCompact(
      { alg: 'ES256', typ: 'oauth-client-attestation+jwt', x5c: this.attester.x5c },
      {
        iss: 'https://attester.suite.example',
        sub: this.clientId,
        iat: now,
        nbf: now,
        exp: now + 300,
        cnf: { jwk: bareJwk(this.instanceKey.publicJwk) },
      },
      this.attester.privateKey,
    );
    return this.attestation;
  }

  /**
   * AddClientAttestationClientAuthToEndpointRequest: CreateClientAttestationProofJwt (iss the
   * client_id, aud the authorization server's issuer, a fresh jti, iat now), then the two headers.
   */
  async clientAttestationHeaders(audience: string): Promise<Record<string, string>> {
    const pop = await signCompact(
      { alg: 'ES256', typ: 'oauth-client-attestation-pop+jwt' },
      { iss: this.clientId, aud: audience, jti: randomString(), iat: seconds() },
      this.instanceKey.privateKey,
    );
    return { 'oauth-client-attestation': this.attestation, 'oauth-client-attestation-pop': pop };
  }

  /** GenerateDpopKey, if there is none yet. */
  dpop(): SuiteKey {
    this.dpopKey ??= newSuiteKey();
    return this.dpopKey;
  }

  /** The client's public JWKS (ExtractJWKsFromStaticClientConfiguration). */
  publicJwks(): JWK[] {
    return this.proofKeys.map((k) => k.publicJwk);
  }
}

/** A client_id the tester would configure; unique per run so PoP jti memories never collide. */
export const newClientId = (n: number) => `suite-wallet-${n}-${randomBytes(4).toString('hex')}`;
