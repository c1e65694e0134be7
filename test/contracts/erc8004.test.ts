// The ERC-8004 side of AgentRegistry on a real anvil: bare registration (gated by requireHumanProof), agent
// URI and key/value metadata, the EIP-712 agent wallet, roles and settings, and the proof-provider registry
// (onchain-facts 1.3, 1.10, 1.12, 1.13).
import {
  type Address,
  domainSeparator,
  encodeAbiParameters,
  getAddress,
  type Hex,
  keccak256,
  type LocalAccount,
  pad,
  stringToHex,
  zeroAddress,
} from 'viem';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ChainWallet } from '../../src/chain/clients.js';
import { agentRegistryAbi, humanProofProviderAbi, humanProofProviderBytecode } from '../../src/contracts/artifacts/index.js';
import { newAccount, type RegisteredAgent, registerLinked } from '../support/agents.js';
import { deployTestSystem, type TestSystem } from '../support/chain.js';
import { expectCallReverts, latestTimestamp, mined, registryEvents } from '../support/registry.js';

const SECURITY_ROLE = keccak256(stringToHex('SECURITY_ROLE'));
const OPERATIONS_ROLE = keccak256(stringToHex('OPERATIONS_ROLE'));

function reader(system: TestSystem) {
  const address = system.deployment.contracts.registry;
  return { address, abi: agentRegistryAbi } as const;
}

// ------------------------------------------------------------------------------------------------------------

describe('bare register() overloads while requireHumanProof is on (the default)', () => {
  let system: TestSystem;
  let caller: ChainWallet;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    caller = await system.newWallet();
  });

  it('requireHumanProof() is true after deployment', async () => {
    expect(await system.client.readContract({ ...reader(system), functionName: 'requireHumanProof' })).toBe(true);
  });

  it('all four overloads revert ProofRequired', async () => {
    const base = { ...reader(system), account: caller.account } as const;
    await expectCallReverts(system.client.simulateContract({ ...base, functionName: 'register' }), 'ProofRequired');
    await expectCallReverts(system.client.simulateContract({ ...base, functionName: 'register', args: ['ipfs://a'] }), 'ProofRequired');
    await expectCallReverts(
      system.client.simulateContract({ ...base, functionName: 'register', args: ['ipfs://a', [{ metadataKey: 'k', metadataValue: '0x01' }]] }),
      'ProofRequired',
    );
    await expectCallReverts(
      system.client.simulateContract({ ...base, functionName: 'register', args: ['ipfs://a', ['k'], ['0x01']] }),
      'ProofRequired',
    );
  });

  it('the array overload checks the lengths first: ArrayLengthMismatch even while a proof is required', async () => {
    await expectCallReverts(
      system.client.simulateContract({
        ...reader(system),
        account: caller.account,
        functionName: 'register',
        args: ['ipfs://a', ['k1', 'k2'], ['0x01']],
      }),
      'ArrayLengthMismatch',
      [2n, 1n],
    );
  });

  it('only SECURITY_ROLE may switch the requirement off', async () => {
    await expectCallReverts(
      system.client.simulateContract({ ...reader(system), account: caller.account, functionName: 'setRequireHumanProof', args: [false] }),
      'AccessControlUnauthorizedAccount',
      [caller.account.address, SECURITY_ROLE],
    );
  });
});

describe('bare register() overloads with requireHumanProof off', () => {
  let system: TestSystem;
  let caller: ChainWallet;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    caller = await system.newWallet();
    await mined(system, await system.operator.writeContract({ ...reader(system), functionName: 'setRequireHumanProof', args: [false] }));
  });

  const base = () => ({ ...reader(system), account: caller.account }) as const;

  it('register() mints the next id to the caller with an empty URI and no human proof', async () => {
    const { result: expectedId, request } = await system.client.simulateContract({ ...base(), functionName: 'register' });
    const receipt = await mined(system, await caller.writeContract(request));
    const events = await registryEvents(system, receipt);
    expect(events.map((e) => e.eventName)).toEqual(['Transfer', 'Registered']);
    expect(events[1]?.args).toEqual({ agentId: expectedId, agentURI: '', owner: caller.account.address });
    expect(events[0]?.args).toEqual({ from: zeroAddress, to: caller.account.address, tokenId: expectedId });

    const read = { ...reader(system), args: [expectedId] } as const;
    expect(await system.client.readContract({ ...read, functionName: 'ownerOf' })).toBe(caller.account.address);
    expect(await system.client.readContract({ ...read, functionName: 'tokenURI' })).toBe('');
    expect(await system.client.readContract({ ...read, functionName: 'hasHumanProof' })).toBe(false);
    expect(await system.client.readContract({ ...read, functionName: 'isProofFresh' })).toBe(false);
    expect(await system.client.readContract({ ...read, functionName: 'getHumanNullifier' })).toBe(0n);
    expect(await system.client.readContract({ ...read, functionName: 'proofExpiresAt' })).toBe(0n);
    expect(await system.client.readContract({ ...read, functionName: 'agentIdToAgentKey' })).toBe(pad('0x', { size: 32 }));
    expect(await system.client.readContract({ ...read, functionName: 'getProofProvider' })).toBe(zeroAddress);
  });

  it('register(string) stores the URI and ids increase by one', async () => {
    const first = await system.client.simulateContract({ ...base(), functionName: 'register', args: ['ipfs://one'] });
    await mined(system, await caller.writeContract(first.request));
    const second = await system.client.simulateContract({ ...base(), functionName: 'register', args: ['ipfs://two'] });
    const receipt = await mined(system, await caller.writeContract(second.request));
    expect(second.result).toBe(first.result + 1n);
    expect((await registryEvents(system, receipt)).find((e) => e.eventName === 'Registered')?.args).toEqual({
      agentId: second.result,
      agentURI: 'ipfs://two',
      owner: caller.account.address,
    });
    expect(await system.client.readContract({ ...reader(system), functionName: 'tokenURI', args: [first.result] })).toBe('ipfs://one');
    expect(await system.client.readContract({ ...reader(system), functionName: 'tokenURI', args: [second.result] })).toBe('ipfs://two');
  });

  it('register(string,string[],bytes[]) stores every entry and emits MetadataSet with the key hash as topic', async () => {
    const { result: id, request } = await system.client.simulateContract({
      ...base(),
      functionName: 'register',
      args: ['ipfs://card', ['name', 'endpoint'], [stringToHex('bot'), '0xdeadbeef']],
    });
    const receipt = await mined(system, await caller.writeContract(request));
    const metadataSet = (await registryEvents(system, receipt)).filter((e) => e.eventName === 'MetadataSet');
    expect(metadataSet.map((e) => e.topics[2])).toEqual([keccak256(stringToHex('name')), keccak256(stringToHex('endpoint'))]);
    expect(metadataSet.map((e) => e.args)).toEqual([
      { agentId: id, indexedMetadataKey: keccak256(stringToHex('name')), metadataKey: 'name', metadataValue: stringToHex('bot') },
      { agentId: id, indexedMetadataKey: keccak256(stringToHex('endpoint')), metadataKey: 'endpoint', metadataValue: '0xdeadbeef' },
    ]);
    expect(await system.client.readContract({ ...reader(system), functionName: 'getMetadata', args: [id, 'name'] })).toBe(stringToHex('bot'));
    expect(await system.client.readContract({ ...reader(system), functionName: 'getMetadata', args: [id, 'endpoint'] })).toBe('0xdeadbeef');
    expect(await system.client.readContract({ ...reader(system), functionName: 'getMetadata', args: [id, 'unset'] })).toBe('0x');
    expect(await system.client.readContract({ ...reader(system), functionName: 'tokenURI', args: [id] })).toBe('ipfs://card');
  });

  it('register(string,(string,bytes)[]) stores every entry', async () => {
    const { result: id, request } = await system.client.simulateContract({
      ...base(),
      functionName: 'register',
      args: [
        '',
        [
          { metadataKey: 'a', metadataValue: '0x0102' },
          { metadataKey: 'b', metadataValue: '0x' },
        ],
      ],
    });
    const receipt = await mined(system, await caller.writeContract(request));
    expect((await registryEvents(system, receipt)).map((e) => e.eventName)).toEqual(['Transfer', 'Registered', 'MetadataSet', 'MetadataSet']);
    expect(await system.client.readContract({ ...reader(system), functionName: 'getMetadata', args: [id, 'a'] })).toBe('0x0102');
    expect(await system.client.readContract({ ...reader(system), functionName: 'ownerOf', args: [id] })).toBe(caller.account.address);
  });

  it('ArrayLengthMismatch(keys, values) for differing lengths', async () => {
    await expectCallReverts(
      system.client.simulateContract({ ...base(), functionName: 'register', args: ['', ['a'], ['0x01', '0x02', '0x03']] }),
      'ArrayLengthMismatch',
      [1n, 3n],
    );
  });

  it('the reserved key "agentWallet" is refused by both metadata overloads (ReservedMetadataKey)', async () => {
    await expectCallReverts(
      system.client.simulateContract({
        ...base(),
        functionName: 'register',
        args: ['', ['ok', 'agentWallet'], ['0x01', pad(caller.account.address)]],
      }),
      'ReservedMetadataKey',
    );
    await expectCallReverts(
      system.client.simulateContract({
        ...base(),
        functionName: 'register',
        args: ['', [{ metadataKey: 'agentWallet', metadataValue: pad(caller.account.address) }]],
      }),
      'ReservedMetadataKey',
    );
  });

  it('a bare agent is not linked to any human: nullifier 0 lists and counts nothing', async () => {
    const { request } = await system.client.simulateContract({ ...base(), functionName: 'register' });
    await mined(system, await caller.writeContract(request));
    expect(await system.client.readContract({ ...reader(system), functionName: 'getAgentsForNullifier', args: [0n] })).toEqual([]);
    expect(await system.client.readContract({ ...reader(system), functionName: 'getAgentCountForHuman', args: [0n] })).toBe(0n);
  });

  it('a bare agent can be selfDeregistered by its owner (no panic): burned, HumanProofRevoked(id, 0)', async () => {
    const { result: id, request } = await system.client.simulateContract({ ...base(), functionName: 'register', args: ['ipfs://x'] });
    await mined(system, await caller.writeContract(request));

    const stranger = await system.newWallet();
    await expectCallReverts(
      system.client.simulateContract({ ...reader(system), account: stranger.account, functionName: 'selfDeregister', args: [id] }),
      'NotNftOwner',
      [id],
    );

    const receipt = await mined(system, await caller.writeContract({ ...reader(system), functionName: 'selfDeregister', args: [id] }));
    const events = await registryEvents(system, receipt);
    expect(events.map((e) => e.eventName)).toEqual(['Transfer', 'HumanProofRevoked']);
    expect(events[0]?.args).toEqual({ from: caller.account.address, to: zeroAddress, tokenId: id });
    expect(events[1]?.args).toEqual({ agentId: id, nullifier: 0n });
    await expectCallReverts(system.client.readContract({ ...reader(system), functionName: 'ownerOf', args: [id] }), 'ERC721NonexistentToken', [id]);
    await expectCallReverts(system.client.readContract({ ...reader(system), functionName: 'tokenURI', args: [id] }), 'ERC721NonexistentToken', [id]);
  });

  it('bare agents are soulbound too: transfers revert TransferNotAllowed', async () => {
    const { result: id, request } = await system.client.simulateContract({ ...base(), functionName: 'register' });
    await mined(system, await caller.writeContract(request));
    const to = newAccount().address;
    await expectCallReverts(
      system.client.simulateContract({ ...base(), functionName: 'transferFrom', args: [caller.account.address, to, id] }),
      'TransferNotAllowed',
    );
    await expectCallReverts(
      system.client.simulateContract({ ...base(), functionName: 'safeTransferFrom', args: [caller.account.address, to, id] }),
      'TransferNotAllowed',
    );
  });
});

// ------------------------------------------------------------------------------------------------------------

describe('agent URI and key/value metadata of a human-linked agent', () => {
  let system: TestSystem;
  let human: ChainWallet;
  let stranger: ChainWallet;
  let agent: RegisteredAgent;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    [human, stranger] = await Promise.all([system.newWallet(), system.newWallet()]);
    agent = await registerLinked(system, { human: human.account.address });
  });

  it('a hub-registered agent starts with an empty tokenURI', async () => {
    expect(await system.client.readContract({ ...reader(system), functionName: 'tokenURI', args: [agent.agentId] })).toBe('');
  });

  it('setAgentURI by the owner updates tokenURI and emits URIUpdated(id, uri, owner); "" is allowed', async () => {
    const receipt = await mined(
      system,
      await human.writeContract({ ...reader(system), functionName: 'setAgentURI', args: [agent.agentId, 'https://agent.example/card.json'] }),
    );
    expect((await registryEvents(system, receipt)).map((e) => [e.eventName, e.args])).toEqual([
      ['URIUpdated', { agentId: agent.agentId, newURI: 'https://agent.example/card.json', updatedBy: human.account.address }],
    ]);
    expect(await system.client.readContract({ ...reader(system), functionName: 'tokenURI', args: [agent.agentId] })).toBe(
      'https://agent.example/card.json',
    );

    await mined(system, await human.writeContract({ ...reader(system), functionName: 'setAgentURI', args: [agent.agentId, ''] }));
    expect(await system.client.readContract({ ...reader(system), functionName: 'tokenURI', args: [agent.agentId] })).toBe('');
  });

  it('setAgentURI by anyone else reverts NotNftOwner; for an unminted id ERC721NonexistentToken', async () => {
    await expectCallReverts(
      system.client.simulateContract({ ...reader(system), account: stranger.account, functionName: 'setAgentURI', args: [agent.agentId, 'x'] }),
      'NotNftOwner',
      [agent.agentId],
    );
    await expectCallReverts(
      system.client.simulateContract({ ...reader(system), account: human.account, functionName: 'setAgentURI', args: [10_000n, 'x'] }),
      'ERC721NonexistentToken',
      [10_000n],
    );
    await expectCallReverts(system.client.readContract({ ...reader(system), functionName: 'tokenURI', args: [10_000n] }), 'ERC721NonexistentToken', [
      10_000n,
    ]);
  });

  it('setMetadata by the owner stores the value and emits MetadataSet(id, keccak(key), key, value)', async () => {
    const receipt = await mined(
      system,
      await human.writeContract({ ...reader(system), functionName: 'setMetadata', args: [agent.agentId, 'a2a', '0xc0ffee'] }),
    );
    expect(receipt.logs).toHaveLength(1);
    expect(receipt.logs[0]?.topics[2]).toBe(keccak256(stringToHex('a2a')));
    expect((await registryEvents(system, receipt))[0]?.args).toEqual({
      agentId: agent.agentId,
      indexedMetadataKey: keccak256(stringToHex('a2a')),
      metadataKey: 'a2a',
      metadataValue: '0xc0ffee',
    });
    expect(await system.client.readContract({ ...reader(system), functionName: 'getMetadata', args: [agent.agentId, 'a2a'] })).toBe('0xc0ffee');

    await mined(system, await human.writeContract({ ...reader(system), functionName: 'setMetadata', args: [agent.agentId, 'a2a', '0x'] }));
    expect(await system.client.readContract({ ...reader(system), functionName: 'getMetadata', args: [agent.agentId, 'a2a'] })).toBe('0x');
  });

  it('setMetadata refuses the reserved key "agentWallet" (ReservedMetadataKey) and non-owners (NotNftOwner)', async () => {
    await expectCallReverts(
      system.client.simulateContract({
        ...reader(system),
        account: human.account,
        functionName: 'setMetadata',
        args: [agent.agentId, 'agentWallet', pad(human.account.address)],
      }),
      'ReservedMetadataKey',
    );
    await expectCallReverts(
      system.client.simulateContract({
        ...reader(system),
        account: stranger.account,
        functionName: 'setMetadata',
        args: [agent.agentId, 'a2a', '0x01'],
      }),
      'NotNftOwner',
      [agent.agentId],
    );
  });
});

// ------------------------------------------------------------------------------------------------------------

const agentWalletSetTypes = {
  AgentWalletSet: [
    { name: 'agentId', type: 'uint256' },
    { name: 'newWallet', type: 'address' },
    { name: 'owner', type: 'address' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
} as const;

describe('setAgentWallet / getAgentWallet / unsetAgentWallet (EIP-712 AgentWalletSet)', () => {
  let system: TestSystem;
  let human: ChainWallet;
  let stranger: ChainWallet;
  let agent: RegisteredAgent;
  let domain: { name: string; version: string; chainId: number; verifyingContract: Address };
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    [human, stranger] = await Promise.all([system.newWallet(), system.newWallet()]);
    agent = await registerLinked(system, { human: human.account.address });
    const [, name, version, chainId, verifyingContract] = await system.client.readContract({
      ...reader(system),
      functionName: 'eip712Domain',
    });
    domain = { name, version, chainId: Number(chainId), verifyingContract };
  });

  async function sign(
    wallet: LocalAccount,
    message: { agentId: bigint; newWallet: Address; owner: Address; nonce: bigint; deadline: bigint },
  ): Promise<Hex> {
    return wallet.signTypedData({ domain, types: agentWalletSetTypes, primaryType: 'AgentWalletSet', message });
  }

  /** setAgentWallet(agent, newWallet, deadline, signature) sent by `from` (default: the owning human), simulated. */
  const simulateSetWallet = (newWallet: Address, deadline: bigint, signature: Hex, from: ChainWallet = human) =>
    system.client.simulateContract({
      ...reader(system),
      account: from.account,
      functionName: 'setAgentWallet',
      args: [agent.agentId, newWallet, deadline, signature],
    });

  it('eip712Domain() describes this registry on this chain, and domainSeparator() is its hash', async () => {
    const [fields, name, version, chainId, verifyingContract, salt, extensions] = await system.client.readContract({
      ...reader(system),
      functionName: 'eip712Domain',
    });
    expect(fields).toBe('0x0f');
    expect(name.length).toBeGreaterThan(0);
    expect(version).toBe('1');
    expect(chainId).toBe(BigInt(system.deployment.chainId));
    expect(verifyingContract).toBe(system.deployment.contracts.registry);
    expect(salt).toBe(pad('0x', { size: 32 }));
    expect(extensions).toEqual([]);
    expect(await system.client.readContract({ ...reader(system), functionName: 'domainSeparator' })).toBe(domainSeparator({ domain }));
  });

  it('getAgentWallet is the zero address while unset', async () => {
    expect(await system.client.readContract({ ...reader(system), functionName: 'getAgentWallet', args: [agent.agentId] })).toBe(zeroAddress);
  });

  it('refuses an expired deadline (DeadlineExpired), a foreign signer (InvalidWalletSignature) and non-owners (NotNftOwner)', async () => {
    const wallet = newAccount();
    const now = await latestTimestamp(system);
    const message = { agentId: agent.agentId, newWallet: wallet.address, owner: human.account.address, nonce: 0n };

    const expired = await sign(wallet, { ...message, deadline: now - 100n });
    await expectCallReverts(simulateSetWallet(wallet.address, now - 100n, expired), 'DeadlineExpired');

    const deadline = now + 3600n;
    const byOther = await sign(newAccount(), { ...message, deadline });
    await expectCallReverts(simulateSetWallet(wallet.address, deadline, byOther), 'InvalidWalletSignature');

    // signed by the wallet, but for another owner, or another nonce, or another agent
    for (const wrong of [{ owner: stranger.account.address }, { nonce: 1n }, { agentId: agent.agentId + 1n }]) {
      const signature = await sign(wallet, { ...message, deadline, ...wrong });
      await expectCallReverts(simulateSetWallet(wallet.address, deadline, signature), 'InvalidWalletSignature');
    }

    const valid = await sign(wallet, { ...message, deadline });
    await expectCallReverts(simulateSetWallet(wallet.address, deadline, valid, stranger), 'NotNftOwner', [agent.agentId]);
  });

  it('a valid signature sets the wallet; unset clears it; replaying the old signature is then refused', async () => {
    const wallet = newAccount();
    const deadline = (await latestTimestamp(system)) + 3600n;
    const nonce = await system.client.readContract({ ...reader(system), functionName: 'walletSetNonces', args: [agent.agentId] });
    const signature = await sign(wallet, {
      agentId: agent.agentId,
      newWallet: wallet.address,
      owner: human.account.address,
      nonce,
      deadline,
    });
    const args = [agent.agentId, wallet.address, deadline, signature] as const;

    const receipt = await mined(system, await human.writeContract({ ...reader(system), functionName: 'setAgentWallet', args }));
    const encoded = encodeAbiParameters([{ type: 'address' }], [wallet.address]);
    expect((await registryEvents(system, receipt)).map((e) => [e.eventName, e.args])).toEqual([
      [
        'MetadataSet',
        { agentId: agent.agentId, indexedMetadataKey: keccak256(stringToHex('agentWallet')), metadataKey: 'agentWallet', metadataValue: encoded },
      ],
    ]);
    expect(await system.client.readContract({ ...reader(system), functionName: 'getAgentWallet', args: [agent.agentId] })).toBe(wallet.address);
    expect(await system.client.readContract({ ...reader(system), functionName: 'getMetadata', args: [agent.agentId, 'agentWallet'] })).toBe(encoded);
    expect(await system.client.readContract({ ...reader(system), functionName: 'walletSetNonces', args: [agent.agentId] })).toBe(nonce + 1n);

    await expectCallReverts(
      system.client.simulateContract({ ...reader(system), account: stranger.account, functionName: 'unsetAgentWallet', args: [agent.agentId] }),
      'NotNftOwner',
      [agent.agentId],
    );
    const unset = await mined(system, await human.writeContract({ ...reader(system), functionName: 'unsetAgentWallet', args: [agent.agentId] }));
    expect((await registryEvents(system, unset)).map((e) => [e.eventName, e.args])).toEqual([
      [
        'MetadataSet',
        { agentId: agent.agentId, indexedMetadataKey: keccak256(stringToHex('agentWallet')), metadataKey: 'agentWallet', metadataValue: '0x' },
      ],
    ]);
    expect(await system.client.readContract({ ...reader(system), functionName: 'getAgentWallet', args: [agent.agentId] })).toBe(zeroAddress);

    // unsetting again is a no-op without an event
    const again = await mined(system, await human.writeContract({ ...reader(system), functionName: 'unsetAgentWallet', args: [agent.agentId] }));
    expect(again.logs).toEqual([]);

    await expectCallReverts(simulateSetWallet(wallet.address, deadline, signature), 'InvalidWalletSignature');
  });
});

// ------------------------------------------------------------------------------------------------------------

describe('roles and settings', () => {
  let system: TestSystem;
  let stranger: ChainWallet;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    stranger = await system.newWallet();
  });

  it('the owner holds SECURITY_ROLE and OPERATIONS_ROLE (SECURITY_ROLE administers both); nobody holds DEFAULT_ADMIN_ROLE', async () => {
    const owner = system.operator.account.address;
    const hasRole = (role: Hex, account: Address) =>
      system.client.readContract({ ...reader(system), functionName: 'hasRole', args: [role, account] });
    expect(await hasRole(SECURITY_ROLE, owner)).toBe(true);
    expect(await hasRole(OPERATIONS_ROLE, owner)).toBe(true);
    expect(await hasRole(pad('0x', { size: 32 }), owner)).toBe(false);
    expect(await hasRole(SECURITY_ROLE, stranger.account.address)).toBe(false);
    expect(await system.client.readContract({ ...reader(system), functionName: 'getRoleAdmin', args: [SECURITY_ROLE] })).toBe(SECURITY_ROLE);
    expect(await system.client.readContract({ ...reader(system), functionName: 'getRoleAdmin', args: [OPERATIONS_ROLE] })).toBe(SECURITY_ROLE);
  });

  it('defaults: maxAgentsPerHuman 1, maxProofAge 365 days, requireHumanProof true', async () => {
    expect(await system.client.readContract({ ...reader(system), functionName: 'maxAgentsPerHuman' })).toBe(1n);
    expect(await system.client.readContract({ ...reader(system), functionName: 'maxProofAge' })).toBe(31_536_000n);
    expect(await system.client.readContract({ ...reader(system), functionName: 'requireHumanProof' })).toBe(true);
  });

  it('setMaxAgentsPerHuman and setMaxProofAge need OPERATIONS_ROLE', async () => {
    const account = stranger.account;
    await expectCallReverts(
      system.client.simulateContract({ ...reader(system), account, functionName: 'setMaxAgentsPerHuman', args: [5n] }),
      'AccessControlUnauthorizedAccount',
      [account.address, OPERATIONS_ROLE],
    );
    await expectCallReverts(
      system.client.simulateContract({ ...reader(system), account, functionName: 'setMaxProofAge', args: [86_400n] }),
      'AccessControlUnauthorizedAccount',
      [account.address, OPERATIONS_ROLE],
    );
  });

  it('the provider and proof settings need SECURITY_ROLE', async () => {
    const account = stranger.account;
    const other = newAccount().address;
    const expectSecurity = (call: Promise<unknown>) => expectCallReverts(call, 'AccessControlUnauthorizedAccount', [account.address, SECURITY_ROLE]);
    await expectSecurity(system.client.simulateContract({ ...reader(system), account, functionName: 'setSelfProofProvider', args: [other] }));
    await expectSecurity(system.client.simulateContract({ ...reader(system), account, functionName: 'addProofProvider', args: [other] }));
    await expectSecurity(
      system.client.simulateContract({
        ...reader(system),
        account,
        functionName: 'removeProofProvider',
        args: [system.deployment.contracts.proofProvider],
      }),
    );
    await expectSecurity(system.client.simulateContract({ ...reader(system), account, functionName: 'setRequireHumanProof', args: [false] }));
    await expectSecurity(system.client.simulateContract({ ...reader(system), account, functionName: 'setEd25519Verifier', args: [other] }));
  });

  it('setMaxAgentsPerHuman stores the value and emits MaxAgentsPerHumanUpdated', async () => {
    const receipt = await mined(system, await system.operator.writeContract({ ...reader(system), functionName: 'setMaxAgentsPerHuman', args: [3n] }));
    expect((await registryEvents(system, receipt)).map((e) => [e.eventName, e.args])).toEqual([
      ['MaxAgentsPerHumanUpdated', { newMaxAgentsPerHuman: 3n }],
    ]);
    expect(await system.client.readContract({ ...reader(system), functionName: 'maxAgentsPerHuman' })).toBe(3n);
  });

  it('setMaxProofAge(0) reverts InvalidMaxProofAge; another value is stored with MaxProofAgeUpdated', async () => {
    await expectCallReverts(
      system.client.simulateContract({ ...reader(system), account: system.operator.account, functionName: 'setMaxProofAge', args: [0n] }),
      'InvalidMaxProofAge',
    );
    const receipt = await mined(system, await system.operator.writeContract({ ...reader(system), functionName: 'setMaxProofAge', args: [86_400n] }));
    expect((await registryEvents(system, receipt)).map((e) => [e.eventName, e.args])).toEqual([['MaxProofAgeUpdated', { newMaxProofAge: 86_400n }]]);
    expect(await system.client.readContract({ ...reader(system), functionName: 'maxProofAge' })).toBe(86_400n);
  });
});

// ------------------------------------------------------------------------------------------------------------

describe('proof providers', () => {
  let system: TestSystem;
  let user: ChainWallet;
  let second: Address;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    user = await system.newWallet();
    const scope = await system.client.readContract({ ...reader(system), functionName: 'scope' });
    const hash = await system.operator.deployContract({
      abi: humanProofProviderAbi,
      bytecode: humanProofProviderBytecode,
      args: [system.deployment.contracts.hub, scope],
    });
    const receipt = await mined(system, hash);
    if (!receipt.contractAddress) throw new Error('no contract address');
    second = getAddress(receipt.contractAddress);
  });

  const isApproved = (provider: Address) => system.client.readContract({ ...reader(system), functionName: 'isApprovedProvider', args: [provider] });

  it('after deployment the Self provider is the selfProofProvider and approved', async () => {
    const self = system.deployment.contracts.proofProvider;
    expect(await system.client.readContract({ ...reader(system), functionName: 'selfProofProvider' })).toBe(self);
    expect(await isApproved(self)).toBe(true);
    expect(await system.client.readContract({ ...reader(system), functionName: 'approvedProviders', args: [self] })).toBe(true);
    expect(await isApproved(second)).toBe(false);
  });

  it('registerWithHumanProof with a provider that is not approved reverts ProviderNotApproved(provider)', async () => {
    for (const provider of [second, newAccount().address]) {
      await expectCallReverts(
        system.client.simulateContract({
          ...reader(system),
          account: user.account,
          functionName: 'registerWithHumanProof',
          args: ['ipfs://x', provider, '0x', pad(user.account.address)],
        }),
        'ProviderNotApproved',
        [provider],
      );
    }
  });

  it('registerWithHumanProof with the Self provider: ProviderDataTooShort under 32 bytes, else the provider refuses', async () => {
    const self = system.deployment.contracts.proofProvider;
    await expectCallReverts(
      system.client.simulateContract({
        ...reader(system),
        account: user.account,
        functionName: 'registerWithHumanProof',
        args: ['', self, '0x', '0x1234'],
      }),
      'ProviderDataTooShort',
    );
    const abi = [...agentRegistryAbi, ...humanProofProviderAbi.filter((e) => e.type === 'error')] as const;
    await expectCallReverts(
      system.client.simulateContract({
        address: system.deployment.contracts.registry,
        abi,
        account: user.account,
        functionName: 'registerWithHumanProof',
        args: ['', self, '0x', pad(user.account.address)],
      }),
      'DirectVerificationNotSupported',
    );
  });

  it('revokeHumanProof with a provider that is not approved reverts ProviderNotApproved', async () => {
    await expectCallReverts(
      system.client.simulateContract({
        ...reader(system),
        account: user.account,
        functionName: 'revokeHumanProof',
        args: [1n, second, '0x', '0x'],
      }),
      'ProviderNotApproved',
      [second],
    );
  });

  it('addProofProvider approves with ProofProviderAdded(provider, providerName()); twice: ProviderAlreadyApproved', async () => {
    const receipt = await mined(system, await system.operator.writeContract({ ...reader(system), functionName: 'addProofProvider', args: [second] }));
    expect((await registryEvents(system, receipt)).map((e) => [e.eventName, e.args])).toEqual([
      ['ProofProviderAdded', { provider: second, name: 'self' }],
    ]);
    expect(await isApproved(second)).toBe(true);
    await expectCallReverts(
      system.client.simulateContract({ ...reader(system), account: system.operator.account, functionName: 'addProofProvider', args: [second] }),
      'ProviderAlreadyApproved',
      [second],
    );
  });

  it('removeProofProvider un-approves with ProofProviderRemoved(provider); twice: ProviderNotApproved', async () => {
    const receipt = await mined(
      system,
      await system.operator.writeContract({ ...reader(system), functionName: 'removeProofProvider', args: [second] }),
    );
    expect((await registryEvents(system, receipt)).map((e) => [e.eventName, e.args])).toEqual([['ProofProviderRemoved', { provider: second }]]);
    expect(await isApproved(second)).toBe(false);
    await expectCallReverts(
      system.client.simulateContract({ ...reader(system), account: system.operator.account, functionName: 'removeProofProvider', args: [second] }),
      'ProviderNotApproved',
      [second],
    );
  });

  it('setSelfProofProvider swaps the approved Self provider, and hub registrations record the new one', async () => {
    const old = system.deployment.contracts.proofProvider;
    const receipt = await mined(
      system,
      await system.operator.writeContract({ ...reader(system), functionName: 'setSelfProofProvider', args: [second] }),
    );
    expect((await registryEvents(system, receipt)).map((e) => [e.eventName, e.args])).toEqual([
      ['ProofProviderRemoved', { provider: old }],
      ['ProofProviderAdded', { provider: second, name: 'self' }],
    ]);
    expect(await system.client.readContract({ ...reader(system), functionName: 'selfProofProvider' })).toBe(second);
    expect(await isApproved(old)).toBe(false);
    expect(await isApproved(second)).toBe(true);

    const agent = await registerLinked(system);
    expect(await system.client.readContract({ ...reader(system), functionName: 'getProofProvider', args: [agent.agentId] })).toBe(second);
  });
});
