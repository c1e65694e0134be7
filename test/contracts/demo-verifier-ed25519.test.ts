// AgentDemoVerifierEd25519: gas-sponsored check-ins of Ed25519 agents, with agents registered through the
// registry's "E" action. agentKey is the raw public key (the registry's convention, not keccak256(pubkey) as in
// onchain-facts 9.2); the agent signs keccak256(agentKey || nonce || deadline) as 32 raw bytes.
import { sign as nodeSign } from 'node:crypto';
import {
  type Address,
  concatHex,
  encodeAbiParameters,
  encodePacked,
  type Hex,
  hexToBytes,
  keccak256,
  parseEventLogs,
  toFunctionSelector,
} from 'viem';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ChainWallet } from '../../src/chain/clients.js';
import { agentDemoVerifierEd25519Abi } from '../../src/contracts/artifacts/index.js';
import { type Ed25519Agent, ed25519Data, expectSubmitted, newAccount, newEd25519Agent, submitProof } from '../support/agents.js';
import { deployTestSystem, type TestSystem } from '../support/chain.js';
import { expectCallReverts, latestTimestamp, mined, registryAs, registryOf } from '../support/registry.js';

describe('AgentDemoVerifierEd25519', () => {
  let system: TestSystem;
  let relayer: ChainWallet;
  let address: Address;
  let key: Ed25519Agent;
  let agentId: bigint;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    relayer = await system.newWallet();
    const deployed = system.deployment.contracts.demoVerifierEd25519;
    if (!deployed) throw new Error('deployContracts deploys the Ed25519 demo verifier');
    address = deployed;
    key = newEd25519Agent();
    const human = newAccount().address;
    expectSubmitted(await submitProof(system, { userId: human, userDefinedData: await ed25519Data(system, key, human, { guardian: human }) }));
    agentId = await registryOf(system).read.getAgentId([key.pubkey]);
  });

  const demo = () => ({ address, abi: agentDemoVerifierEd25519Abi }) as const;
  const nonceOf = (agentKey: Hex) => system.client.readContract({ ...demo(), functionName: 'nonces', args: [agentKey] });
  const message = (agentKey: Hex, nonce: bigint, deadline: bigint): Hex =>
    keccak256(encodePacked(['bytes32', 'uint256', 'uint256'], [agentKey, nonce, deadline]));
  const sign = (signer: Ed25519Agent, agentKey: Hex, nonce: bigint, deadline: bigint): Hex =>
    `0x${nodeSign(null, hexToBytes(message(agentKey, nonce, deadline)), signer.privateKey).toString('hex')}`;

  function simulate(agentKey: Hex, nonce: bigint, deadline: bigint, signature: Hex) {
    return system.client.simulateContract({
      ...demo(),
      account: relayer.account,
      functionName: 'metaVerifyAgent',
      args: [agentKey, nonce, deadline, signature],
    });
  }

  it('points at the registry and its Ed25519 verifier; signs keccak256(agentKey || nonce || deadline)', async () => {
    expect(await system.client.readContract({ ...demo(), functionName: 'registry' })).toBe(system.deployment.contracts.registry);
    expect(await system.client.readContract({ ...demo(), functionName: 'ed25519Verifier' })).toBe(await registryOf(system).read.ed25519Verifier());
    const agentKey = key.pubkey;
    expect(await system.client.readContract({ ...demo(), functionName: 'messageHash', args: [agentKey, 7n, 99n] })).toBe(
      keccak256(concatHex([agentKey, encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }], [7n, 99n])])),
    );
    // the same function (selector 0xa47ec6b2) as the EIP-712 demo: one call shape for both kinds of agent
    expect(toFunctionSelector('metaVerifyAgent(bytes32,uint256,uint256,bytes)')).toBe('0xa47ec6b2');
  });

  it("metaVerifyAgent with the E agent's signature, sent by a relayer: returns the agentId, counts, three events", async () => {
    const agentKey = key.pubkey;
    expect(await nonceOf(agentKey)).toBe(0n);
    expect(await system.client.readContract({ ...demo(), functionName: 'hasVerified', args: [agentKey] })).toBe(false);
    const deadline = (await latestTimestamp(system)) + 600n;

    const { result, request } = await simulate(agentKey, 0n, deadline, sign(key, agentKey, 0n, deadline));
    expect(result).toBe(agentId);
    const receipt = await mined(system, await relayer.writeContract(request));
    expect(parseEventLogs({ abi: agentDemoVerifierEd25519Abi, logs: receipt.logs }).map((e) => [e.eventName, e.args])).toEqual([
      ['AgentChainVerified', { agentKey, agentId }],
      ['VerificationCompleted', { agentKey, agentCount: 1n, totalCount: 1n }],
      ['GasSponsored', { relayer: relayer.account.address, agentKey }],
    ]);
    expect(await nonceOf(agentKey)).toBe(1n);
    expect(await system.client.readContract({ ...demo(), functionName: 'hasVerified', args: [agentKey] })).toBe(true);
    expect(await system.client.readContract({ ...demo(), functionName: 'verificationCount', args: [agentKey] })).toBe(1n);
    expect(await system.client.readContract({ ...demo(), functionName: 'totalVerifications' })).toBe(1n);
    expect(await system.client.readContract({ ...demo(), functionName: 'checkAccess', args: [agentKey] })).toBe(agentId);

    // the same signature again: its nonce is spent
    await expectCallReverts(simulate(agentKey, 0n, deadline, sign(key, agentKey, 0n, deadline)), 'MetaTxInvalidNonce');
  });

  it('MetaTxExpired, MetaTxInvalidNonce, MetaTxInvalidSignature', async () => {
    const agentKey = key.pubkey;
    const nonce = await nonceOf(agentKey);
    const now = await latestTimestamp(system);
    await expectCallReverts(simulate(agentKey, nonce, now - 10n, sign(key, agentKey, nonce, now - 10n)), 'MetaTxExpired');
    const deadline = now + 600n;
    await expectCallReverts(simulate(agentKey, nonce + 1n, deadline, sign(key, agentKey, nonce + 1n, deadline)), 'MetaTxInvalidNonce');

    const valid = sign(key, agentKey, nonce, deadline);
    const flipped = `${valid.slice(0, 80)}${(parseInt(valid[80] as string, 16) ^ 4).toString(16)}${valid.slice(81)}` as Hex;
    for (const signature of [
      sign(newEd25519Agent(), agentKey, nonce, deadline), // another key
      sign(key, agentKey, nonce, deadline + 1n), // other signed fields
      flipped,
      valid.slice(0, 128) as Hex, // 63 bytes
      `${valid}00` as Hex, // 65 bytes
    ]) {
      await expectCallReverts(simulate(agentKey, nonce, deadline, signature), 'MetaTxInvalidSignature');
    }
    const { result } = await simulate(agentKey, nonce, deadline, valid);
    expect(result).toBe(agentId);
  });

  it("keys by the raw public key: keccak256(pubkey), the deployed demo's key, is not a key of this agent", async () => {
    const hashed = keccak256(key.pubkey);
    const deadline = (await latestTimestamp(system)) + 600n;
    await expectCallReverts(simulate(hashed, 0n, deadline, sign(key, hashed, 0n, deadline)), 'MetaTxInvalidSignature');
  });

  it('NotVerifiedAgent for a key the registry does not know (the nonce stays), and after the agent is removed', async () => {
    const stranger = newEd25519Agent();
    const deadline = (await latestTimestamp(system)) + 600n;
    await expectCallReverts(simulate(stranger.pubkey, 0n, deadline, sign(stranger, stranger.pubkey, 0n, deadline)), 'NotVerifiedAgent');
    expect(await nonceOf(stranger.pubkey)).toBe(0n);

    // an E agent whose guardian removes it loses access
    const guardian = await system.newWallet();
    const leaving = newEd25519Agent();
    const human = newAccount().address;
    const data = await ed25519Data(system, leaving, human, { guardian: guardian.account.address });
    expectSubmitted(await submitProof(system, { userId: human, userDefinedData: data }));
    const leavingId = await registryOf(system).read.getAgentId([leaving.pubkey]);
    expect(await system.client.readContract({ ...demo(), functionName: 'checkAccess', args: [leaving.pubkey] })).toBe(leavingId);
    await mined(system, registryAs(system, guardian).write.guardianRevoke([leavingId]));
    await expectCallReverts(system.client.readContract({ ...demo(), functionName: 'checkAccess', args: [leaving.pubkey] }), 'NotVerifiedAgent');
    await expectCallReverts(simulate(leaving.pubkey, 0n, deadline, sign(leaving, leaving.pubkey, 0n, deadline)), 'NotVerifiedAgent');
  });
});
