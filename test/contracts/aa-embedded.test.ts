// The embedded chains carry the ERC-4337 stack: deployed on the first start with the operator as the paymaster's
// owner and the dev accounts' paymaster signer, reused after a restart, and data directories from before the
// stack existed get the two new dev accounts without losing the old ones. The canonical SimpleAccountFactory v0.7
// is on both chains at its public address, and a restart sends nothing for it.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Address, parseEther } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { afterAll, describe, expect, it } from 'vitest';
import { createChainClient } from '../../src/chain/clients.js';
import { sponsorPaymasterAbi } from '../../src/contracts/artifacts/index.js';
import type { NetworkName } from '../../src/core/networks.js';
import { ENTRY_POINT_V07 } from '../../src/devnet/aa/entry-point.js';
import {
  SIMPLE_ACCOUNT_FACTORY_V07,
  simpleAccountFactoryAbi,
  simpleAccountFactoryCreate2Address,
} from '../../src/devnet/aa/simple-account-factory.js';
import { loadDevAccounts, startEmbeddedNetwork } from '../../src/devnet/embedded.js';

const dataDir = mkdtempSync(join(tmpdir(), 'registry-aa-embedded-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('ERC-4337 stack on the embedded chains', () => {
  it('adds the paymaster signer and bundler keys to an older dev-accounts file, keeping its keys', () => {
    const path = join(dataDir, 'dev-accounts.json');
    const old = { operator: generatePrivateKey(), attester: generatePrivateKey(), identityApp: generatePrivateKey() };
    writeFileSync(path, JSON.stringify(old), { mode: 0o600 });

    const { accounts, created } = loadDevAccounts(dataDir);
    expect(created).toBe(false);
    const stored = JSON.parse(readFileSync(path, 'utf8')) as Record<string, string>;
    expect(stored).toMatchObject(old);
    expect(Object.keys(stored).sort()).toEqual(['attester', 'bundler', 'identityApp', 'operator', 'paymasterSigner']);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(accounts.paymasterSigner.address).not.toBe(accounts.bundler.address);
    // read again: the same keys
    expect(loadDevAccounts(dataDir).accounts.bundler.address).toBe(accounts.bundler.address);
  });

  it('deploys EntryPoint, factory and paymaster on the first start and reuses them after a restart', async () => {
    const { accounts } = loadDevAccounts(dataDir);
    const first = await startEmbeddedNetwork('testnet', dataDir, accounts);
    let aa = first.aa;
    try {
      expect(aa.entryPoint).toBe(ENTRY_POINT_V07);
      const client = createChainClient('testnet', first.clientOptions);
      for (const address of Object.values(aa)) expect(await client.getCode({ address })).toMatch(/^0x[0-9a-f]+/);
      const read = <F extends 'owner' | 'verifyingSigner' | 'getDeposit'>(functionName: F) =>
        client.readContract({ address: aa.paymaster, abi: sponsorPaymasterAbi, functionName });
      expect(await read('owner')).toBe(accounts.operator.address);
      expect(await read('verifyingSigner')).toBe(accounts.paymasterSigner.address);
      expect(await read('getDeposit')).toBe(parseEther('100'));
      expect(await client.getBalance({ address: accounts.bundler.address })).toBeGreaterThan(parseEther('1000'));
    } finally {
      await first.chain.stop();
    }

    const second = await startEmbeddedNetwork('testnet', dataDir, accounts);
    try {
      expect(second.deployedNow).toBe(false);
      expect(second.aa).toEqual(aa);
      aa = second.aa;
      const client = createChainClient('testnet', second.clientOptions);
      expect(await client.readContract({ address: aa.paymaster, abi: sponsorPaymasterAbi, functionName: 'getDeposit' })).toBe(parseEther('100'));
    } finally {
      await second.chain.stop();
    }
  });

  it('reproduces the canonical SimpleAccountFactory v0.7 address from the published artifact, EntryPoint v0.7 and salt 0', () => {
    // the artifact is the build deployed on public chains (same metadata hash): CREATE2 gives the canonical address
    expect(simpleAccountFactoryCreate2Address()).toBe(SIMPLE_ACCOUNT_FACTORY_V07);
    expect(SIMPLE_ACCOUNT_FACTORY_V07).toBe('0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985');
  });

  it('puts SimpleAccountFactory v0.7 at its canonical address on both chains; a restart reuses it and sends nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'registry-aa-simple-'));
    try {
      const { accounts } = loadDevAccounts(dir);
      for (const network of ['mainnet', 'testnet'] as const satisfies readonly NetworkName[]) {
        const first = await startEmbeddedNetwork(network, dir, accounts);
        let height: bigint;
        try {
          const client = createChainClient(network, first.clientOptions);
          expect(first.aa.simpleAccountFactory).toBe(SIMPLE_ACCOUNT_FACTORY_V07);
          const implementation: Address = await client.readContract({
            address: SIMPLE_ACCOUNT_FACTORY_V07,
            abi: simpleAccountFactoryAbi,
            functionName: 'accountImplementation',
          });
          expect(implementation, network).toBe(first.aa.simpleAccountImplementation);
          expect(await client.getCode({ address: implementation })).toMatch(/^0x[0-9a-f]{1000,}/);
          height = await client.getBlockNumber();
        } finally {
          await first.chain.stop();
        }

        const second = await startEmbeddedNetwork(network, dir, accounts);
        try {
          expect(second.aa).toEqual(first.aa);
          expect(await createChainClient(network, second.clientOptions).getBlockNumber(), network).toBe(height);
        } finally {
          await second.chain.stop();
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
