// The chain and registry a verifier reads, learnt from a registry service's discovery document: a verifier given
// only the service's URL needs neither the registry's address (which changes with each local chain's data) nor the
// RPC of a chain the service runs itself.
import type { Address } from 'viem';
import { DISCOVERY_PATH } from '../core/endpoints.js';
import { NETWORKS, type NetworkName } from '../core/networks.js';
import { RegistryClient, type ServiceDiscovery } from './registration.js';

export interface ServiceRegistry {
  chainId: number;
  registry: Address;
  rpcUrl: string;
}

/**
 * Where `network`'s registry is, as the service at `service` names it. The RPC: `rpcUrl` when given, else the one the
 * service names (its own local chain), else the network's public Celo RPC (a service does not hand out the URL of an
 * external RPC, which may hold a key). Throws naming the service when it cannot be read or names no such registry.
 */
export async function discoverRegistry(
  service: string,
  network: NetworkName,
  options: { rpcUrl?: string; fetch?: typeof fetch } = {},
): Promise<ServiceRegistry> {
  const base = service.replace(/\/+$/, '');
  const document: ServiceDiscovery = await new RegistryClient(base, options.fetch ? { fetch: options.fetch } : {}).discovery();
  const chain = document.chains?.[network];
  const { chainId, publicRpcUrl } = NETWORKS[network];
  if (!chain || typeof chain.registry !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(chain.registry)) {
    throw new Error(`${base}${DISCOVERY_PATH} names no ${network} registry (chains.${network}.registry)`);
  }
  if (chain.chainId !== chainId) {
    throw new Error(`${base}${DISCOVERY_PATH} names chain ${chain.chainId} for ${network}, which is chain ${chainId}`);
  }
  return { chainId, registry: chain.registry, rpcUrl: options.rpcUrl ?? chain.rpcUrl ?? publicRpcUrl };
}
