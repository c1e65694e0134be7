// The registry's "E" action end to end: the identity app proves the human through the hub, the registry checks the
// agent's Ed25519 signature over the registration challenge with the deployed Ed25519Verifier, and the agent is
// keyed by its raw public key with the NFT at the address derived from it (onchain-facts 1.7, 1.8).
import { sign } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex, type Hex, hexToBytes, zeroAddress } from 'viem';
import { beforeAll, describe, expect, it } from 'vitest';
import { ed25519ChallengeHash } from '../../src/core/challenge.js';
import { ed25519AgentAddress, ed25519ExtKpub } from '../../src/core/ed25519-key.js';
import { ed25519RegisterUserData } from '../../src/core/user-data.js';
import { type Ed25519Agent, ed25519Data, expectSubmitted, newAccount, newEd25519Agent, submitProof } from '../support/agents.js';
import { deployTestSystem, type TestSystem } from '../support/chain.js';
import { expectReverted, mined, nullifierOf, registryAs, registryEvents, registryOf } from '../support/registry.js';

/** The agent's Ed25519 signature over 32 raw bytes (node:crypto, like the agents of test/support). */
const signWith = (key: Ed25519Agent, hash: Hex): Uint8Array => new Uint8Array(sign(null, hexToBytes(hash), key.privateKey));

/** userDefinedData with one bit of the signature's S flipped (S starts at char 130: "E", digit, 64 key, 64 R). */
function withFlippedS(userDefinedData: string): string {
  const at = 130 + 10;
  const flipped = (parseInt(userDefinedData[at] as string, 16) ^ 1).toString(16);
  return `${userDefinedData.slice(0, at)}${flipped}${userDefinedData.slice(at + 1)}`;
}

describe('E registration through the hub, signatures checked on chain', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
  });

  async function expectNothingRegistered(key: Ed25519Agent, nonce = 0n): Promise<void> {
    const registry = registryOf(system);
    expect(await registry.read.ed25519Nonce([key.pubkey])).toBe(nonce);
    expect(await registry.read.getAgentId([key.pubkey])).toBe(0n);
    expect(await registry.read.isVerifiedAgent([key.pubkey])).toBe(false);
  }

  it('registers the raw public key, mints to the derived address, sets the guardian and consumes the nonce', async () => {
    const key = newEd25519Agent();
    const human = newAccount().address;
    const registry = registryOf(system);
    expect(await registry.read.ed25519Nonce([key.pubkey])).toBe(0n);

    const result = await submitProof(system, { userId: human, userDefinedData: await ed25519Data(system, key, human, { guardian: human }) });
    expectSubmitted(result);
    const agentId = await registry.read.getAgentId([key.pubkey]);
    expect(agentId).toBeGreaterThan(0n);
    expect(await registry.read.agentIdToAgentKey([agentId])).toBe(key.pubkey);
    expect(await registry.read.isVerifiedAgent([key.pubkey])).toBe(true);
    expect(await registry.read.ownerOf([agentId])).toBe(ed25519AgentAddress(key.pubkey));
    expect(await registry.read.ed25519KeyForAddress([ed25519AgentAddress(key.pubkey)])).toBe(key.pubkey);
    expect(await registry.read.ed25519Nonce([key.pubkey])).toBe(1n);
    expect(await registry.read.agentGuardian([agentId])).toBe(human);
    expect(await registry.read.getHumanNullifier([agentId])).toBe(await nullifierOf(system, human));
    expect((await registryEvents(system, result.txHash)).map((e) => e.eventName)).toEqual([
      'Transfer',
      'AgentRegisteredWithHumanProof',
      'Registered',
      'AgentCredentialsStored',
      'GuardianSet',
    ]);
  });

  it('registers without a guardian when the proof names the derived address (wallet-free style)', async () => {
    const key = newEd25519Agent();
    const derived = ed25519AgentAddress(key.pubkey);
    const result = await submitProof(system, { userId: derived, userDefinedData: await ed25519Data(system, key, derived) });
    expectSubmitted(result);
    const agentId = await registryOf(system).read.getAgentId([key.pubkey]);
    expect(await registryOf(system).read.ownerOf([agentId])).toBe(derived);
    expect(await registryOf(system).read.agentGuardian([agentId])).toBe(zeroAddress);
    expect((await registryEvents(system, result.txHash)).map((e) => e.eventName)).not.toContain('GuardianSet');
  });

  it('refuses a replay: the signed nonce is spent, and stays spent after the agent is removed', async () => {
    const key = newEd25519Agent();
    const human = newAccount().address;
    const guardian = await system.newWallet();
    const signedOnce = await ed25519Data(system, key, human, { guardian: guardian.account.address });
    expectSubmitted(await submitProof(system, { userId: human, userDefinedData: signedOnce }));
    const agentId = await registryOf(system).read.getAgentId([key.pubkey]);

    expectReverted(await submitProof(system, { userId: human, userDefinedData: signedOnce }), 'InvalidAgentSignature');
    await mined(system, registryAs(system, guardian).write.guardianRevoke([agentId]));
    await expectNothingRegistered(key, 1n);
    expectReverted(await submitProof(system, { userId: human, userDefinedData: signedOnce }), 'InvalidAgentSignature');
    expect(await registryOf(system).read.ed25519Nonce([key.pubkey])).toBe(1n);

    // a signature over the current nonce registers the key again
    expectSubmitted(await submitProof(system, { userId: human, userDefinedData: await ed25519Data(system, key, human) }));
    expect(await registryOf(system).read.getAgentId([key.pubkey])).toBeGreaterThan(agentId);
    expect(await registryOf(system).read.ed25519Nonce([key.pubkey])).toBe(2n);
  });

  it('refuses a wrong signature with InvalidAgentSignature and consumes nothing', async () => {
    const key = newEd25519Agent();
    const other = newEd25519Agent();
    const human = newAccount().address;
    const valid = await ed25519Data(system, key, human);

    // one bit of S
    expectReverted(await submitProof(system, { userId: human, userDefinedData: withFlippedS(valid) }), 'InvalidAgentSignature');
    // another key's valid signature of the same challenge, presented with this key
    const othersSignature = (await ed25519Data(system, other, human)).slice(66, 194);
    const swapped = `${valid.slice(0, 66)}${othersSignature}${valid.slice(194)}`;
    expectReverted(await submitProof(system, { userId: human, userDefinedData: swapped }), 'InvalidAgentSignature');
    // the challenge binds the human: proving another one
    expectReverted(await submitProof(system, { userId: newAccount().address, userDefinedData: valid }), 'InvalidAgentSignature');
    // ... and the registry: a signature for another registry address
    const elsewhere = ed25519ChallengeHash({ human, chainId: system.deployment.chainId, registry: system.deployment.contracts.hub, nonce: 0n });
    const forElsewhere = `${valid.slice(0, 66)}${bytesToHex(signWith(key, elsewhere)).slice(2)}${valid.slice(194)}`;
    expectReverted(await submitProof(system, { userId: human, userDefinedData: forElsewhere }), 'InvalidAgentSignature');
    await expectNothingRegistered(key);

    expectSubmitted(await submitProof(system, { userId: human, userDefinedData: valid }));
  });

  it('accepts a signature made with noble-curves for the RFC 8032 TEST 2 key', async () => {
    const secret = hexToBytes('0x4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb');
    const pubkey = '0x3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c';
    expect(bytesToHex(ed25519.getPublicKey(secret))).toBe(pubkey);
    const human = newAccount().address;
    const challenge = ed25519ChallengeHash({
      human,
      chainId: system.deployment.chainId,
      registry: system.deployment.contracts.registry,
      nonce: await registryOf(system).read.ed25519Nonce([pubkey]),
    });
    const userDefinedData = ed25519RegisterUserData({
      configIndex: 0,
      pubkey,
      signature: ed25519.sign(hexToBytes(challenge), secret),
      extKpub: ed25519ExtKpub(pubkey),
      guardian: human,
    });
    expectSubmitted(await submitProof(system, { userId: human, userDefinedData }));
    const agentId = await registryOf(system).read.getAgentId([pubkey]);
    // the derived owner address onchain-facts 1.8 gives for this key
    expect((await registryOf(system).read.ownerOf([agentId])).toLowerCase()).toBe('0x4ff1ba61d0a4d021d1e3dd7d77f3311e91e09d2c');
  });
});
