// The local ERC-4337 bundler and paymaster services on a real anvil, driven the way wallets drive them: viem's
// bundler client (prepare, estimate, send, wait) and its ERC-7677 paymaster client, over the loopback JSON-RPC server.
import { toSimpleSmartAccount } from 'permissionless/accounts';
import { type Address, type Hex, http, numberToHex, parseEther } from 'viem';
import {
  type BundlerClient,
  createBundlerClient,
  createPaymasterClient,
  entryPoint07Abi,
  formatUserOperationRequest,
  type SmartAccount,
  type UserOperation,
  type UserOperationReceipt,
} from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PasskeySmartAccount, toPasskeySmartAccount } from '../../src/aa/passkey-account.js';
import { createBundleSubmitter } from '../../src/devnet/aa/bundle-submitter.js';
import { createLocalBundler, type LocalBundler } from '../../src/devnet/aa/bundler.js';
import { type AccountAbstractionAddresses, deployAccountAbstraction } from '../../src/devnet/aa/deploy-aa.js';
import { createLocalPaymaster } from '../../src/devnet/aa/paymaster-rpc.js';
import { type AaRpcServer, startAaRpcServer } from '../../src/devnet/aa/rpc-server.js';
import { fund } from '../../src/devnet/embedded.js';
import { softwarePasskey } from '../support/aa.js';
import { deployTestSystem, type TestSystem } from '../support/chain.js';

/** A call target the test paymasters sponsor (what an operator allows with AA_SPONSOR_ALLOWED_TARGETS). */
const SPONSORED_TARGET: Address = '0x5AEDA56215b167893e80B4fE645BA6d5Bab767DE';

interface RpcAnswer {
  result?: unknown;
  error?: { code: number; message: string };
}

/** One JSON-RPC request as the proxy forwards it: the raw answer, error objects included. */
async function rpc(url: string, method: string, params: unknown[] = []): Promise<RpcAnswer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  return (await response.json()) as RpcAnswer;
}

describe('local ERC-4337 bundler and paymaster', () => {
  let system: TestSystem;
  let aa: AccountAbstractionAddresses;
  let bundler: LocalBundler;
  let server: AaRpcServer;
  let bundlerClient: BundlerClient;
  let sponsoredClient: BundlerClient;
  const paymasterSigner = privateKeyToAccount(generatePrivateKey());
  /** What the test paymasters sponsor: the registry's agent actions and SPONSORED_TARGET. */
  const callRules = () => ({
    registry: system.deployment.contracts.registry,
    passkeyFactory: aa.accountFactory,
    simpleAccountFactory: aa.simpleAccountFactory,
    allowedTargets: [SPONSORED_TARGET],
  });

  const passkeyAccount = (): Promise<PasskeySmartAccount> =>
    toPasskeySmartAccount({ client: system.client, owner: softwarePasskey(), factory: aa.accountFactory });
  /** The published SimpleAccount v0.7 (an ECDSA owner), from the canonical factory the stack deploys, as permissionless builds it. */
  const simpleAccount = (): Promise<SmartAccount> =>
    toSimpleSmartAccount({
      client: system.client,
      owner: privateKeyToAccount(generatePrivateKey()),
      factoryAddress: aa.simpleAccountFactory,
      entryPoint: { address: aa.entryPoint, version: '0.7' },
    });

  /** The executor got back at least what its handleOps transaction cost (preVerificationGas covers the overhead). */
  async function expectExecutorRepaid(receipt: UserOperationReceipt): Promise<void> {
    const transaction = await system.client.getTransactionReceipt({ hash: receipt.receipt.transactionHash });
    expect(receipt.actualGasUsed).toBeGreaterThanOrEqual(transaction.gasUsed);
  }

  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    aa = await deployAccountAbstraction({ client: system.client, wallet: system.operator, paymasterSigner: paymasterSigner.address });
    bundler = createLocalBundler({ client: system.client, wallet: await system.newWallet(), entryPoint: aa.entryPoint });
    const paymaster = createLocalPaymaster({
      client: system.client,
      paymaster: aa.paymaster,
      signer: paymasterSigner,
      entryPoint: aa.entryPoint,
      calls: callRules(),
      policy: { maxOperationsPerSender: 2 },
    });
    server = await startAaRpcServer({ bundler, paymaster });
    bundlerClient = createBundlerClient({ client: system.client, transport: http(server.bundlerUrl), pollingInterval: 10 });
    sponsoredClient = createBundlerClient({
      client: system.client,
      transport: http(server.bundlerUrl),
      paymaster: createPaymasterClient({ transport: http(server.paymasterUrl) }),
      pollingInterval: 10,
    });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('names its chain and entry point', async () => {
    expect(await bundlerClient.getChainId()).toBe(11142220);
    expect(await bundlerClient.getSupportedEntryPoints()).toEqual([aa.entryPoint]);
  });

  it('estimates, then includes an operation that deploys a passkey account and makes a call', async () => {
    const account = await passkeyAccount();
    await fund(system.client, account.address, parseEther('1'));
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    const calls = [{ to: recipient, value: 12_345n }];

    const gas = await bundlerClient.estimateUserOperationGas({ account, calls });
    expect(gas.verificationGasLimit).toBeGreaterThan(100_000n); // the account's deployment and its P-256 check
    expect(gas.callGasLimit).toBeGreaterThan(21_000n);
    expect(gas.preVerificationGas).toBeGreaterThan(21_000n);

    const preparing = performance.now();
    const prepared = await bundlerClient.prepareUserOperation({ account, calls });
    const signed = { ...prepared, signature: await account.signUserOperation(prepared) };
    const sending = performance.now();
    const hash = await bundlerClient.request({ method: 'eth_sendUserOperation', params: [formatUserOperationRequest(signed), aa.entryPoint] });
    const accepted = performance.now();
    const receipt = await bundlerClient.waitForUserOperationReceipt({ hash, pollingInterval: 10 });
    const done = performance.now();
    console.log(
      `prepare (estimate) and sign: ${(sending - preparing).toFixed(0)} ms; eth_sendUserOperation answered in ${(accepted - sending).toFixed(0)} ms, ` +
        `receipt after ${(done - sending).toFixed(0)} ms (local anvil, receipt polled every 10 ms)`,
    );

    expect(receipt).toMatchObject({ userOpHash: hash, entryPoint: aa.entryPoint, sender: account.address, success: true });
    expect(receipt.receipt.status).toBe('success');
    expect(receipt.actualGasCost).toBeGreaterThan(0n);
    expect(await system.client.getBalance({ address: recipient })).toBe(12_345n);
    expect(await account.isDeployed()).toBe(true);
    await expectExecutorRepaid(receipt);

    const found = await bundlerClient.getUserOperation({ hash });
    expect(found).toMatchObject({
      entryPoint: aa.entryPoint,
      transactionHash: receipt.receipt.transactionHash,
      blockHash: receipt.receipt.blockHash,
      blockNumber: receipt.receipt.blockNumber,
    });
    expect(found.userOperation).toMatchObject({ sender: account.address, factory: aa.accountFactory, nonce: 0n });

    // a later operation of the deployed account: no factory, the next nonce
    const next = await bundlerClient.sendUserOperation({ account, calls });
    const nextReceipt = await bundlerClient.waitForUserOperationReceipt({ hash: next, pollingInterval: 10 });
    expect(nextReceipt).toMatchObject({ success: true, nonce: 1n });
    await expectExecutorRepaid(nextReceipt);
    expect(await system.client.getBalance({ address: recipient })).toBe(24_690n);
  });

  it('finds receipts and operations on chain after a restart', async () => {
    const account = await passkeyAccount();
    await fund(system.client, account.address, parseEther('1'));
    const hash = await bundlerClient.sendUserOperation({ account, calls: [{ to: account.address, value: 0n }] });
    const receipt = await bundlerClient.waitForUserOperationReceipt({ hash, pollingInterval: 10 });

    // a bundler started afresh remembers nothing: both answers come from the EntryPoint's logs and calldata
    const restarted = createLocalBundler({ client: system.client, wallet: await system.newWallet(), entryPoint: aa.entryPoint });
    const again = (await restarted.methods.eth_getUserOperationReceipt!([hash])) as { success: boolean; receipt: { transactionHash: Hex } };
    expect(again).toMatchObject({ success: true, receipt: { transactionHash: receipt.receipt.transactionHash } });
    const byHash = (await restarted.methods.eth_getUserOperationByHash!([hash])) as { userOperation: { sender: Address }; blockNumber: Hex };
    expect(byHash).toMatchObject({ userOperation: { sender: account.address }, blockNumber: numberToHex(receipt.receipt.blockNumber) });
    expect(await restarted.methods.eth_getUserOperationReceipt!([`0x${'ab'.repeat(32)}`])).toBeNull();
    expect(await restarted.methods.eth_getUserOperationByHash!([`0x${'ab'.repeat(32)}`])).toBeNull();
  });

  it('includes operations of an ECDSA account too (the published SimpleAccount)', async () => {
    const account = await simpleAccount();
    await fund(system.client, account.address, parseEther('1'));
    const hash = await bundlerClient.sendUserOperation({ account, calls: [{ to: account.address, value: 1n }] });
    const receipt = await bundlerClient.waitForUserOperationReceipt({ hash, pollingInterval: 10 });
    expect(receipt.success).toBe(true);
    await expectExecutorRepaid(receipt);
  });

  it('refuses an operation whose signature the account rejects, and sends nothing', async () => {
    const account = await passkeyAccount();
    const impostor = await passkeyAccount(); // another passkey signs for this account
    const forged: PasskeySmartAccount = { ...account, signUserOperation: (op) => impostor.signUserOperation(op) };
    await fund(system.client, account.address, parseEther('1'));
    const before = await system.client.getBlockNumber();
    const sent = bundlerClient.sendUserOperation({ account: forged, calls: [{ to: account.address, value: 0n }] });
    await expect(sent).rejects.toThrow(/AA24 signature error/);
    expect(await system.client.getBlockNumber()).toBe(before);
    expect(await account.isDeployed()).toBe(false);
  });

  it('takes an operation the EntryPoint refuses out of its bundle and sends the others', async () => {
    // past the bundler's own validation: the refusal comes from handleOps itself (FailedOp names the operation)
    const executor = await system.newWallet();
    const submitter = createBundleSubmitter({
      client: system.client,
      wallet: executor,
      entryPoint: aa.entryPoint,
      beneficiary: executor.account.address,
      maxBundleSize: 8,
    });
    const signedOperation = async (account: PasskeySmartAccount, signer: PasskeySmartAccount): Promise<UserOperation<'0.7'>> => {
      await fund(system.client, account.address, parseEther('1'));
      const prepared = await bundlerClient.prepareUserOperation({ account, calls: [{ to: account.address, value: 0n }] });
      return { ...prepared, signature: await signer.signUserOperation(prepared) } as UserOperation<'0.7'>;
    };
    const honest = await passkeyAccount();
    const victim = await passkeyAccount();
    const [good, forged] = await Promise.all([signedOperation(honest, honest), signedOperation(victim, await passkeyAccount())]);

    const [sent, refused] = await Promise.allSettled([submitter.submit(good), submitter.submit(forged)]);
    expect(refused).toMatchObject({ status: 'rejected', reason: { code: -32507, shortMessage: 'AA24 signature error' } });
    expect(sent.status).toBe('fulfilled');
    const transaction = await system.client.waitForTransactionReceipt({ hash: (sent as PromiseFulfilledResult<Hex>).value });
    expect(transaction.status).toBe('success');
    expect(await honest.isDeployed()).toBe(true);
    expect(await victim.isDeployed()).toBe(false);
  });

  it('answers unknown methods, paths and bodies with JSON-RPC errors', async () => {
    expect((await rpc(server.bundlerUrl, 'eth_sendTransaction')).error).toMatchObject({ code: -32601, message: /Method not found/ });
    expect((await rpc(server.paymasterUrl, 'eth_sendUserOperation')).error?.code).toBe(-32601);
    expect((await rpc(server.bundlerUrl, 'eth_getUserOperationReceipt', ['0x1234'])).error?.code).toBe(-32602);
    expect((await rpc(server.bundlerUrl, 'eth_sendUserOperation', [{ sender: '0x12' }, aa.entryPoint])).error).toMatchObject({
      code: -32602,
      message: /sender must be an address/,
    });
    expect((await rpc(server.bundlerUrl, 'eth_estimateUserOperationGas', [{}, `0x${'11'.repeat(20)}`])).error?.message).toMatch(
      /Unsupported entry point/,
    );
    expect((await rpc(server.bundlerUrl, 'eth_gasPrice')).result).toMatch(/^0x[0-9a-f]+$/);
    expect((await rpc(server.bundlerUrl, 'eth_maxPriorityFeePerGas')).result).toMatch(/^0x[0-9a-f]+$/);

    const notJson = await fetch(server.bundlerUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    expect(await notJson.json()).toMatchObject({ error: { code: -32700 } });
    const get = await fetch(server.bundlerUrl);
    expect(get.status).toBe(405);
    expect(await get.json()).toMatchObject({ error: { code: -32600 } });
    const elsewhere = await fetch(server.bundlerUrl.replace('/bundler', '/nothing'), { method: 'POST', body: '{}' });
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.json()).toMatchObject({ error: { code: -32600 } });
  });

  it.each([
    ['a passkey account', () => passkeyAccount()],
    ['a SimpleAccount', () => simpleAccount()],
  ])('sponsors operations of %s through the paymaster RPC, then refuses the sender over its limit', async (_kind, newAccount) => {
    const account: SmartAccount = await newAccount(); // no funds: the paymaster pays
    const recipient = SPONSORED_TARGET;
    const depositOf = (): Promise<bigint> =>
      system.client.readContract({ address: aa.entryPoint, abi: entryPoint07Abi, functionName: 'balanceOf', args: [aa.paymaster] });
    const depositBefore = await depositOf();

    const hash = await sponsoredClient.sendUserOperation({ account, calls: [{ to: recipient, value: 0n, data: '0x' }] });
    const receipt = await sponsoredClient.waitForUserOperationReceipt({ hash, pollingInterval: 10 });
    expect(receipt).toMatchObject({ success: true, paymaster: aa.paymaster, sender: account.address });
    expect(await system.client.getBalance({ address: account.address })).toBe(0n);
    await expectExecutorRepaid(receipt);
    const depositAfter = await depositOf();
    expect(depositBefore - depositAfter).toBe(receipt.actualGasCost);

    const second = await sponsoredClient.sendUserOperation({ account, calls: [{ to: recipient, value: 0n }] });
    expect((await sponsoredClient.waitForUserOperationReceipt({ hash: second, pollingInterval: 10 })).success).toBe(true);

    await expect(sponsoredClient.sendUserOperation({ account, calls: [{ to: recipient, value: 0n }] })).rejects.toThrow(
      /Sponsorship refused: sender limit: .* already had 2 sponsored operations in the last 3600 s/,
    );
  });

  it('fills gas and paymaster fields in one call with pm_sponsorUserOperation', async () => {
    const account = await passkeyAccount();
    const calls = [{ to: SPONSORED_TARGET, value: 0n }];
    const { signature: stub, ...draft } = await bundlerClient.prepareUserOperation({
      account,
      calls,
      parameters: ['factory', 'fees', 'nonce', 'signature'],
    });
    // the wallet knows its passkey's real signature costs more to check than the stub estimation runs with
    const request = { ...formatUserOperationRequest({ ...draft, signature: stub }), verificationGasLimit: numberToHex(800_000n) };
    const answer = await rpc(server.paymasterUrl, 'pm_sponsorUserOperation', [request, aa.entryPoint]);
    const fields = answer.result as Record<string, Hex>;
    expect(Object.keys(fields).sort()).toEqual(
      [
        'callGasLimit',
        'paymaster',
        'paymasterData',
        'paymasterPostOpGasLimit',
        'paymasterVerificationGasLimit',
        'preVerificationGas',
        'verificationGasLimit',
      ].sort(),
    );
    expect(BigInt(fields.verificationGasLimit!)).toBe(800_000n);
    const gas = (name: string): bigint => BigInt(fields[name]!);
    const hash = await bundlerClient.sendUserOperation({
      ...draft,
      account,
      callGasLimit: gas('callGasLimit'),
      verificationGasLimit: gas('verificationGasLimit'),
      preVerificationGas: gas('preVerificationGas'),
      paymaster: fields.paymaster as Address,
      paymasterData: fields.paymasterData!,
      paymasterVerificationGasLimit: gas('paymasterVerificationGasLimit'),
      paymasterPostOpGasLimit: gas('paymasterPostOpGasLimit'),
    });
    expect((await bundlerClient.waitForUserOperationReceipt({ hash, pollingInterval: 10 })).success).toBe(true);
  });

  it('refuses sponsorship outside its policy, saying why', async () => {
    const strict = createLocalPaymaster({
      client: system.client,
      paymaster: aa.paymaster,
      signer: paymasterSigner,
      entryPoint: aa.entryPoint,
      calls: callRules(),
      policy: { maxGasPerOperation: 500_000n },
    });
    const account = await passkeyAccount();
    const draft = await bundlerClient.prepareUserOperation({
      account,
      calls: [{ to: SPONSORED_TARGET, value: 0n }],
      parameters: ['factory', 'fees', 'nonce', 'signature'],
    });
    const op = { ...formatUserOperationRequest(draft), callGasLimit: '0x186a0', verificationGasLimit: '0xc3500', preVerificationGas: '0xc350' };
    const chainId = numberToHex(system.client.chain.id);

    await expect(strict.methods.pm_getPaymasterData!([op, aa.entryPoint, chainId, {}])).rejects.toMatchObject({
      code: -32001,
      shortMessage: /^Sponsorship refused: operation cap: the operation's gas limits add up to 1000000, over the 500000/,
    });
    await expect(strict.methods.pm_getPaymasterStubData!([op, `0x${'11'.repeat(20)}`, chainId, {}])).rejects.toMatchObject({
      code: -32602,
      shortMessage: /Unsupported entry point/,
    });
    await expect(strict.methods.pm_getPaymasterStubData!([op, aa.entryPoint, '0x1', {}])).rejects.toMatchObject({
      code: -32602,
      shortMessage: /Unsupported chain 0x1/,
    });
    const stub = (await strict.methods.pm_getPaymasterStubData!([op, aa.entryPoint, chainId, {}])) as Record<string, unknown>;
    expect(stub).toMatchObject({ paymaster: aa.paymaster, isFinal: false, paymasterPostOpGasLimit: '0x0' });
    expect((stub.paymasterData as Hex).length).toBe(2 + 2 * (64 + 65));
  });
});
