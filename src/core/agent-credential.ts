// The human-backed-agent credential: an SD-JWT VC (draft-ietf-oauth-sd-jwt-vc) the service issues to a registered
// agent for one verifier (the audience). Its always-visible claims say which agent on which registry, who proved the
// human and how strongly, and until when; what the human disclosed (age thresholds, OFAC, nationality) is selectively
// disclosable, so the agent shows a verifier only what it asks. `sub` is a pairwise pseudonym of the human: the same
// for all of one human's agents at one audience, unrelated across audiences. `cnf.jwk` binds it to the agent's key.
import { createHmac } from 'node:crypto';
import type { Address, Hex } from 'viem';
import { keccak256 } from 'viem';
import { ed25519PublicJwk } from './agent-jwk.js';
import type { AgentKeyType } from './agent-key.js';
import type { InterfaceCredentials } from './credentials.js';

/** The credential's type (`vct`): a URN of ours, so no lookup of type metadata is implied. */
export const AGENT_CREDENTIAL_VCT = 'urn:agent-identity-registry:vct:human-backed-agent:1';

/** The longest a credential lives; it never outlives the agent's proof either. */
export const CREDENTIAL_LIFETIME_S = 15 * 60;

/** Longest audience accepted: an origin or a URI names a verifier, nothing needs more. */
export const MAX_AUDIENCE_LENGTH = 512;

/** The claims a holder may withhold, in the order they are disclosed. */
export const SELECTIVE_CLAIMS = ['age_over_18', 'age_over_21', 'ofac_clear', 'nationality'] as const;
export type SelectiveClaim = (typeof SELECTIVE_CLAIMS)[number];

/** The agent's public key as `cnf.jwk`: OKP Ed25519 (EdDSA KB-JWTs) or EC secp256k1 (ES256K KB-JWTs, RFC 8812). */
export type AgentCnfJwk = { kty: 'OKP'; crv: 'Ed25519'; x: string } | { kty: 'EC'; crv: 'secp256k1'; x: string; y: string };

/** The KB-JWT algorithm of an agent key. */
export const kbAlgOf = (jwk: AgentCnfJwk): 'EdDSA' | 'ES256K' => (jwk.kty === 'OKP' ? 'EdDSA' : 'ES256K');

/** What the service knows of the agent when it issues. */
export interface CredentialSubject {
  chainId: number;
  registry: Address;
  agentId: bigint;
  agentAddress: Address;
  provider: Address;
  strength: number;
  /** Unix seconds. */
  proofExpiresAt: number;
  /** The human's live agents, this one included. */
  agentCount: number;
  credentials: InterfaceCredentials;
}

/** The always-visible claims of the agent and its proof (JSON: the agent id as a decimal string, it is a uint256). */
export interface AgentClaims {
  agent_id: string;
  chain_id: number;
  registry: Address;
  agent_address: Address;
  provider: Address;
  strength: number;
  proof_expires_at: number;
  /** The human's live agents when the credential was issued: a verifier's Sybil limit without a chain read. */
  human_agent_count: number;
}

/**
 * The disclosable claims: only what the proof shows to be true (a threshold not proved is absent, not false: the
 * human may simply not have been asked).
 */
export function selectiveClaims(credentials: InterfaceCredentials): Partial<Record<SelectiveClaim, boolean | string>> {
  return {
    ...(credentials.olderThan >= 18 ? { age_over_18: true } : {}),
    ...(credentials.olderThan >= 21 ? { age_over_21: true } : {}),
    // the name checks, as the ofac policy reads them (the document-number check is not asked by the identity app)
    ...(credentials.ofac[1] && credentials.ofac[2] ? { ofac_clear: true } : {}),
    ...(credentials.nationality !== '' ? { nationality: credentials.nationality } : {}),
  };
}

export const agentClaims = (subject: CredentialSubject): AgentClaims => ({
  agent_id: subject.agentId.toString(),
  chain_id: subject.chainId,
  registry: subject.registry,
  agent_address: subject.agentAddress,
  provider: subject.provider,
  strength: subject.strength,
  proof_expires_at: subject.proofExpiresAt,
  human_agent_count: subject.agentCount,
});

/** When a credential issued at `nowS` expires: 15 minutes on, or at the proof's expiry if sooner. */
export const credentialExpiry = (nowS: number, proofExpiresAt: number): number => Math.min(nowS + CREDENTIAL_LIFETIME_S, proofExpiresAt);

/**
 * The pairwise `sub`: HMAC-SHA256 under the service's pseudonym secret of the nullifier (32 bytes, big-endian: a
 * fixed length, so no nullifier and audience pair reads as another) and the audience (UTF-8), base64url.
 */
export function pairwiseSubject(secret: Uint8Array, nullifier: bigint, audience: string): string {
  const nullifierBytes = Buffer.from(nullifier.toString(16).padStart(64, '0'), 'hex');
  return createHmac('sha256', secret).update(nullifierBytes).update(audience, 'utf8').digest('base64url');
}

/** An Ed25519 agent's registry key (the raw public key) as its cnf JWK. */
export const ed25519CnfJwk = (agentKey: Hex): AgentCnfJwk => ed25519PublicJwk(agentKey);

/** An uncompressed secp256k1 public key (0x04 ‖ x ‖ y) as a JWK. */
export function secp256k1Jwk(publicKey: Hex): AgentCnfJwk {
  const bytes = Buffer.from(publicKey.slice(2), 'hex');
  if (bytes.length !== 65 || bytes[0] !== 4) throw new Error('a secp256k1 public key must be uncompressed: 0x04 followed by x and y');
  return { kty: 'EC', crv: 'secp256k1', x: bytes.subarray(1, 33).toString('base64url'), y: bytes.subarray(33).toString('base64url') };
}

/** The Ethereum address of a secp256k1 JWK: the last 20 bytes of keccak256(x ‖ y). */
export function secp256k1JwkAddress(jwk: { x: string; y: string }): Address {
  const x = Buffer.from(jwk.x, 'base64url');
  const y = Buffer.from(jwk.y, 'base64url');
  if (x.length !== 32 || y.length !== 32) throw new Error('x and y must be 32 bytes each');
  return `0x${keccak256(Buffer.concat([x, y])).slice(-40)}` as Address;
}

/** Whether a key of this type binds the credential through a JWK the agent sends (secp256k1: the registry keeps only its address). */
export const needsSentKey = (keyType: AgentKeyType): boolean => keyType === 'secp256k1';
