// Acceptance: a standard ERC-4337 client uses the running service (`node dist/main.js` with its embedded anvil
// chains) knowing only its base URL. permissionless builds a SimpleAccount v0.7 and viem's bundler and paymaster
// clients send its UserOperations; the discovery document alone names the EntryPoint, the SimpleAccountFactory,
// the paymaster and the proxy's token, bundler and paymaster URLs (nothing of the stack is written here). An account
// that holds nothing is deployed by its first, sponsored, operation, sent through the proxy only. The one other
// input is the chain's JSON-RPC, which a wallet has of its own: here the embedded testnet's URL from DATA_DIR, where
// the identity-app CLI reads it too. The calls go to a target the operator allows the local paymaster to pay for
// (AA_SPONSOR_ALLOWED_TARGETS): it pays for nothing else but the registry's agent actions.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toSimpleSmartAccount } from 'permissionless/accounts';
import { type Address, type Chain, getAddress, isAddressEqual, type PublicClient, sliceHex, type Transport, zeroAddress } from 'viem';
import type { SmartAccount } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DiscoveredStack, discoveredStack, embeddedChainClient, sponsoredBundler } from '../support/discovered-aa.js';
import { type ServiceProcess, startServiceProcess } from '../support/service-process.js';

/** What the UserOperations call: a target the service is configured to sponsor. */
const RECIPIENT: Address = '0x5AEDA56215b167893e80B4fE645BA6d5Bab767DE';

/** The slot of an ERC-1967 proxy that holds its implementation. */
const ERC1967_IMPLEMENTATION_SLOT = '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc';

describe('a SimpleAccount v0.7 through the service, from its discovery document alone', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'simple-account-e2e-'));
  let service: ServiceProcess;
  let stack: DiscoveredStack;
  let simple: { factory: Address; implementation: Address; version: string };
  let chain: PublicClient<Transport, Chain>;

  /** The proxy's 200 answers on `route` so far, from the service's /metrics. */
  async function proxyCalls(route: 'bundler' | 'paymaster'): Promise<number> {
    const text = await (await fetch(`${service.base}/metrics`)).text();
    return text
      .split('\n')
      .filter((l) => l.startsWith('http_requests_total{') && l.includes(`route="/api/aa/${route}"`) && l.includes('status="200"'))
      .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
  }

  const proxyClients = (account: SmartAccount) => sponsoredBundler(service.base, stack, account, chain);

  beforeAll(async () => {
    service = await startServiceProcess(dataDir, { AA_SPONSOR_ALLOWED_TARGETS: RECIPIENT });
    stack = await discoveredStack(service.base);
    const found = stack.accounts.find((kind) => kind.kind === 'simple');
    if (!found?.implementation || !found.version) throw new Error(`discovery names no SimpleAccount factory: ${JSON.stringify(stack.accounts)}`);
    simple = { factory: found.factory, implementation: found.implementation, version: found.version };
    chain = embeddedChainClient(dataDir, stack.chainId);
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('discovery names the SimpleAccountFactory v0.7 and its implementation, both on chain', async () => {
    expect(simple.version).toBe('0.7');
    expect(await chain.getCode({ address: simple.factory })).toMatch(/^0x[0-9a-f]{2,}$/);
    expect(await chain.getCode({ address: simple.implementation })).toMatch(/^0x[0-9a-f]{2,}$/);
    expect(stack.accounts.map((kind) => kind.kind)).toEqual(['passkey', 'simple']);
  });

  it("an unfunded SimpleAccount's sponsored UserOperations go through the proxy only and are included", async () => {
    const account = await toSimpleSmartAccount({
      client: chain,
      owner: privateKeyToAccount(generatePrivateKey()),
      factoryAddress: simple.factory,
      entryPoint: { address: stack.entryPoint, version: '0.7' },
    });
    expect(await chain.getBalance({ address: account.address })).toBe(0n);
    expect(await chain.getCode({ address: account.address })).toBeUndefined();
    const recipient = RECIPIENT;
    const [bundlerCalls, paymasterCalls] = [await proxyCalls('bundler'), await proxyCalls('paymaster')];

    const bundler = await proxyClients(account);
    const hash = await bundler.sendUserOperation({ calls: [{ to: recipient, value: 0n, data: '0x' }] });
    const receipt = await bundler.waitForUserOperationReceipt({ hash });
    expect(receipt).toMatchObject({ success: true, sender: account.address });
    expect(isAddressEqual(receipt.entryPoint, stack.entryPoint)).toBe(true);
    expect(isAddressEqual(receipt.paymaster ?? zeroAddress, stack.paymaster)).toBe(true);
    expect(receipt.receipt.status).toBe('success');
    // the operation deployed the account through the discovered factory, as a proxy of the discovered implementation
    const sent = await bundler.getUserOperation({ hash });
    expect(isAddressEqual(sent.userOperation.factory ?? zeroAddress, simple.factory)).toBe(true);
    const slot = await chain.getStorageAt({ address: account.address, slot: ERC1967_IMPLEMENTATION_SLOT });
    expect(getAddress(sliceHex(slot ?? '0x', 12))).toBe(getAddress(simple.implementation));
    // estimate, send, receipt and lookup through the proxy's bundler route; stub and approval through its paymaster route
    expect(await proxyCalls('bundler')).toBeGreaterThanOrEqual(bundlerCalls + 4);
    expect(await proxyCalls('paymaster')).toBeGreaterThanOrEqual(paymasterCalls + 2);

    // the deployed account's next operation (two calls, executeBatch): no factory, sponsored alike
    const next = await bundler.sendUserOperation({
      calls: [
        { to: recipient, value: 0n, data: '0x' },
        { to: recipient, value: 0n, data: '0x01' },
      ],
    });
    const nextReceipt = await bundler.waitForUserOperationReceipt({ hash: next });
    expect(nextReceipt).toMatchObject({ success: true, sender: account.address });
    expect((await bundler.getUserOperation({ hash: next })).userOperation.factory).toBeUndefined();
    expect(isAddressEqual(nextReceipt.paymaster ?? zeroAddress, stack.paymaster)).toBe(true);
    expect(await chain.getBalance({ address: account.address })).toBe(0n);
  });
});
