import type { VerifierVariant } from './variants.ts';
import type { SuiteWalletWorld } from './world.ts';

// biome-ignore lint/suspicious/noExplicitAny: what the verifier sends is arbitrary JSON
export type Json = any;

/** An HTTP exchange as the suite records it (`convertResponseForEnvironment`). */
export interface RecordedResponse {
  status: number;
  headers: Headers;
  body: string;
  /** The body parsed as JSON, when it is JSON. */
  json?: Json;
}

/** A parsed request object: the compact JWS, its protected header and claims. */
export interface RequestObject {
  value: string;
  header: Json;
  claims: Json;
}

/**
 * What one module run of the suite's wallet knows, by the names of the suite's environment
 * (`authorization_endpoint_http_request_params`, `authorization_request_object`, the effective
 * request, `nonce`, `dcql_query`, the response parameters, `direct_post_response`).
 */
export interface WalletEnv {
  world: SuiteWalletWorld;
  variant: VerifierVariant;
  /** The tenant's request at Coffer (its id), for reading the verifier's result. */
  verifierRequestId: string;
  /** The suite's server configuration (OIDCCGenerateServerConfiguration). */
  server: { issuer: string; authorization_endpoint: string; request_uri_parameter_supported?: boolean };
  /** The expected client (`client.client_id`), configured or derived from the request. */
  client: { client_id?: string };
  /** `client_request_object_trust_anchor_pem`. */
  trustAnchorPem?: string;
  /** The query of the `openid4vp://` request, as delivered to the suite's /authorize. */
  httpParams: Record<string, string>;
  requestObject?: RequestObject;
  requestUriPostResponse?: RecordedResponse;
  walletNonce?: string;
  effective: Json;
  nonce: string;
  dcql: Json;
  responseParams: Record<string, unknown>;
  /** The presentation (SD-JWT+KB, or a base64url DeviceResponse). */
  credential: string;
  holderPrivateJwk?: Json;
  sessionTranscript?: Uint8Array;
  formParams: Record<string, string>;
  directPostResponse?: RecordedResponse;
}

/** A condition's failure: the sentence the suite would log. */
export function fail(message: string): never {
  throw new Error(message);
}

export const isObject = (value: unknown): value is Record<string, Json> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Reads a response the way the suite records it: status, headers, body and its JSON if any. */
export async function recordResponse(response: Response): Promise<RecordedResponse> {
  const body = await response.text();
  let json: Json;
  try {
    json = JSON.parse(body);
  } catch {}
  return {
    status: response.status,
    headers: response.headers,
    body,
    ...(json === undefined ? {} : { json }),
  };
}

/** The media type of a Content-Type header, parameters dropped. */
export const mediaTypeOf = (contentType: string | null) => contentType?.split(';')[0]?.trim() ?? null;
