// A standard ERC-4337 client of a running service that knows only its base URL: the discovery document names the
// network's EntryPoint, account factories, paymaster and the proxy's token, bundler and paymaster URLs; viem's
// bundler and paymaster clients then go through the proxy with its token. The one other input is the chain's
// JSON-RPC, which a wallet has of its own: here the embedded chain's URL from DATA_DIR, where the identity-app CLI
// reads it too.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type Address,
  type Chain,
  type Client,
  createPublicClient,
  defineChain,
  type HttpTransportConfig,
  http,
  type PublicClient,
  type Transport,
} from 'viem';
import { createBundlerClient, createPaymasterClient, type SmartAccount } from 'viem/account-abstraction';
import { expect } from 'vitest';

/** One network's entry under `accountAbstraction` in /.well-known/self-agent-id.json. */
export interface DiscoveredStack {
  chainId: number;
  entryPoint: Address;
  paymaster: Address;
  accounts: { kind: string; factory: Address; implementation?: Address; version?: string }[];
  tokenUrl: string;
  bundlerUrl: string;
  paymasterUrl: string;
}

export async function discoveredStack(base: string, network: 'mainnet' | 'testnet' = 'testnet'): Promise<DiscoveredStack> {
  const res = await fetch(`${base}/.well-known/self-agent-id.json`);
  expect(res.status).toBe(200);
  const stack = ((await res.json()) as { accountAbstraction?: Record<string, DiscoveredStack> }).accountAbstraction?.[network];
  if (!stack) throw new Error(`discovery names no ERC-4337 stack for ${network}`);
  return stack;
}

/** The embedded chain of a service's DATA_DIR, as a public client with the network's chain id. */
export function embeddedChainClient(dataDir: string, chainId: number, network: 'mainnet' | 'testnet' = 'testnet'): PublicClient<Transport, Chain> {
  const rpcUrl = readFileSync(join(dataDir, 'chains', network, 'rpc-url'), 'utf8').trim();
  const chain = defineChain({
    id: chainId,
    name: network,
    nativeCurrency: { name: 'CELO', symbol: 'CELO', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  return createPublicClient({ chain, transport: http(rpcUrl) });
}

/** POST {tokenUrl} as a page of the service's own origin would; the headers every proxy call then carries. */
export async function proxyHeaders(base: string, stack: DiscoveredStack): Promise<Record<string, string>> {
  const origin = new URL(base).origin;
  const res = await fetch(stack.tokenUrl, { method: 'POST', headers: { origin } });
  const body = (await res.json()) as { token?: string; error?: string };
  expect(res.status, body.error).toBe(200);
  return { origin, 'x-aa-proxy-token': body.token as string };
}

/** viem's bundler client for `account`, sponsored by viem's paymaster client, both on the proxy's URLs. */
export async function sponsoredBundler(base: string, stack: DiscoveredStack, account: SmartAccount, chain: PublicClient<Transport, Chain>) {
  const fetchOptions: HttpTransportConfig['fetchOptions'] = { headers: await proxyHeaders(base, stack) };
  return createBundlerClient({
    account,
    client: chain as Client<Transport, Chain>,
    transport: http(stack.bundlerUrl, { fetchOptions }),
    paymaster: createPaymasterClient({ transport: http(stack.paymasterUrl, { fetchOptions }) }),
    pollingInterval: 50,
  });
}
