// How the registry keys agents: an ECDSA agent by its address left-padded to 32 bytes, an Ed25519 agent by
// its raw 32-byte public key (whose "address" is the last 20 bytes of keccak256(key)).
import { type Address, getAddress, type Hex, pad } from 'viem';
import { ed25519AgentAddress } from './ed25519-key.js';

export type AgentKeyType = 'secp256k1' | 'ed25519';

export const addressAgentKey = (agent: Address): Hex => pad(agent.toLowerCase() as Address, { size: 32 });

/** A padded address has 12 leading zero bytes; a random Ed25519 key does with probability 2^-96. */
export const agentKeyType = (agentKey: Hex): AgentKeyType => (/^0x0{24}[0-9a-fA-F]{40}$/.test(agentKey) ? 'secp256k1' : 'ed25519');

/** The address the registry mints to for this key (checksummed). */
export function agentAddressOfKey(agentKey: Hex): Address {
  return agentKeyType(agentKey) === 'secp256k1' ? getAddress(`0x${agentKey.slice(26)}`) : ed25519AgentAddress(agentKey);
}
