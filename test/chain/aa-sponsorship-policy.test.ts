// The local paymaster's sponsorship policy on a real anvil: it pays for accounts of our two factories only (deployed
// by the operation or before it, recognised by their code), for the registry's agent actions by the account they
// concern and for the operator's targets, and refuses anything else naming the rule; its budgets per token, client
// and paymaster, told by the proxy's MACed header over the loopback JSON-RPC server, stop one client while another
// is still sponsored.
import { type Address, encodeFunctionData, type Hex, http, keccak256, numberToHex, parseAbi, parseEther, parseGwei, zeroAddress } from 'viem';
import { createBundlerClient, createPaymasterClient } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodePasskeyAccountCalls, type PasskeySmartAccount, toPasskeySmartAccount } from '../../src/aa/passkey-account.js';
import { encodeSponsoree, SPONSOREE_HEADER } from '../../src/aa/sponsoree-header.js';
import { agentRegistryAbi } from '../../src/contracts/artifacts/AgentRegistry.js';
import { passkeyAccountFactoryAbi } from '../../src/contracts/artifacts/PasskeyAccountFactory.js';
import { simpleAccountExecuteAbi } from '../../src/devnet/aa/account-calls.js';
import { createLocalBundler } from '../../src/devnet/aa/bundler.js';
import { type AccountAbstractionAddresses, deployAccountAbstraction } from '../../src/devnet/aa/deploy-aa.js';
import { DETERMINISTIC_DEPLOYER } from '../../src/devnet/aa/entry-point.js';
import { createLocalPaymaster, type LocalPaymaster } from '../../src/devnet/aa/paymaster-rpc.js';
import { type AaRpcServer, startAaRpcServer } from '../../src/devnet/aa/rpc-server.js';
import { SIMPLE_ACCOUNT_FACTORY_V07, simpleAccountFactoryAbi } from '../../src/devnet/aa/simple-account-factory.js';
import { SIMPLE_ACCOUNT_PROXY_CODE_HASH } from '../../src/devnet/aa/sponsored-calls.js';
import { softwarePasskey } from '../support/aa.js';
import { registerLinked, registerWalletFree } from '../support/agents.js';
import { deployTestSystem, type TestSystem } from '../support/chain.js';

const ALLOWED_TARGET: Address = '0x5AEDA56215b167893e80B4fE645BA6d5Bab767DE';
const STRANGER: Address = '0x1111111111111111111111111111111111111111';

type RpcOperation = Record<string, Hex | Address | undefined>;

describe('local paymaster sponsorship policy', () => {
  let system: TestSystem;
  let aa: AccountAbstractionAddresses;
  let registry: Address;
  let paymaster: LocalPaymaster;
  let chainId: Hex;
  const signer = privateKeyToAccount(generatePrivateKey());

  const passkeyAccount = (): Promise<PasskeySmartAccount> =>
    toPasskeySmartAccount({ client: system.client, owner: softwarePasskey(), factory: aa.accountFactory });

  /** An operation as wallets send it for sponsorship, gas limits fixed (1.6M in all with the paymaster's 100K). */
  async function operation(sender: Address, callData: Hex, deploy?: { factory: Address; factoryData: Hex }): Promise<RpcOperation> {
    return {
      sender,
      nonce: '0x0',
      ...(deploy ?? {}),
      callData,
      callGasLimit: numberToHex(400_000n),
      verificationGasLimit: numberToHex(1_000_000n),
      preVerificationGas: numberToHex(100_000n),
      maxFeePerGas: numberToHex(parseGwei('2')),
      maxPriorityFeePerGas: numberToHex(parseGwei('1')),
      signature: '0x',
    };
  }

  /** A passkey account's first operation: it deploys the account and makes `calls`. */
  async function passkeyDeployment(calls: Parameters<typeof encodePasskeyAccountCalls>[0], account?: PasskeySmartAccount) {
    const owner = account ?? (await passkeyAccount());
    const deploy = (await owner.getFactoryArgs()) as { factory: Address; factoryData: Hex };
    return operation(owner.address, encodePasskeyAccountCalls(calls), deploy);
  }

  /** A SimpleAccount v0.7 its owner deployed through the canonical factory, before any operation. */
  async function deployedSimpleAccount(): Promise<Address> {
    const owner = privateKeyToAccount(generatePrivateKey()).address;
    const hash = await system.operator.writeContract({
      address: aa.simpleAccountFactory,
      abi: simpleAccountFactoryAbi,
      functionName: 'createAccount',
      args: [owner, 0n],
    });
    await system.client.waitForTransactionReceipt({ hash });
    return system.client.readContract({
      address: aa.simpleAccountFactory,
      abi: simpleAccountFactoryAbi,
      functionName: 'getAddress',
      args: [owner, 0n],
    });
  }

  const simpleExecute = (to: Address, data: Hex = '0x', value = 0n) =>
    encodeFunctionData({ abi: simpleAccountExecuteAbi, functionName: 'execute', args: [to, value, data] });
  const registryCall = (functionName: 'guardianRevoke' | 'selfDeregister' | 'setMaxAgentsPerHuman', arg: bigint) =>
    encodeFunctionData({ abi: agentRegistryAbi, functionName, args: [arg] } as Parameters<typeof encodeFunctionData>[0]);

  const stub = (op: RpcOperation) => paymaster.methods.pm_getPaymasterStubData!([op, aa.entryPoint, chainId, {}]);
  const refusedBy = (rule: string, message: RegExp | string) => ({
    code: -32001,
    data: { rule },
    shortMessage: typeof message === 'string' ? `Sponsorship refused: ${rule}: ${message}` : expect.stringMatching(message),
  });

  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    aa = await deployAccountAbstraction({ client: system.client, wallet: system.operator, paymasterSigner: signer.address });
    registry = system.deployment.contracts.registry;
    chainId = numberToHex(system.client.chain.id);
    paymaster = createLocalPaymaster({
      client: system.client,
      paymaster: aa.paymaster,
      signer,
      entryPoint: aa.entryPoint,
      calls: { registry, passkeyFactory: aa.accountFactory, simpleAccountFactory: aa.simpleAccountFactory, allowedTargets: [ALLOWED_TARGET] },
    });
  });

  it('sponsors accounts of our two factories, deployed by the operation or before it and recognised by their code', async () => {
    expect(await stub(await passkeyDeployment([]))).toMatchObject({ paymaster: aa.paymaster });
    const emptyCallData = await passkeyDeployment([]);
    expect(await stub({ ...emptyCallData, callData: '0x' }), 'a deployment with no callData at all').toMatchObject({ paymaster: aa.paymaster });
    expect(await stub(await passkeyDeployment([{ to: ALLOWED_TARGET, value: 1n, data: '0x12' }]))).toMatchObject({ paymaster: aa.paymaster });

    // deployed by their owners through the factories, outside any operation
    const simple = await deployedSimpleAccount();
    expect(keccak256((await system.client.getCode({ address: simple }))!)).toBe(SIMPLE_ACCOUNT_PROXY_CODE_HASH);
    expect(await stub(await operation(simple, simpleExecute(ALLOWED_TARGET)))).toMatchObject({ paymaster: aa.paymaster });
    const passkey = await passkeyAccount();
    const { factoryData } = (await passkey.getFactoryArgs()) as { factoryData: Hex };
    await system.client.waitForTransactionReceipt({
      hash: await system.operator.sendTransaction({ to: aa.accountFactory, data: factoryData }),
    });
    expect(await passkey.isDeployed()).toBe(true);
    expect(await stub(await operation(passkey.address, encodePasskeyAccountCalls([{ to: ALLOWED_TARGET }])))).toMatchObject({
      paymaster: aa.paymaster,
    });
    // the same calls encoded for the other kind of account are not its calls
    await expect(stub(await operation(simple, encodePasskeyAccountCalls([{ to: ALLOWED_TARGET }])))).rejects.toMatchObject(
      refusedBy('allowed calls', "the callData is not a simple account's execute or executeBatch, canonically encoded"),
    );
  });

  it('refuses the initCode of another factory, or a call of ours that is not createAccount', async () => {
    const account = await passkeyAccount();
    const looping = await operation(account.address, '0x', { factory: DETERMINISTIC_DEPLOYER, factoryData: `0x${'00'.repeat(32)}5b600056` });
    await expect(stub(looping)).rejects.toMatchObject(
      refusedBy(
        'factory',
        `the operation's factory ${DETERMINISTIC_DEPLOYER} is not one of this paymaster's (PasskeyAccountFactory ${aa.accountFactory}, SimpleAccountFactory v0.7 ${SIMPLE_ACCOUNT_FACTORY_V07})`,
      ),
    );
    const getAddressCall = encodeFunctionData({
      abi: passkeyAccountFactoryAbi,
      functionName: 'getAddress',
      args: [`0x${'11'.repeat(32)}`, `0x${'22'.repeat(32)}`, 0n],
    });
    await expect(stub(await operation(account.address, '0x', { factory: aa.accountFactory, factoryData: getAddressCall }))).rejects.toMatchObject(
      refusedBy('factory', `factoryData is not a createAccount call of ${aa.accountFactory}`),
    );
  });

  it('refuses a sender whose calls it cannot read: not an account of ours, or no account at all', async () => {
    await expect(stub(await operation(registry, simpleExecute(ALLOWED_TARGET)))).rejects.toMatchObject(
      refusedBy('account kind', /is not an account of this paymaster's factories .*: its callData cannot be checked$/),
    );
    await expect(stub(await operation(STRANGER, simpleExecute(ALLOWED_TARGET)))).rejects.toMatchObject(
      refusedBy('account kind', `${STRANGER} has no code and the operation deploys no account (factory and factoryData)`),
    );
  });

  it("pays for the registry's agent actions by the account they concern and for the operator's targets, nothing else", async () => {
    const guardian = await passkeyAccount();
    const guarded = await registerWalletFree(system, { guardian: guardian.address });
    const simple = await deployedSimpleAccount();
    const owned = await registerLinked(system, { human: simple });

    expect(await stub(await passkeyDeployment([{ to: registry, data: registryCall('guardianRevoke', guarded.agentId) }], guardian))).toBeDefined();
    const other = await passkeyAccount();
    await expect(
      stub(await passkeyDeployment([{ to: registry, data: registryCall('guardianRevoke', guarded.agentId) }], other)),
    ).rejects.toMatchObject(
      refusedBy(
        'allowed calls',
        `call 1 of 1 calls guardianRevoke(${guarded.agentId}) from ${other.address}, which is not agent ${guarded.agentId}'s guardian`,
      ),
    );
    expect(await stub(await operation(simple, simpleExecute(registry, registryCall('selfDeregister', owned.agentId))))).toBeDefined();
    const metadata = encodeFunctionData({ abi: agentRegistryAbi, functionName: 'updateAgentMetadata', args: [owned.agentId, '{"name":"x"}'] });
    expect(await stub(await operation(simple, simpleExecute(registry, metadata)))).toBeDefined();

    const refusals: [Hex, string | RegExp][] = [
      [
        simpleExecute(registry, registryCall('guardianRevoke', owned.agentId)),
        `call 1 of 1 calls guardianRevoke(${owned.agentId}) from ${simple}, which is not agent ${owned.agentId}'s guardian`,
      ],
      [
        simpleExecute(registry, registryCall('selfDeregister', 999_999n)),
        `call 1 of 1 calls selfDeregister(999999) from ${simple}, which is not agent 999999's owner`,
      ],
      [
        simpleExecute(registry, registryCall('setMaxAgentsPerHuman', 5n)),
        'call 1 of 1 calls registry function setMaxAgentsPerHuman, not one of guardianRevoke, selfDeregister, updateAgentMetadata',
      ],
      [simpleExecute(registry, '0xdeadbeef'), /calls registry function 0xdeadbeef, not one of/],
      [simpleExecute(registry, registryCall('selfDeregister', owned.agentId), 1n), 'call 1 of 1 sends value with selfDeregister, which takes none'],
      [simpleExecute(STRANGER), `call 1 of 1 goes to ${STRANGER}, neither the registry nor a target the operator allows`],
      [simpleExecute(simple), `call 1 of 1 goes to ${simple}, neither the registry nor a target the operator allows`],
      [
        encodeFunctionData({ abi: simpleAccountExecuteAbi, functionName: 'executeBatch', args: [[ALLOWED_TARGET, STRANGER], [], ['0x', '0x']] }),
        `call 2 of 2 goes to ${STRANGER}, neither the registry nor a target the operator allows`,
      ],
      ['0x', 'the operation neither deploys the account nor calls anything'],
      [
        encodeFunctionData({
          abi: parseAbi(['function withdrawDepositTo(address,uint256)']),
          functionName: 'withdrawDepositTo',
          args: [STRANGER, 1n],
        }),
        "the callData is not a simple account's execute or executeBatch, canonically encoded",
      ],
    ];
    for (const [callData, message] of refusals) {
      await expect(stub(await operation(simple, callData)), String(message)).rejects.toMatchObject(refusedBy('allowed calls', message));
    }
    // and signing is refused alike, before anything is counted
    await expect(
      paymaster.methods.pm_getPaymasterData!([await operation(simple, simpleExecute(STRANGER)), aa.entryPoint, chainId, {}]),
    ).rejects.toMatchObject({ data: { rule: 'allowed calls' } });
  });

  describe('budgets, over the loopback JSON-RPC server', () => {
    let server: AaRpcServer;
    const key = new Uint8Array(32).fill(9);
    // an operation of operation() costs 1.6M gas at most: 2 per token, 3 per client, 5 in all
    const budgets = {
      perToken: { gas: 3_500_000n, wei: parseEther('1') },
      perClient: { gas: 5_000_000n, wei: parseEther('1') },
      global: { gas: 8_000_000n, wei: parseEther('1') },
    };

    beforeAll(async () => {
      const limited = createLocalPaymaster({
        client: system.client,
        paymaster: aa.paymaster,
        signer,
        entryPoint: aa.entryPoint,
        calls: { registry, passkeyFactory: aa.accountFactory, simpleAccountFactory: aa.simpleAccountFactory, allowedTargets: [ALLOWED_TARGET] },
        policy: { budgets },
      });
      const bundler = createLocalBundler({ client: system.client, wallet: await system.newWallet(), entryPoint: aa.entryPoint });
      server = await startAaRpcServer({ bundler, paymaster: limited, sponsoreeKey: key });
    });

    afterAll(async () => {
      await server?.close();
    });

    /** pm_getPaymasterData for a new passkey account's deployment, as the proxy sends it for `who` (or as a direct caller). */
    async function sign(who?: { client: string; token?: string }, header?: string) {
      const response = await fetch(server.paymasterUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(who ? { [SPONSOREE_HEADER]: encodeSponsoree(key, who) } : {}),
          ...(header ? { [SPONSOREE_HEADER]: header } : {}),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'pm_getPaymasterData',
          params: [await passkeyDeployment([]), aa.entryPoint, chainId, {}],
        }),
      });
      return {
        status: response.status,
        ...((await response.json()) as { result?: { paymasterData: Hex }; error?: { code: number; message: string; data?: unknown } }),
      };
    }

    it("stops a client minting senders at its token's and its own budget; another is sponsored until the paymaster's is spent", async () => {
      const alice = { client: '203.0.113.10', token: 'token-1' };
      expect((await sign(alice)).result?.paymasterData).toMatch(/^0x[0-9a-f]{258}$/);
      expect((await sign(alice)).result).toBeDefined();
      expect(await sign(alice)).toMatchObject({
        status: 200,
        error: {
          code: -32001,
          data: { rule: 'token budget' },
          message: expect.stringMatching(
            /^Sponsorship refused: token budget: this proxy token was sponsored 3200000 gas and 0\.0064 in the last hour.* or with a new token$/,
          ),
        },
      });
      // a new token: the client's budget still holds
      expect((await sign({ ...alice, token: 'token-2' })).result).toBeDefined();
      expect(await sign({ ...alice, token: 'token-3' })).toMatchObject({
        error: {
          code: -32001,
          data: { rule: 'client budget' },
          message: expect.stringMatching(/^Sponsorship refused: client budget: client 203\.0\.113\.10 was sponsored 4800000 gas/),
        },
      });
      const bob = { client: '198.51.100.20', token: 'token-4' };
      expect((await sign(bob)).result).toBeDefined();
      expect((await sign({ ...bob, token: 'token-5' })).result, '8M in all').toBeDefined();
      expect(await sign({ client: '192.0.2.30', token: 'token-6' })).toMatchObject({ error: { data: { rule: 'global budget' } } });
      expect(await sign(), 'a direct caller').toMatchObject({ error: { data: { rule: 'global budget' } } });
    });

    it('refuses a sponsoree header the proxy did not MAC (401)', async () => {
      const forged = encodeSponsoree(new Uint8Array(32).fill(1), { client: '203.0.113.10' });
      expect(await sign(undefined, forged)).toMatchObject({
        status: 401,
        error: { code: -32600, message: `The ${SPONSOREE_HEADER} header was not set by this service's proxy` },
      });
    });
  });

  it('a guardian deploys its passkey account and revokes its agent in one sponsored operation, and the agent is gone', async () => {
    const bundler = createLocalBundler({ client: system.client, wallet: await system.newWallet(), entryPoint: aa.entryPoint });
    const server = await startAaRpcServer({ bundler, paymaster });
    try {
      const guardian = await passkeyAccount();
      const { agentId } = await registerWalletFree(system, { guardian: guardian.address });
      const client = createBundlerClient({
        client: system.client,
        transport: http(server.bundlerUrl),
        paymaster: createPaymasterClient({ transport: http(server.paymasterUrl) }),
        pollingInterval: 10,
      });
      const hash = await client.sendUserOperation({ account: guardian, calls: [{ to: registry, data: registryCall('guardianRevoke', agentId) }] });
      expect((await client.waitForUserOperationReceipt({ hash, pollingInterval: 10 })).success).toBe(true);
      expect(await system.client.readContract({ address: registry, abi: agentRegistryAbi, functionName: 'agentGuardian', args: [agentId] })).toBe(
        zeroAddress,
      );
      expect(await system.client.getBalance({ address: guardian.address })).toBe(0n);
    } finally {
      await server.close();
    }
  });
});
