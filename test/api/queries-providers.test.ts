// Agents whose proof came from an external provider (registerWithHumanProof): the proof-type labels follow the
// provider's strength, and such agents are not the registry's own provider's. And an agent with no proof at all
// (a bare ERC-8004 registration, possible once the operator lifts requireHumanProof): the no-proof answers.
import type { Express } from 'express';
import request from 'supertest';
import { type Address, getAddress, pad, parseEventLogs, toHex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRegistryAbi } from '../../src/contracts/artifacts/index.js';
import type { TestSystem } from '../support/chain.js';
import { type QueryTestApp, queryTestApp, testProviderArtifact } from '../support/queries.js';
import { deployTestNetworks } from '../support/registration-flow.js';
import { mined, registryAs, registryOf } from '../support/registry.js';

const TESTNET = 11142220;
const ZERO = '0x0000000000000000000000000000000000000000';

describe('agents of external providers, and agents without a proof', () => {
  let system: TestSystem;
  let q: QueryTestApp;
  let app: Express;

  beforeAll(async () => {
    const networks = await deployTestNetworks();
    system = networks.testnet;
    q = await queryTestApp(networks);
    app = q.app;
  });

  afterAll(async () => {
    await q?.stop();
  });

  /** Deploys and approves a provider of this strength, and registers a new agent with it. */
  async function agentOfProvider(name: string, strength: number): Promise<{ agentId: bigint; provider: Address }> {
    const { abi, bytecode } = testProviderArtifact();
    const deployed = await mined(system, system.operator.deployContract({ abi, bytecode, args: [name, strength] }));
    const provider = getAddress(deployed.contractAddress!);
    await mined(system, registryAs(system, system.operator).write.addProofProvider([provider]));
    const agentWallet = await system.newWallet();
    const agentKey = pad(agentWallet.account.address);
    await mined(system, registryAs(system, agentWallet).write.registerWithHumanProof(['', provider, toHex(`proof of ${name}`), agentKey]));
    return { agentId: await registryOf(system).read.getAgentId([agentKey]), provider };
  }

  it.each([
    [100, 'passport'],
    [80, 'kyc'],
    [79, 'govt_id'],
    [60, 'govt_id'],
    [40, 'liveness'],
    [39, 'unknown'],
    [0, 'unknown'],
  ])('strength %i is labelled %s in reputation, verify-status, verify and info', async (strength, label) => {
    const { agentId, provider } = await agentOfProvider(`provider-${strength}`, strength);
    const reputation = await request(app).get(`/api/reputation/${TESTNET}/${agentId}`);
    expect(reputation.body).toEqual({ score: strength, hasProof: true, providerName: `provider-${strength}`, proofType: label });
    const status = await request(app).get(`/api/verify-status/${TESTNET}/${agentId}`);
    expect(status.body).toMatchObject({ verified: true, proofType: label, providerAddress: provider });
    const verify = await request(app).get(`/api/agent/verify/${TESTNET}/${agentId}`);
    expect(verify.body).toMatchObject({
      isVerified: true,
      proofProvider: provider,
      isSelfProvider: false,
      verificationStrength: strength,
      strengthLabel: label,
      agentCountForHuman: 1,
    });
    const info = await request(app).get(`/api/agent/info/${TESTNET}/${agentId}`);
    expect(info.body).toMatchObject({ verificationStrength: strength, strengthLabel: label, proofProvider: provider });
  });

  it('an agent registered without a proof: the no-proof bodies, strength 0, None, and no credentials', async () => {
    await mined(system, registryAs(system, system.operator).write.setRequireHumanProof([false]));
    const owner = await system.newWallet();
    const receipt = await mined(system, registryAs(system, owner).write.register(['https://agent.example/registration.json']));
    const [registered] = parseEventLogs({ abi: agentRegistryAbi, logs: receipt.logs, eventName: 'Registered' });
    const agentId = registered!.args.agentId;
    await mined(system, registryAs(system, system.operator).write.setRequireHumanProof([true]));

    expect((await request(app).get(`/api/agent/verify/${TESTNET}/${agentId}`)).body).toEqual({
      agentId: Number(agentId),
      chainId: TESTNET,
      isVerified: false,
      proofProvider: ZERO,
      isSelfProvider: false,
      verificationStrength: 0,
      strengthLabel: 'None',
      humanNullifier: '0',
      agentCountForHuman: 0,
    });
    expect((await request(app).get(`/api/verify-status/${TESTNET}/${agentId}`)).body).toStrictEqual({ verified: false });
    expect((await request(app).get(`/api/reputation/${TESTNET}/${agentId}`)).body).toEqual({
      score: 0,
      hasProof: false,
      providerName: '',
      proofType: 'unknown',
    });
    const info = await request(app).get(`/api/agent/info/${TESTNET}/${agentId}`);
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({
      isVerified: false,
      proofProvider: ZERO,
      verificationStrength: 0,
      strengthLabel: 'None',
      credentials: { nationality: '', olderThan: 0, ofac: [false, false, false] },
      registeredAt: 0,
    });
    const card = await request(app).get(`/api/cards/${TESTNET}/${agentId}`);
    expect(card.status).toBe(200);
    expect(card.body.proofOfHuman).toMatchObject({ isVerified: false, strengthLabel: 'None', proofProvider: ZERO });
    await q.services.queries.syncNow(); // the owner index follows the logs, one polling interval behind at most
    expect((await request(app).get(`/api/agent/agents/${TESTNET}/${owner.account.address}`)).body.agents).toEqual([Number(agentId)]);
  });
});
