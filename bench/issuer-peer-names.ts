/** Names the bare bench issuer (bench/issuer-peer.ts) and its load generator (bench/issuer.ts) share. */
export const PEER_ISSUER_ID = 'https://issuer.bench.example';
export const PEER_VCT = 'https://bench.example/person';
export const PEER_DOCTYPE_NAME = 'org.example.bench.person';
