import { type Address, type Hex, http, parseEther } from 'viem';
import { type BundlerClient, createBundlerClient, createPaymasterClient, type SmartAccount } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalBundler, type LocalBundler } from '../../src/chain/aa/bundler.js';
import { createLocalPaymaster } from '../../src/chain/aa/paymaster-rpc.js';
import { type AaRpcServer, startAaRpcServer } from '../../src/chain/aa/rpc-server.js';
import { fund } from '../../src/chain/embedded.js';
import { deployTestSystem, type TestSystem } from '../support/chain.js';
import { deploySimpleAccountFactory, deployVerifyingPaymaster, ensureEntryPoint, toSimpleAccount } from '../support/simple-account.js';

/** One JSON-RPC request as the proxy forwards it: the raw answer, error objects included. */
async function rpc(url: string, method: string, params: unknown[] = []): Promise<{ result?: unknown; error?: { code: number; message: string } }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  return (await response.json()) as { result?: unknown; error?: { code: number; message: string } };
}

describe('local ERC-4337 bundler and paymaster', () => {
  let system: TestSystem;
  let entryPoint: Address;
  let factory: Address;
  let paymaster: Address;
  let bundler: LocalBundler;
  let server: AaRpcServer;
  let bundlerClient: BundlerClient;
  const paymasterSigner = privateKeyToAccount(generatePrivateKey());

  const newAccount = (signer?: ReturnType<typeof privateKeyToAccount>): Promise<SmartAccount> =>
    toSimpleAccount({ client: system.client, factory, owner: privateKeyToAccount(generatePrivateKey()), ...(signer ? { signer } : {}) });

  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    const executor = await system.newWallet();
    entryPoint = await ensureEntryPoint(system.client, system.operator);
    factory = await deploySimpleAccountFactory(system.client, system.operator);
    paymaster = await deployVerifyingPaymaster(system.client, system.operator, paymasterSigner.address);
    bundler = createLocalBundler({ client: system.client, wallet: executor, entryPoint });
    const paymasterService = createLocalPaymaster({
      client: system.client,
      paymaster,
      signer: paymasterSigner,
      entryPoint,
      policy: { maxOperationsPerSender: 2 },
    });
    server = await startAaRpcServer({ bundler, paymaster: paymasterService });
    bundlerClient = createBundlerClient({ client: system.client, transport: http(server.bundlerUrl), pollingInterval: 10 });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('names its chain and entry point', async () => {
    expect(await bundlerClient.getChainId()).toBe(11142220);
    expect(await bundlerClient.getSupportedEntryPoints()).toEqual([entryPoint]);
  });

  it('estimates, then includes an operation that deploys the account and makes a call', async () => {
    const account = await newAccount();
    await fund(system.client, account.address, parseEther('1'));
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    const calls = [{ to: recipient, value: 12_345n }];

    const gas = await bundlerClient.estimateUserOperationGas({ account, calls });
    expect(gas.verificationGasLimit).toBeGreaterThan(100_000n); // includes the account's deployment
    expect(gas.callGasLimit).toBeGreaterThan(0n);
    expect(gas.preVerificationGas).toBeGreaterThan(21_000n);

    const started = performance.now();
    const hash = await bundlerClient.sendUserOperation({ account, calls });
    const receipt = await bundlerClient.waitForUserOperationReceipt({ hash, pollingInterval: 10 });
    console.log(`send -> receipt: ${(performance.now() - started).toFixed(0)} ms (local anvil, receipt polled every 10 ms)`);

    expect(receipt).toMatchObject({ userOpHash: hash, entryPoint, sender: account.address, success: true });
    expect(receipt.receipt.status).toBe('success');
    expect(receipt.actualGasCost).toBeGreaterThan(0n);
    expect(await system.client.getBalance({ address: recipient })).toBe(12_345n);
    expect(await system.client.getCode({ address: account.address })).toMatch(/^0x.+/);
    // the executor was paid at least what its transaction cost
    const transaction = await system.client.getTransactionReceipt({ hash: receipt.receipt.transactionHash });
    expect(receipt.actualGasUsed).toBeGreaterThanOrEqual(transaction.gasUsed);

    const found = await bundlerClient.getUserOperation({ hash });
    expect(found.transactionHash).toBe(receipt.receipt.transactionHash);
    expect(found.blockNumber).toBe(receipt.receipt.blockNumber);
    expect(found.userOperation.sender).toBe(account.address);

    // a bundler started afresh knows nothing in memory and finds both on chain
    const restarted = createLocalBundler({ client: system.client, wallet: await system.newWallet(), entryPoint });
    const again = (await restarted.methods.eth_getUserOperationReceipt!([hash])) as { receipt: { transactionHash: Hex }; success: boolean };
    expect(again.success).toBe(true);
    expect(again.receipt.transactionHash).toBe(receipt.receipt.transactionHash);
    const byHash = (await restarted.methods.eth_getUserOperationByHash!([hash])) as { userOperation: { sender: Address; nonce: Hex } };
    expect(byHash.userOperation.sender).toBe(account.address);
    expect(byHash.userOperation.nonce).toBe(`0x${found.userOperation.nonce.toString(16)}`);
  });

  it('refuses an operation whose signature the account rejects, and sends nothing', async () => {
    const account = await newAccount(privateKeyToAccount(generatePrivateKey()));
    await fund(system.client, account.address, parseEther('1'));
    const before = await system.client.getBlockNumber();
    await expect(bundlerClient.sendUserOperation({ account, calls: [{ to: account.address, value: 0n }] })).rejects.toThrow(/AA24 signature error/);
    expect(await system.client.getBlockNumber()).toBe(before);
    expect(await system.client.getCode({ address: account.address })).toBeUndefined();
  });

  it('answers unknown methods, paths and bodies with JSON-RPC errors', async () => {
    const unknown = await rpc(server.bundlerUrl, 'eth_sendTransaction');
    expect(unknown.error?.code).toBe(-32601);
    const badHash = await rpc(server.bundlerUrl, 'eth_getUserOperationReceipt', ['0x1234']);
    expect(badHash.error?.code).toBe(-32602);
    const badEntryPoint = await rpc(server.bundlerUrl, 'eth_supportedEntryPoints');
    expect(badEntryPoint.result).toEqual([entryPoint]);
    const notJson = await fetch(server.bundlerUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    expect(((await notJson.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const get = await fetch(server.bundlerUrl);
    expect(get.status).toBe(405);
    expect(((await get.json()) as { error: { code: number } }).error.code).toBe(-32600);
    const elsewhere = await fetch(server.bundlerUrl.replace('/bundler', '/nothing'), { method: 'POST', body: '{}' });
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.json()).toMatchObject({ error: { code: -32600 } });
  });

  it('sponsors an operation through the paymaster RPC, then refuses the sender over its limit', async () => {
    const paymasterClient = createPaymasterClient({ transport: http(server.paymasterUrl) });
    const sponsoredClient = createBundlerClient({
      client: system.client,
      transport: http(server.bundlerUrl),
      paymaster: paymasterClient,
      pollingInterval: 10,
    });
    const account = await newAccount(); // no funds: the paymaster pays
    const recipient = privateKeyToAccount(generatePrivateKey()).address;

    const hash = await sponsoredClient.sendUserOperation({ account, calls: [{ to: recipient, value: 0n, data: '0x' }] });
    const receipt = await sponsoredClient.waitForUserOperationReceipt({ hash, pollingInterval: 10 });
    expect(receipt).toMatchObject({ success: true, paymaster, sender: account.address });

    expect(await system.client.getBalance({ address: account.address })).toBe(0n);

    const second = await sponsoredClient.sendUserOperation({ account, calls: [{ to: recipient, value: 0n }] });
    expect((await sponsoredClient.waitForUserOperationReceipt({ hash: second, pollingInterval: 10 })).success).toBe(true);

    await expect(sponsoredClient.sendUserOperation({ account, calls: [{ to: recipient, value: 0n }] })).rejects.toThrow(
      /Sponsorship refused: .* already had 2 sponsored operations/,
    );
  });
});
