import { describe, expect, it } from 'vitest';
import { CELO_DEPLOYMENTS } from '../../src/chain/celo-deployments.js';
import { loadConfig } from '../../src/config.js';

describe('loadConfig', () => {
  it('runs embedded chains on defaults when no RPC URL is set', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 3000, host: '127.0.0.1', dataDir: '.data', publicUrl: 'http://127.0.0.1:3000' });
    expect(config.networks.mainnet).toEqual({ kind: 'embedded' });
    expect(config.networks.testnet).toEqual({ kind: 'embedded' });
  });

  it('points a network at an RPC with the Celo deployment as default addresses', () => {
    const config = loadConfig({ MAINNET_RPC_URL: 'https://forno.celo.org', PORT: '8080' });
    expect(config.port).toBe(8080);
    expect(config.networks.testnet).toEqual({ kind: 'embedded' });
    expect(config.networks.mainnet).toEqual({
      kind: 'external',
      rpcUrl: 'https://forno.celo.org',
      contracts: {
        registry: CELO_DEPLOYMENTS.mainnet.registry,
        proofProvider: CELO_DEPLOYMENTS.mainnet.proofProvider,
        hub: CELO_DEPLOYMENTS.mainnet.hub,
        demoVerifier: CELO_DEPLOYMENTS.mainnet.demoVerifier,
        demoVerifierEd25519: null,
        multicall: CELO_DEPLOYMENTS.mainnet.multicall,
      },
      registryDeployBlock: 59_965_405n,
    });
  });

  it('takes addresses from the environment over the defaults', () => {
    const registry = '0x1111111111111111111111111111111111111111';
    const config = loadConfig({ TESTNET_RPC_URL: 'http://127.0.0.1:8545', TESTNET_REGISTRY_ADDRESS: registry, TESTNET_REGISTRY_DEPLOY_BLOCK: '7' });
    expect(config.networks.testnet).toMatchObject({ kind: 'external', contracts: { registry }, registryDeployBlock: 7n });
  });

  it('names every invalid variable in one error', () => {
    expect(() => loadConfig({ PORT: 'eighty', MAINNET_RPC_URL: 'not a url', TESTNET_RPC_URL: 'http://x', TESTNET_HUB_ADDRESS: '0x12' })).toThrow(
      /PORT[\s\S]*MAINNET_RPC_URL[\s\S]*TESTNET_HUB_ADDRESS/,
    );
  });
});
