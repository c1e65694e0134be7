import { badRequest } from './errors.js';

/** The two networks of the interface; every endpoint that takes a chainId accepts only these. */
export const NETWORKS = {
  mainnet: { name: 'mainnet', chainId: 42220, label: 'Celo' },
  testnet: { name: 'testnet', chainId: 11142220, label: 'Celo Sepolia' },
} as const;

/** The networks by name: resolved once where a request names one (by name or chain id), then passed as is. */
export type NetworkName = keyof typeof NETWORKS;
/** A network with its chain id and label. */
export type Network = (typeof NETWORKS)[NetworkName];
export type ChainId = (typeof NETWORKS)[NetworkName]['chainId'];

export const NETWORK_NAMES = Object.keys(NETWORKS) as NetworkName[];
export const DEFAULT_NETWORK: NetworkName = 'mainnet';

/**
 * Maps a network name or chain id (number or decimal text) to the network, and refuses everything else,
 * including the deprecated testnet 44787.
 */
export function resolveNetwork(value: string | number): NetworkName {
  for (const name of NETWORK_NAMES) {
    const { chainId } = NETWORKS[name];
    if (value === name || value === chainId || value === String(chainId)) return name;
  }
  throw badRequest(`Unsupported network ${JSON.stringify(value)}: use "mainnet" (chain id 42220) or "testnet" (chain id 11142220)`);
}

export const chainIdOf = (network: NetworkName): ChainId => NETWORKS[network].chainId;

/** Other names of the networks, as the demo endpoints of other deployments take them. */
const NETWORK_ALIASES: Readonly<Record<string, NetworkName>> = { 'celo-mainnet': 'mainnet', 'celo-sepolia': 'testnet' };

/** A network by name, alias (celo-mainnet, celo-sepolia) or chain id; 400 for anything else, never a fallback. */
export const resolveNetworkOrAlias = (value: string | number): NetworkName =>
  typeof value === 'string' && Object.hasOwn(NETWORK_ALIASES, value) ? (NETWORK_ALIASES[value] as NetworkName) : resolveNetwork(value);
