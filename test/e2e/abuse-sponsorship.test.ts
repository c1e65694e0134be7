// Attack: draining the local paymaster's deposit through the running service (`node dist/main.js`, default settings).
// The review's drain: senders cost nothing, so one client minted a new account per operation and was sponsored about
// 0.04 of the native token each time, 31 times in 40 s, for any call (a looping initCode). Here one client (one
// address; the service trusts X-Forwarded-For from its loopback proxy, as a deployment behind one does) does the
// same through the proxy only, each operation as costly as the per-operation cap lets it be (5M gas of limits at
// 10 gwei, most of it preVerificationGas, which the EntryPoint charges in full), and sends what is signed to the
// bundler. It is stopped at its per-client budget (new tokens do not help), a restart does not refill it, and another
// client is still sponsored. Calls the product does not need, and another factory's initCode, are refused by name.
// The deposit the attacker made the paymaster lose is measured on chain and printed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toSimpleSmartAccount } from 'permissionless/accounts';
import {
  type Address,
  type Chain,
  type Client,
  formatEther,
  type Hex,
  http,
  numberToHex,
  type PublicClient,
  parseEther,
  parseGwei,
  type Transport,
} from 'viem';
import {
  createBundlerClient,
  createPaymasterClient,
  entryPoint07Abi,
  formatUserOperationRequest,
  type UserOperation,
} from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toPasskeySmartAccount } from '../../src/aa/passkey-account.js';
import { DETERMINISTIC_DEPLOYER } from '../../src/devnet/aa/entry-point.js';
import { DEFAULT_BUDGETS } from '../../src/devnet/aa/sponsorship-budget.js';
import { softwarePasskey } from '../support/aa.js';
import { type DiscoveredStack, discoveredStack, embeddedChainClient } from '../support/discovered-aa.js';
import { type ServiceProcess, startServiceProcess } from '../support/service-process.js';

const ATTACKER = '198.51.100.66';
const HONEST = '203.0.113.77';
const USER_AGENT = 'Mozilla/5.0 (abuse-sponsorship test)';
/** The most one operation may cost the deposit: the paymaster's per-operation caps, 5M gas and 0.05 native. */
const GAS = { verification: 400_000n, call: 10_000n, paymasterVerification: 100_000n, preVerification: 4_490_000n };
const FEE = parseGwei('10');

interface RpcAnswer<T = unknown> {
  result?: T;
  error?: { code: number; message: string; data?: { rule?: string } };
}

describe('draining the paymaster through the proxy, one client minting senders', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'abuse-sponsorship-'));
  let service: ServiceProcess;
  let stack: DiscoveredStack;
  let chain: PublicClient<Transport, Chain>;
  let chainIdHex: Hex;

  const depositOf = (): Promise<bigint> =>
    chain.readContract({ address: stack.entryPoint, abi: entryPoint07Abi, functionName: 'balanceOf', args: [stack.paymaster] });

  /** The headers of a page of the service's own origin, from client address `ip`. */
  const pageHeaders = (ip: string): Record<string, string> => ({
    origin: new URL(service.base).origin,
    'x-forwarded-for': ip,
    'user-agent': USER_AGENT,
    'content-type': 'application/json',
  });

  async function tokenFor(ip: string): Promise<string> {
    const res = await fetch(stack.tokenUrl, { method: 'POST', headers: pageHeaders(ip) });
    const body = (await res.json()) as { token?: string; error?: string };
    expect(res.status, body.error).toBe(200);
    return body.token as string;
  }

  async function proxy<T = unknown>(
    route: 'bundler' | 'paymaster',
    ip: string,
    token: string,
    method: string,
    params: unknown[],
  ): Promise<RpcAnswer<T>> {
    const res = await fetch(route === 'bundler' ? stack.bundlerUrl : stack.paymasterUrl, {
      method: 'POST',
      headers: { ...pageHeaders(ip), 'x-aa-proxy-token': token },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    return (await res.json()) as RpcAnswer<T>;
  }

  /** A new SimpleAccount of the discovered factory (a new owner key: a sender costs nothing). */
  async function freshSimpleAccount() {
    const simple = stack.accounts.find((kind) => kind.kind === 'simple');
    if (!simple) throw new Error('discovery names no SimpleAccount factory');
    return toSimpleSmartAccount({
      client: chain,
      owner: privateKeyToAccount(generatePrivateKey()),
      factoryAddress: simple.factory,
      entryPoint: { address: stack.entryPoint, version: '0.7' },
    });
  }

  /** The attacker's operation: deploys `account` and calls nothing, every gas limit as high as the caps allow. */
  async function costlyDeployment(account: Awaited<ReturnType<typeof freshSimpleAccount>>, factory?: { factory: Address; factoryData: Hex }) {
    const deploy = factory ?? ((await account.getFactoryArgs()) as { factory: Address; factoryData: Hex });
    return {
      sender: account.address,
      nonce: 0n,
      ...deploy,
      callData: '0x' as Hex,
      callGasLimit: GAS.call,
      verificationGasLimit: GAS.verification,
      preVerificationGas: GAS.preVerification,
      maxFeePerGas: FEE,
      maxPriorityFeePerGas: FEE,
      signature: '0x' as Hex,
    } satisfies UserOperation<'0.7'>;
  }

  async function receiptOf(ip: string, token: string, hash: Hex): Promise<{ success: boolean; actualGasCost: Hex }> {
    for (let i = 0; i < 100; i++) {
      const { result } = await proxy<{ success: boolean; actualGasCost: Hex } | null>('bundler', ip, token, 'eth_getUserOperationReceipt', [hash]);
      if (result) return result;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`no receipt for ${hash}`);
  }

  beforeAll(async () => {
    service = await startServiceProcess(dataDir);
    stack = await discoveredStack(service.base);
    chain = embeddedChainClient(dataDir, stack.chainId);
    chainIdHex = numberToHex(stack.chainId);
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('stops the client at its budget, whatever new senders and tokens it takes, and a restart does not refill it', async () => {
    const depositBefore = await depositOf();
    const started = performance.now();
    let token = await tokenFor(ATTACKER);
    const rules: string[] = [];
    let sponsored = 0;
    let charged = 0n;
    let refusal: RpcAnswer['error'];
    for (let attempt = 0; attempt < 20 && !refusal; attempt++) {
      const account = await freshSimpleAccount();
      const op = await costlyDeployment(account);
      const answer = await proxy<{ paymaster: Address; paymasterData: Hex; paymasterVerificationGasLimit: Hex; paymasterPostOpGasLimit: Hex }>(
        'paymaster',
        ATTACKER,
        token,
        'pm_getPaymasterData',
        [formatUserOperationRequest(op), stack.entryPoint, chainIdHex, {}],
      );
      if (answer.error) {
        rules.push(answer.error.data?.rule ?? answer.error.message);
        // tokens are free: a refused token is replaced at once
        if (answer.error.data?.rule === 'token budget') token = await tokenFor(ATTACKER);
        else refusal = answer.error;
        continue;
      }
      const fields = answer.result!;
      const sponsoredOp: UserOperation<'0.7'> = {
        ...op,
        paymaster: fields.paymaster,
        paymasterData: fields.paymasterData,
        paymasterVerificationGasLimit: BigInt(fields.paymasterVerificationGasLimit),
        paymasterPostOpGasLimit: BigInt(fields.paymasterPostOpGasLimit),
      };
      sponsoredOp.signature = await account.signUserOperation(sponsoredOp);
      const sent = await proxy<Hex>('bundler', ATTACKER, token, 'eth_sendUserOperation', [formatUserOperationRequest(sponsoredOp), stack.entryPoint]);
      expect(sent.error, sent.error?.message).toBeUndefined();
      const receipt = await receiptOf(ATTACKER, token, sent.result!);
      expect(receipt.success).toBe(true);
      charged += BigInt(receipt.actualGasCost);
      sponsored += 1;
    }
    const seconds = (performance.now() - started) / 1000;
    const lost = depositBefore - (await depositOf());

    expect(refusal).toMatchObject({ code: -32001, data: { rule: 'client budget' } });
    expect(refusal?.message).toMatch(
      new RegExp(
        `^Sponsorship refused: client budget: client ${ATTACKER.replaceAll('.', '\\.')} was sponsored 10000000 gas and 0\\.1 in the last hour`,
      ),
    );
    // one costly operation per token, two per client: the value budget (0.1) binds before the gas one (20M)
    expect(sponsored).toBe(2);
    expect(rules).toEqual(['token budget', 'token budget', 'client budget']);
    expect(lost).toBe(charged);
    expect(lost).toBeGreaterThan(parseEther('0.09'));
    expect(lost).toBeLessThanOrEqual(DEFAULT_BUDGETS.perClient.wei);
    console.log(
      `one client minting senders: ${sponsored} sponsored operations, then refused (${rules.join(', ')}) in ${seconds.toFixed(1)} s; ` +
        `deposit lost ${formatEther(lost)} of the native token (the per-client budget: ${formatEther(DEFAULT_BUDGETS.perClient.wei)} per hour)`,
    );

    // the budget is on the store: a restarted service refuses the client as well
    await service.stop();
    service = await startServiceProcess(dataDir);
    stack = await discoveredStack(service.base);
    chain = embeddedChainClient(dataDir, stack.chainId); // the chain is back on another port
    const again = await proxy('paymaster', ATTACKER, await tokenFor(ATTACKER), 'pm_getPaymasterData', [
      formatUserOperationRequest(await costlyDeployment(await freshSimpleAccount())),
      stack.entryPoint,
      chainIdHex,
      {},
    ]);
    expect(again.error).toMatchObject({ code: -32001, data: { rule: 'client budget' } });
  }, 120_000);

  it('still sponsors another client: its passkey account is deployed, gas paid by the deposit', async () => {
    const passkeyFactory = stack.accounts.find((kind) => kind.kind === 'passkey')?.factory;
    if (!passkeyFactory) throw new Error('discovery names no passkey factory');
    const account = await toPasskeySmartAccount({ client: chain, owner: softwarePasskey(), factory: passkeyFactory });
    const fetchOptions = { headers: { ...pageHeaders(HONEST), 'x-aa-proxy-token': await tokenFor(HONEST) } };
    const bundler = createBundlerClient({
      account,
      client: chain as Client<Transport, Chain>,
      transport: http(stack.bundlerUrl, { fetchOptions }),
      paymaster: createPaymasterClient({ transport: http(stack.paymasterUrl, { fetchOptions }) }),
      pollingInterval: 50,
    });
    const hash = await bundler.sendUserOperation({ calls: [] }); // a deployment only
    expect(await bundler.waitForUserOperationReceipt({ hash })).toMatchObject({ success: true, sender: account.address });
    expect(await account.isDeployed()).toBe(true);
    expect(await chain.getBalance({ address: account.address })).toBe(0n);
  });

  it('refuses, naming the rule, a call the product does not need and the initCode of a factory not ours', async () => {
    const token = await tokenFor(HONEST);
    const account = await freshSimpleAccount();
    const target = privateKeyToAccount(generatePrivateKey()).address;
    const withCall = { ...(await costlyDeployment(account)), callData: await account.encodeCalls([{ to: target, value: 0n, data: '0x' }]) };
    for (const method of ['pm_getPaymasterStubData', 'pm_getPaymasterData']) {
      const answer = await proxy('paymaster', HONEST, token, method, [formatUserOperationRequest(withCall), stack.entryPoint, chainIdHex, {}]);
      expect(answer.error, method).toMatchObject({
        code: -32001,
        data: { rule: 'allowed calls' },
        message: `Sponsorship refused: allowed calls: call 1 of 1 goes to ${target}, neither the registry nor a target the operator allows`,
      });
    }
    // the review's looping initCode: a factory that runs whatever it is given, here JUMPDEST PUSH1 0 JUMP
    const looping = await costlyDeployment(account, { factory: DETERMINISTIC_DEPLOYER, factoryData: `0x${'00'.repeat(32)}5b600056` });
    const answer = await proxy('paymaster', HONEST, token, 'pm_getPaymasterData', [
      formatUserOperationRequest(looping),
      stack.entryPoint,
      chainIdHex,
      {},
    ]);
    expect(answer.error).toMatchObject({ code: -32001, data: { rule: 'factory' } });
    expect(answer.error?.message).toMatch(
      new RegExp(`^Sponsorship refused: factory: the operation's factory ${DETERMINISTIC_DEPLOYER} is not one of this paymaster's`),
    );
  });
});
