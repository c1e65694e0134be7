// The two RFC 9421 profiles agents sign with, and what tells them apart on the wire:
// - ERC-8128 (secp256k1 agents): EIP-191 personal_sign over the signature base, keyid="erc8128:<chainId>:<address>",
//   no alg (the ERC has no registered value and tells verifiers to refuse one), no tag; its recommended label is `eth`.
// - Web Bot Auth (Ed25519 agents, draft-ietf-webbotauth-httpsig-protocol): alg="ed25519", keyid = the key's RFC 7638
//   JWK thumbprint, tag="web-bot-auth", and a Signature-Agent dictionary member, keyed by the label, naming where
//   the key can be found.
// Both carry created, expires and nonce: the window is at most 5 minutes and the nonce is spent once per signer.
import type { Address } from 'viem';
import { NETWORKS } from './networks.js';

export type Rfc9421Profile = 'erc8128' | 'web-bot-auth';

export const WEB_BOT_AUTH_TAG = 'web-bot-auth';
export const ERC8128_KEYID_PREFIX = 'erc8128:';

/** The chain a secp256k1 signer names by default: Celo mainnet. */
export const ERC8128_DEFAULT_CHAIN_ID: number = NETWORKS.mainnet.chainId;
/** The chains a verifier accepts in an ERC-8128 keyid unless told otherwise: the networks the registry serves. */
export const ERC8128_CHAIN_IDS: readonly number[] = Object.values(NETWORKS).map((network) => network.chainId);

/** The longest a signature may live (expires - created), and the default. */
export const RFC9421_MAX_WINDOW_S = 300;
/** How far in the future `created` may be: the signer's clock may run a little ahead of ours. */
export const RFC9421_CREATED_SKEW_S = 30;
/** The longest nonce accepted: it becomes part of a replay-guard key. */
export const RFC9421_MAX_NONCE_LENGTH = 256;

/** The label a signer uses unless told otherwise: ERC-8128 recommends `eth`; Web Bot Auth's examples use `sig1`. */
export const RFC9421_DEFAULT_LABEL: Readonly<Record<Rfc9421Profile, string>> = { erc8128: 'eth', 'web-bot-auth': 'sig1' };

/** The covered components every request signature carries (content-digest and signature-agent are added when sent). */
export const RFC9421_REQUEST_COMPONENTS = ['@method', '@authority', '@path', '@query'] as const;

/** The ERC-8128 keyid of an account (the ERC asks signers for lowercase hex). */
export const erc8128KeyId = (chainId: number, address: Address): string => `${ERC8128_KEYID_PREFIX}${chainId}:${address.toLowerCase()}`;

const ERC8128_KEYID = /^erc8128:([1-9]\d{0,14}):(0x[0-9a-fA-F]{40})$/;

/** The chain id and address of an ERC-8128 keyid (address hex in any case), or undefined when it is not one. */
export function parseErc8128KeyId(keyid: string): { chainId: number; address: Address } | undefined {
  const match = ERC8128_KEYID.exec(keyid);
  return match ? { chainId: Number(match[1]), address: match[2] as Address } : undefined;
}

/** A base64url SHA-256 JWK thumbprint: 32 bytes, 43 characters, no padding. */
export const isJwkThumbprint = (keyid: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(keyid);

/**
 * The profile a signature claims by its parameters: an `erc8128:` keyid, or the `web-bot-auth` tag. Only the claim:
 * the verifier checks the rest of the profile's rules.
 */
export function claimedProfile(keyid: string, tag: unknown): Rfc9421Profile | undefined {
  if (keyid.startsWith(ERC8128_KEYID_PREFIX)) return 'erc8128';
  return tag === WEB_BOT_AUTH_TAG ? 'web-bot-auth' : undefined;
}
