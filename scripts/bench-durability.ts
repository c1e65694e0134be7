// npm run bench:durability: what the durability gate costs an answer that reports a transaction (a relayed
// chain-verify, a UserOperation receipt, a completed session). The local testnet runs as `npm start` runs it:
// supervised, with our contracts and the ERC-4337 stack deployed, its state in a state file. Each run sends a
// transaction, waits for its receipt, then times makeDurable(block) alone: one dump of the chain's state, shared by
// the callers that wait at the same moment. Then CONCURRENT senders do the same at once, to show the sharing.
// Environment: RUNS (default 40), CONCURRENT (default 8).
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEther } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createChainClient, createChainWallet } from '../src/chain/clients.js';
import { fund, loadDevAccounts, startEmbeddedNetwork } from '../src/devnet/embedded.js';

const RUNS = Number(process.env['RUNS'] ?? 40);
const CONCURRENT = Number(process.env['CONCURRENT'] ?? 8);

const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] as number;
};
const ms = (value: number): number => Math.round(value * 10) / 10;

const dataDir = mkdtempSync(join(tmpdir(), 'bench-durability-'));
const { accounts } = loadDevAccounts(dataDir);
const network = await startEmbeddedNetwork('testnet', dataDir, accounts);
const { chain } = network;
try {
  const client = createChainClient('testnet', network.clientOptions);
  const senders = await Promise.all(
    Array.from({ length: CONCURRENT }, async () => {
      const account = privateKeyToAccount(generatePrivateKey());
      await fund(client, account.address);
      return createChainWallet('testnet', account, network.clientOptions);
    }),
  );
  const [first] = senders;
  if (!first) throw new Error('CONCURRENT must be at least 1');

  /** One relayed call's chain part: send, receipt, then the gate; the times of the last two. */
  const relay = async (wallet: typeof first): Promise<{ receiptMs: number; gateMs: number }> => {
    const started = performance.now();
    const hash = await wallet.sendTransaction({ to: privateKeyToAccount(generatePrivateKey()).address, value: parseEther('0.001') });
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 5 });
    const mined = performance.now();
    await chain.makeDurable(receipt.blockNumber);
    return { receiptMs: mined - started, gateMs: performance.now() - mined };
  };

  await chain.makeDurable();
  const alone = [];
  for (let i = 0; i < RUNS; i++) alone.push(await relay(first));
  const together = [];
  for (let i = 0; i < Math.max(1, Math.floor(RUNS / CONCURRENT)); i++) together.push(...(await Promise.all(senders.map(relay))));

  const stateKb = Math.round(statSync(join(dataDir, 'chains', 'testnet', 'state.json')).size / 1024);
  const report = (label: string, runs: { receiptMs: number; gateMs: number }[]) => ({
    label,
    calls: runs.length,
    sendAndReceiptMedianMs: ms(
      quantile(
        runs.map((r) => r.receiptMs),
        0.5,
      ),
    ),
    gateMedianMs: ms(
      quantile(
        runs.map((r) => r.gateMs),
        0.5,
      ),
    ),
    gateP95Ms: ms(
      quantile(
        runs.map((r) => r.gateMs),
        0.95,
      ),
    ),
  });
  console.log(
    JSON.stringify(
      {
        stateFileKb: stateKb,
        head: Number(await client.getBlockNumber()),
        results: [report('one caller', alone), report(`${CONCURRENT} at once`, together)],
      },
      null,
      2,
    ),
  );
} finally {
  await chain.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
