import { badRequest } from './errors.js';

/** The two networks of the interface; every endpoint that takes a chainId accepts only these. */
export const NETWORKS = {
  mainnet: { name: 'mainnet', chainId: 42220, label: 'Celo', publicRpcUrl: 'https://forno.celo.org' },
  testnet: { name: 'testnet', chainId: 11142220, label: 'Celo Sepolia', publicRpcUrl: 'https://forno.celo-sepolia.celo-testnet.org' },
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

const SUPPORTED = 'use network "mainnet" (chain id 42220) or "testnet" (chain id 11142220)';

/** A value of the caller's shown back in a refusal, cut short. */
const shown = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
};

/**
 * The network a request names by `network` (a name or alias, any case) and/or `chainId` (a number or decimal text);
 * undefined when it names none (absent or null). A network the service does not serve, or a name and a chain id
 * that disagree, is a 400 naming the field: never taken for a default network.
 */
export function requestedNetwork(network: unknown, chainId: unknown): NetworkName | undefined {
  const byName = network === undefined || network === null ? undefined : networkNamed(network);
  if (byName === null) throw badRequest(`Unsupported network ${shown(network)}: ${SUPPORTED}`);
  const byChain = chainId === undefined || chainId === null ? undefined : networkOfChain(chainId);
  if (byChain === null) throw badRequest(`Unsupported chainId ${shown(chainId)}: ${SUPPORTED}`);
  if (byName && byChain && byName !== byChain) {
    throw badRequest(`network ${shown(network)} and chainId ${shown(chainId)} name different networks: send one of them`);
  }
  return byName ?? byChain;
}

/** A network by name or alias, any case and surrounding blanks; null for anything else. */
function networkNamed(value: unknown): NetworkName | null {
  if (typeof value !== 'string') return null;
  const name = value.trim().toLowerCase();
  if (Object.hasOwn(NETWORK_ALIASES, name)) return NETWORK_ALIASES[name] as NetworkName;
  return NETWORK_NAMES.find((candidate) => candidate === name) ?? null;
}

/** A network by chain id, a number or decimal text; null for anything else. */
function networkOfChain(value: unknown): NetworkName | null {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : undefined;
  return NETWORK_NAMES.find((name) => String(NETWORKS[name].chainId) === text) ?? null;
}
