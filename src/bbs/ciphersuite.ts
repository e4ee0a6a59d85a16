/**
 * Constants of the BBS ciphersuite BLS12-381-SHA-256 (IETF draft-irtf-cfrg-bbs-signatures,
 * the revision whose fixtures live in ../shared/vectors/ietf-bbs-bls12-381-sha-256/).
 */
import { bls12_381_Fr } from '@noble/curves/bls12-381.js';

const ascii = (text: string): Uint8Array => new TextEncoder().encode(text);

export const CIPHERSUITE_ID = 'BBS_BLS12381G1_XMD:SHA-256_SSWU_RO_';
/** The core (non-blind, non-pseudonym) interface: hash to generators, hash messages to scalars. */
export const API_ID = ascii(`${CIPHERSUITE_ID}H2G_HM2S_`);

/** The scalar field Fr; its order is `r`. */
export const Fr = bls12_381_Fr;
export const SCALAR_ORDER = Fr.ORDER;

export const SCALAR_LENGTH = 32;
export const G1_POINT_LENGTH = 48;
export const G2_POINT_LENGTH = 96;
/** ceil((ceil(log2(r)) + k) / 8) with k = 128: enough bytes for a scalar mod r with negligible bias. */
export const EXPAND_LENGTH = 48;

export const SIGNATURE_LENGTH = G1_POINT_LENGTH + SCALAR_LENGTH;
/** Abar, Bbar, D and the scalars e^, r1^, r3^, c: a proof with no undisclosed message. */
export const PROOF_MIN_LENGTH = 3 * G1_POINT_LENGTH + 4 * SCALAR_LENGTH;

/** P1, the fixed G1 point of the ciphersuite (compressed). */
export const P1_BYTES = Uint8Array.from(
  Buffer.from(
    'a8ce256102840821a3e94ea9025e4662b205762f9776b3a766c872b948f1fd225e7c59698588e70d11406d161b4e28c9',
    'hex',
  ),
);

export const HASH_TO_SCALAR_DST = ascii(`${CIPHERSUITE_ID}H2G_HM2S_H2S_`);
export const MAP_MESSAGE_TO_SCALAR_DST = ascii(`${CIPHERSUITE_ID}H2G_HM2S_MAP_MSG_TO_SCALAR_AS_HASH_`);
/** KeyGen's default DST is built on the ciphersuite id, not on the api id (as in the stock library). */
export const KEYGEN_DST = ascii(`${CIPHERSUITE_ID}KEYGEN_DST_`);
export const GENERATOR_SEED = ascii(`${CIPHERSUITE_ID}H2G_HM2S_MESSAGE_GENERATOR_SEED`);
export const GENERATOR_SEED_DST = ascii(`${CIPHERSUITE_ID}H2G_HM2S_SIG_GENERATOR_SEED_`);
export const GENERATOR_DST = ascii(`${CIPHERSUITE_ID}H2G_HM2S_SIG_GENERATOR_DST_`);
/** The DST of the draft's mocked random scalars, used only to reproduce its proof fixtures. */
export const MOCK_RANDOM_SCALARS_DST = ascii(`${CIPHERSUITE_ID}H2G_HM2S_MOCK_RANDOM_SCALARS_DST_`);

/**
 * Upper bound on the number of signed messages. Proof verification derives the message count
 * from the proof's length, and each new generator costs a hash to curve (~2 ms, cached for good
 * afterwards), so an unbounded count would let one request stall the process.
 */
export const MAX_MESSAGES = 1024;
