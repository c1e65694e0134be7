// The six registration modes: who holds the agent key, which hub action registers it, who owns the NFT.
import { badRequest } from './errors.js';

export const REGISTRATION_MODES = ['linked', 'wallet-free', 'ed25519', 'ed25519-linked', 'privy', 'smartwallet'] as const;
export type RegistrationMode = (typeof REGISTRATION_MODES)[number];

/** Names other deployments use for the same modes (interface: Versioning). */
export const MODE_ALIASES: Readonly<Record<string, RegistrationMode>> = { 'agent-identity': 'linked', walletfree: 'wallet-free' };

export interface ModeRules {
  /** secp256k1 or Ed25519 agent key. */
  keyType: 'secp256k1' | 'ed25519';
  /** The hub action that registers the agent. */
  action: 'K' | 'W' | 'E';
  /** humanAddress must be given: it owns the NFT (K) or becomes the guardian (E, smartwallet W). */
  needsHumanAddress: boolean;
  /** The agent key is held by the human's wallet provider and signs the challenge itself. */
  externalKey: boolean;
  /** The caller may bring its own Ed25519 key (otherwise the service generates one). */
  ownKeyAllowed: boolean;
  label: string;
  /** When to choose it (onboarding texts). */
  choose: string;
}

export const MODE_RULES: Readonly<Record<RegistrationMode, ModeRules>> = {
  linked: {
    keyType: 'secp256k1',
    action: 'K',
    needsHumanAddress: true,
    externalKey: false,
    ownKeyAllowed: false,
    label: 'Linked agent: a generated key, the NFT owned by your wallet',
    choose: "You have a wallet and want the agent's NFT in it; the service generates the agent key and you export it.",
  },
  'wallet-free': {
    keyType: 'secp256k1',
    action: 'W',
    needsHumanAddress: false,
    externalKey: false,
    ownKeyAllowed: false,
    label: 'Wallet-free: a generated key that owns its own NFT',
    choose: 'You have no wallet: the fastest way in; the service generates the agent key, which owns its NFT.',
  },
  ed25519: {
    keyType: 'ed25519',
    action: 'E',
    needsHumanAddress: false,
    externalKey: false,
    ownKeyAllowed: true,
    label: 'Ed25519 agent key, no wallet',
    choose: 'Your agent already signs with Ed25519 (or should): bring your key or let the service generate one; no wallet.',
  },
  'ed25519-linked': {
    keyType: 'ed25519',
    action: 'E',
    needsHumanAddress: true,
    externalKey: false,
    ownKeyAllowed: true,
    label: 'Ed25519 agent key with your wallet as guardian',
    choose: "As ed25519, with your wallet as the agent's guardian (it can deregister the agent).",
  },
  privy: {
    keyType: 'secp256k1',
    action: 'K',
    needsHumanAddress: true,
    externalKey: true,
    ownKeyAllowed: false,
    label: 'Agent key in a Privy embedded wallet; the NFT owned by your wallet',
    choose: 'The agent key lives in a Privy embedded wallet that signs the challenge; the NFT goes to your wallet.',
  },
  smartwallet: {
    keyType: 'secp256k1',
    action: 'W',
    needsHumanAddress: true,
    externalKey: true,
    ownKeyAllowed: false,
    label: 'Agent key in a passkey smart account, which is also its guardian',
    choose: 'The agent key lives in a passkey smart account, which is also its guardian; sponsored through the account-abstraction proxy.',
  },
};

/** Resolves a mode or alias; 400 naming the valid values otherwise. */
export function resolveMode(value: unknown): RegistrationMode {
  if (typeof value === 'string') {
    if ((REGISTRATION_MODES as readonly string[]).includes(value)) return value as RegistrationMode;
    const alias = MODE_ALIASES[value];
    if (alias) return alias;
  }
  throw badRequest(
    `Invalid mode: ${JSON.stringify(value ?? null)}. Valid modes: ${REGISTRATION_MODES.join(', ')} (aliases: agent-identity = linked, walletfree = wallet-free)`,
  );
}
