// How the query service turns an agent's on-chain view into the interface's answers, over a stand-in chain
// client (the API tests cover real chains; Ed25519 agents and expired proofs are easier to set up here).
import { type Address, getAddress, type Hex, zeroAddress } from 'viem';
import { describe, expect, it } from 'vitest';
import { readBlockTimestamp } from '../../src/chain/actions/blocks.js';
import { AgentLens, type AgentView } from '../../src/chain/agent-lens.js';
import type { ChainClient } from '../../src/chain/clients.js';
import { DemoVerifierGateway } from '../../src/chain/demo-verifier-gateway.js';
import { ChainGateway, type NetworkGateway } from '../../src/chain/gateway.js';
import { RegistryEventFollower } from '../../src/chain/registry-events.js';
import { EMPTY_CREDENTIALS } from '../../src/core/credentials.js';
import { NETWORKS, type NetworkName } from '../../src/core/networks.js';
import { Metrics } from '../../src/metrics.js';
import { AgentQueryService } from '../../src/services/agent-queries.js';
import { CardSigner } from '../../src/services/card-signer.js';
import { ServiceSigningKeys } from '../../src/services/signing-keys.js';
import { MemoryStore } from '../../src/store/memory-store.js';

const REGISTRY: Address = '0x1111111111111111111111111111111111111111';
const PROVIDER: Address = '0x3333333333333333333333333333333333333333';
/** RFC 8032 test 2 public key and the owner address the registry derives from it (onchain-facts 1.8). */
const ED25519_KEY: Hex = '0x3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c';
const ED25519_ADDRESS = getAddress('0x4ff1ba61d0a4d021d1e3dd7d77f3311e91e09d2c');
const NOW_S = 1_800_000_000;

function agentView(overrides: Partial<AgentView>): AgentView {
  return {
    agentId: 1n,
    exists: true,
    owner: ED25519_ADDRESS,
    agentKey: ED25519_KEY,
    hasHumanProof: true,
    nullifier: 123n,
    proofProvider: PROVIDER,
    providerName: 'self',
    verificationStrength: 100,
    isSelfProvider: true,
    agentCountForHuman: 1n,
    registeredAtBlock: 50n,
    proofExpiresAt: BigInt(NOW_S + 3600),
    isProofFresh: true,
    guardian: zeroAddress,
    metadata: '',
    credentials: EMPTY_CREDENTIALS,
    ...overrides,
  };
}

/** A chain client that answers the lens with `view` at block 100 and block 50's timestamp. */
function fakeGateway(network: NetworkName, view: AgentView): NetworkGateway {
  const client = {
    readContract: async ({ functionName }: { functionName: string }) => {
      if (functionName !== 'agentView') throw new Error(`unexpected ${functionName}`);
      return [100n, view];
    },
    getBlock: async ({ blockNumber }: { blockNumber: bigint }) => ({ timestamp: 1_700_000_000n + blockNumber }),
  } as unknown as ChainClient;
  return {
    network,
    chainId: NETWORKS[network].chainId,
    client,
    registry: {} as NetworkGateway['registry'],
    lens: new AgentLens(client, REGISTRY),
    demoVerifier: new DemoVerifierGateway(client, REGISTRY),
    demoVerifierEd25519: null,
    contracts: { registry: REGISTRY, proofProvider: PROVIDER } as NetworkGateway['contracts'],
    registryDeployBlock: 1n,
    embedded: true,
    followRegistry: (options) => new RegistryEventFollower(client, REGISTRY, 1n, options),
    blockTimestamp: (blockNumber) => readBlockTimestamp(client, { blockNumber }),
    makeDurable: () => Promise.resolve(),
    restarting: () => false,
  };
}

const signer = new CardSigner({
  keys: new ServiceSigningKeys({ store: new MemoryStore(), source: { kind: 'store' } }),
  jwksUrl: 'https://registry.example/.well-known/jwks.json',
});

function service(view: AgentView): AgentQueryService {
  return new AgentQueryService({
    chains: new ChainGateway({ mainnet: fakeGateway('mainnet', view), testnet: fakeGateway('testnet', view) }),
    metrics: new Metrics(),
    clock: () => NOW_S * 1000,
    publicUrl: 'https://registry.example',
    appName: 'Agent Identity Registry',
    signer,
  });
}

describe('AgentQueryService answers', () => {
  it("an Ed25519 agent's address is the one derived from its key", async () => {
    const info = await service(agentView({})).info('testnet', 1n);
    expect(info).toEqual({
      agentId: 1,
      chainId: 11142220,
      agentAddress: ED25519_ADDRESS,
      isVerified: true,
      proofProvider: PROVIDER,
      verificationStrength: 100,
      strengthLabel: 'passport',
      credentials: { nationality: '', olderThan: 0, ofac: [false, false, false] },
      registeredAt: 1_700_000_050,
      network: 'testnet',
    });
    const card = await service(agentView({})).card('mainnet', 1n);
    expect(card.proofOfHuman).toMatchObject({ agentAddress: ED25519_ADDRESS, chainId: 42220, network: 'mainnet' });
  });

  it('an expired proof does not verify the agent, but its provider, strength and human stay visible', async () => {
    const expired = service(agentView({ proofExpiresAt: BigInt(NOW_S - 1), agentCountForHuman: 2n }));
    expect(await expired.verify('mainnet', 1n)).toEqual({
      agentId: 1,
      chainId: 42220,
      isVerified: false,
      proofProvider: PROVIDER,
      isSelfProvider: true,
      verificationStrength: 100,
      strengthLabel: 'passport',
      humanNullifier: '123',
      agentCountForHuman: 2,
    });
    expect(await expired.verifyStatus('mainnet', 1n)).toEqual({
      verified: false,
      proofType: 'passport',
      registeredAtBlock: '50',
      providerAddress: PROVIDER,
    });
    expect(await expired.reputation('mainnet', 1n)).toEqual({ score: 100, hasProof: true, providerName: 'self', proofType: 'passport' });
    expect((await expired.info('mainnet', 1n)).isVerified).toBe(false);
  });

  it('a proof the chain already called stale is not verified either', async () => {
    expect((await service(agentView({ isProofFresh: false })).verify('mainnet', 1n)).isVerified).toBe(false);
  });

  it('an agent without a proof gets the no-proof answers', async () => {
    const bare = service(agentView({ hasHumanProof: false, proofProvider: zeroAddress, nullifier: 0n, verificationStrength: 0, providerName: '' }));
    expect(await bare.verify('testnet', 1n)).toEqual({
      agentId: 1,
      chainId: 11142220,
      isVerified: false,
      proofProvider: zeroAddress,
      isSelfProvider: false,
      verificationStrength: 0,
      strengthLabel: 'None',
      humanNullifier: '0',
      agentCountForHuman: 0,
    });
    expect(await bare.verifyStatus('testnet', 1n)).toEqual({ verified: false });
    expect(await bare.reputation('testnet', 1n)).toEqual({ score: 0, hasProof: false, providerName: '', proofType: 'unknown' });
  });

  it('an agent that does not exist is 404 where the interface says not found', async () => {
    const none = service(agentView({ exists: false }));
    await expect(none.info('testnet', 5n)).rejects.toMatchObject({ status: 404, message: 'Agent 5 not found on chain 11142220' });
    await expect(none.card('mainnet', 5n)).rejects.toMatchObject({ status: 404, message: 'Agent 5 not found on chain 42220' });
    await expect(none.reputation('mainnet', 5n)).rejects.toMatchObject({ status: 404 });
    expect(await none.verifyStatus('mainnet', 5n)).toEqual({ verified: false });
    expect((await none.verify('mainnet', 5n)).isVerified).toBe(false);
  });
});
