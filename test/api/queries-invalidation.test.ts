// What no registry event announces, on a real anvil of this file's own (it reorganises its chain): a proof
// provider changing its name or strength, and a reorganisation that drops or replaces the blocks an agent was
// registered in. Cached answers follow the chain at the follower's next poll. The followers poll only when told
// to (syncNow), so each step is one poll.
//
// The Self provider deployed on Celo (and ours, HumanProofProvider, which mirrors it) has a fixed name and
// strength and no setter, and IHumanProofProvider declares no event; but any approved provider is a contract of
// its own that may change them. The provider here is such a one, compiled for this test: the service does not rely
// on it logging anything, it reads every cached provider at each poll.
import request from 'supertest';
import { type Abi, type Address, getAddress, type Hex, keccak256, pad, toHex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainGateway } from '../../src/chain/gateway.js';
import { type DevChain, startDevChain } from '../../src/devnet/devchain.js';
import { registerLinked } from '../support/agents.js';
import { deployTestSystem, type TestSystem } from '../support/chain.js';
import { deployMutableProvider, providerRegistration, registerWithProvider as registerWith, reorgFrom as reorgOf } from '../support/chain-changes.js';
import { type QueryTestApp, queryTestApp } from '../support/queries.js';
import type { TestNetworks } from '../support/registration-flow.js';
import { mined, registryOf } from '../support/registry.js';

const TESTNET = 11142220;

let chain: DevChain;
let system: TestSystem;
let q: QueryTestApp;
let provider: Address;
let providerAbi: Abi;

beforeAll(async () => {
  chain = await startDevChain({ chainId: TESTNET });
  const [mainnet, testnet] = await Promise.all([deployTestSystem('mainnet'), deployTestSystem('testnet', chain.rpcUrl)]);
  system = testnet;
  const networks: TestNetworks = { mainnet, testnet, chains: new ChainGateway({ mainnet: mainnet.gateway, testnet: testnet.gateway }) };
  ({ address: provider, abi: providerAbi } = await deployMutableProvider(system, 'kyc-provider', 80));
  q = await queryTestApp(networks, { eventPollIntervalMs: 3_600_000 });
}, 60_000);

afterAll(async () => {
  await q?.stop();
  await chain?.stop();
});

/** A new wallet registers its own agent with the test's provider. */
const registerWithProvider = (proof: string) => registerWith(system, provider, proof);

/** GETs `path` twice after a poll; the second answer must come from the cache. */
async function cached(path: string): Promise<request.Response> {
  await q.services.queries.syncNow();
  await request(q.app).get(path);
  const before = await q.cacheLookups('agent');
  const res = await request(q.app).get(path);
  expect(res.status, path).toBe(200);
  expect((await q.cacheLookups('agent')).hit, `${path} answered from the cache`).toBe(before.hit + 1);
  return res;
}

const reorgFrom = (fromBlock: bigint, replay: Hex[] = []) => reorgOf(system, fromBlock, replay);

describe("a provider's name or strength changes on chain", () => {
  it('the next poll drops every cached answer that shows them: reputation, verify, info and card show the new values', async () => {
    const { agentId } = await registerWithProvider('proof of the provider test');
    const paths = {
      reputation: `/api/reputation/${TESTNET}/${agentId}`,
      verify: `/api/agent/verify/${TESTNET}/${agentId}`,
      info: `/api/agent/info/${TESTNET}/${agentId}`,
      card: `/api/cards/${TESTNET}/${agentId}`,
    };
    const before: Record<string, request.Response> = {};
    for (const [name, path] of Object.entries(paths)) before[name] = await cached(path);
    expect(before.reputation!.body).toEqual({ score: 80, hasProof: true, providerName: 'kyc-provider', proofType: 'kyc' });
    expect(before.verify!.body).toMatchObject({ verificationStrength: 80, strengthLabel: 'kyc', proofProvider: provider });

    // the provider's own transaction: no registry log names the agent
    const rename = await mined(
      system,
      system.operator.writeContract({ address: provider, abi: providerAbi, functionName: 'setProviderName', args: ['renamed-provider'] }),
    );
    expect(rename.logs.filter((log) => getAddress(log.address) === system.deployment.contracts.registry)).toEqual([]);
    await q.services.queries.syncNow();
    const renamed = await request(q.app).get(paths.reputation);
    expect(renamed.body).toEqual({ score: 80, hasProof: true, providerName: 'renamed-provider', proofType: 'kyc' });
    expect(renamed.headers.etag).not.toBe(before.reputation!.headers.etag);
    expect((await request(q.app).get(paths.card)).body.proofOfHuman.providerName).toBe('renamed-provider');
    // verify does not show the name: same bytes, same ETag
    const verifyAfterRename = await request(q.app)
      .get(paths.verify)
      .set('If-None-Match', before.verify!.headers.etag as string);
    expect(verifyAfterRename.status).toBe(304);

    await mined(system, system.operator.writeContract({ address: provider, abi: providerAbi, functionName: 'setVerificationStrength', args: [40] }));
    await q.services.queries.syncNow();
    const verify = await request(q.app)
      .get(paths.verify)
      .set('If-None-Match', before.verify!.headers.etag as string);
    expect(verify.status).toBe(200);
    expect(verify.body).toMatchObject({ verificationStrength: 40, strengthLabel: 'liveness' });
    expect((await request(q.app).get(paths.info)).body).toMatchObject({ verificationStrength: 40, strengthLabel: 'liveness' });
    expect((await request(q.app).get(paths.reputation)).body).toEqual({
      score: 40,
      hasProof: true,
      providerName: 'renamed-provider',
      proofType: 'liveness',
    });
    expect((await request(q.app).get(paths.card)).body.proofOfHuman).toMatchObject({ verificationStrength: 40, strengthLabel: 'liveness' });
  });

  it('costs no round trip of its own: the providers are read in the batch of the poll that reads the logs', async () => {
    const { agentId } = await registerWithProvider('proof of the round-trip test');
    await cached(`/api/agent/verify/${TESTNET}/${agentId}`);
    await mined(system, system.operator.writeContract({ address: provider, abi: providerAbi, functionName: 'setVerificationStrength', args: [60] }));
    q.resetRpc();
    await q.services.queries.syncNow();
    // the head and the last checkpoint's block; then the logs and the providers
    expect(q.rpc.testnet).toBe(2);
    expect((await request(q.app).get(`/api/agent/verify/${TESTNET}/${agentId}`)).body.verificationStrength).toBe(60);
  });
});

describe('a chain reorganisation', () => {
  it('drops cached agents of the blocks it dropped: verify answers the no-proof body, info 404, and the human has no agent', async () => {
    const agent = await registerLinked(system);
    const { blockNumber } = await system.client.getTransactionReceipt({ hash: agent.txHash });
    const verify = `/api/agent/verify/${TESTNET}/${agent.agentId}`;
    expect((await cached(verify)).body.isVerified).toBe(true);
    expect((await cached(`/api/agent/info/${TESTNET}/${agent.agentId}`)).status).toBe(200);
    expect((await request(q.app).get(`/api/agent/agents/${TESTNET}/${agent.human}`)).body.agents).toEqual([Number(agent.agentId)]);

    await reorgFrom(blockNumber);
    expect(await registryOf(system).read.getAgentId([agent.agentKey])).toBe(0n);
    await q.services.queries.syncNow();

    expect((await request(q.app).get(verify)).body).toMatchObject({ isVerified: false, humanNullifier: '0', agentCountForHuman: 0 });
    expect((await request(q.app).get(`/api/agent/info/${TESTNET}/${agent.agentId}`)).status).toBe(404);
    expect((await request(q.app).get(`/api/agent/agents/${TESTNET}/${agent.human}`)).body.agents).toEqual([]);
  });

  it('shows the agent the new branch registered in their place, under the same id', async () => {
    const other = await system.newWallet();
    const first = await registerWithProvider('proof of the dropped branch');
    const verify = `/api/agent/verify/${TESTNET}/${first.agentId}`;
    const dropped = await cached(verify);
    expect(dropped.body.humanNullifier).toBe(BigInt(keccak256(toHex('proof of the dropped branch'))).toString());
    expect((await request(q.app).get(`/api/agent/agents/${TESTNET}/${first.wallet.account.address}`)).body.agents).toEqual([Number(first.agentId)]);

    // the other wallet's registration, signed now and mined in the new branch where the first one was
    const fees = await system.client.estimateFeesPerGas();
    const replacement = await other.signTransaction({
      to: system.deployment.contracts.registry,
      data: providerRegistration(provider, 'proof of the new branch', pad(other.account.address)),
      nonce: await system.client.getTransactionCount({ address: other.account.address }),
      gas: 1_000_000n,
      maxFeePerGas: fees.maxFeePerGas * 4n,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    await reorgFrom(first.blockNumber, [replacement]);
    expect(await registryOf(system).read.getAgentId([pad(other.account.address)])).toBe(first.agentId);
    await q.services.queries.syncNow();

    const now = await request(q.app)
      .get(verify)
      .set('If-None-Match', dropped.headers.etag as string);
    expect(now.status).toBe(200);
    expect(now.body).toMatchObject({ isVerified: true, humanNullifier: BigInt(keccak256(toHex('proof of the new branch'))).toString() });
    expect((await request(q.app).get(`/api/agent/agents/${TESTNET}/${other.account.address}`)).body.agents).toEqual([Number(first.agentId)]);
    expect((await request(q.app).get(`/api/agent/agents/${TESTNET}/${first.wallet.account.address}`)).body.agents).toEqual([]);
  });
});
