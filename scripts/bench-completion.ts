// npm run bench:completion: how soon after a registration's log reaches the chain's WebSocket the service says the
// session is completed, when only the chain tells it (the identity app submits the proof on chain and never calls
// back). The service runs as `npm start` runs it, against a local anvil as its external RPC, with TESTNET_WS_URL
// (anvil serves WebSocket on its HTTP port) unless WS=off. An independent viem WebSocket watcher of the registry's
// AgentRegisteredWithHumanProof logs marks (a), when the log is visible. Each run opens an A2A register task as a
// stream and a REST registration session, submits both proofs into one block, and records:
//   (b) when the A2A stream says completed;
//   (c) when a REST status poll loop (GET /api/agent/register/status every POLL_MS) first says completed.
// It prints the median and p90 of b - a and c - a.
//
// Blocks: anvil mines every second (interval mining), as Celo does. With automine a block would follow each
// transaction at once, so every head the service hears would carry the benchmark's own registration; with 1 s
// blocks heads come on their own clock, empty ones included, and the A2A and REST registrations of a run share one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { createPublicClient, type Hex, webSocket } from 'viem';
import { localWebSocketUrl } from '../src/chain/new-heads.js';
import { agentRegistryAbi } from '../src/contracts/artifacts/index.js';
import { proofRequestFromDeepLink, prove } from '../src/identity-app/index.js';
import { a2aClient, openRegisterTask, sessionOfTask } from './a2a-register-task.js';
import { startLocalSystem } from './local-system.js';
import { percentile } from './percentile.js';
import { startService, stopService } from './service-process.js';

const RUNS = Number(process.env['RUNS'] ?? 30);
const POLL_MS = Number(process.env['POLL_MS'] ?? 5);
const WITH_WS = process.env['WS'] !== 'off';
const BLOCK_TIME_S = 1;

const testnet = await startLocalSystem(11142220);
const mainnet = await startLocalSystem(42220);
const dataDir = mkdtempSync(join(tmpdir(), 'bench-completion-'));
const wsUrl = localWebSocketUrl(testnet.chain.rpcUrl);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

try {
  const relayers = [await testnet.newWallet(), await testnet.newWallet()] as const;
  await testnet.client.request({ method: 'evm_setIntervalMining' as never, params: [BLOCK_TIME_S] as never });

  // (a): the log as a WebSocket subscriber of the chain sees it, by transaction
  const logSeen = new Map<Hex, number>();
  const watcher = createPublicClient({ transport: webSocket(wsUrl) });
  const unwatch = watcher.watchContractEvent({
    address: testnet.deployment.contracts.registry,
    abi: agentRegistryAbi,
    eventName: 'AgentRegisteredWithHumanProof',
    onLogs: (logs) => {
      const now = performance.now();
      for (const log of logs) if (log.transactionHash && !logSeen.has(log.transactionHash)) logSeen.set(log.transactionHash, now);
    },
  });

  const service = await startService({ testnet, mainnet }, dataDir, WITH_WS ? { TESTNET_WS_URL: wsUrl } : {});
  let run = 0;
  const a2a = await a2aClient(service.base, () => `10.2.${run}.1`);
  const forwarded = () => ({ 'content-type': 'application/json', 'x-forwarded-for': `10.3.${run}.1` });

  const streamDelays: number[] = [];
  const statusDelays: number[] = [];
  for (run = 0; run < RUNS; run++) {
    // the A2A task: its session's deep link comes with the task, its completion on the stream
    const stream = openRegisterTask(a2a);
    const first = await stream.next();
    if (first.done || first.value.payload?.$case !== 'task') throw new Error('the register task did not start with its task');
    const { deepLink: taskLink } = sessionOfTask(first.value.payload.value);
    const streamCompleted = (async () => {
      for await (const event of stream) {
        const payload = event.payload;
        if (payload?.$case === 'statusUpdate' && payload.value.status?.state === TaskState.TASK_STATE_COMPLETED) return performance.now();
        if (payload?.$case === 'statusUpdate' && payload.value.status?.state === TaskState.TASK_STATE_FAILED) throw new Error('the task failed');
      }
      throw new Error('the stream ended before the task completed');
    })();

    // the REST session, followed by polling its status
    const opened = await fetch(`${service.base}/api/agent/register`, {
      method: 'POST',
      headers: forwarded(),
      body: JSON.stringify({ mode: 'wallet-free', network: 'testnet' }),
    });
    if (opened.status !== 200) throw new Error(`POST /api/agent/register answered ${opened.status}`);
    const session = (await opened.json()) as { sessionToken: string; deepLink: string };
    let polling = true;
    const statusCompleted = (async () => {
      let token = session.sessionToken;
      while (polling) {
        const res = await fetch(`${service.base}/api/agent/register/status`, { headers: { authorization: `Bearer ${token}` } });
        const answer = (await res.json()) as { stage: string; sessionToken: string };
        if (answer.stage === 'completed') return performance.now();
        if (res.status !== 200 || answer.stage === 'failed') throw new Error(`status: ${res.status} ${JSON.stringify(answer)}`);
        token = answer.sessionToken;
        await sleep(POLL_MS);
      }
      throw new Error('stopped');
    })();

    // both proofs into the next block, with no callback to the service
    const [viaTask, viaRest] = await Promise.all(
      [taskLink, session.deepLink].map(async (deepLink, i) => {
        const result = await prove({
          client: testnet.client,
          wallet: relayers[i as 0 | 1],
          attester: testnet.attester,
          request: proofRequestFromDeepLink(deepLink),
        });
        if (result.status !== 'submitted') throw new Error(result.reason);
        return result.txHash;
      }),
    );
    const [b, c] = await Promise.all([streamCompleted, statusCompleted]).finally(() => {
      polling = false;
    });
    for (let i = 0; i < 200 && !(logSeen.has(viaTask as Hex) && logSeen.has(viaRest as Hex)); i++) await sleep(10);
    const aTask = logSeen.get(viaTask as Hex);
    const aRest = logSeen.get(viaRest as Hex);
    if (aTask === undefined || aRest === undefined) throw new Error('the WebSocket watcher never saw a registration');
    streamDelays.push(b - aTask);
    statusDelays.push(c - aRest);
  }
  unwatch();
  await (await watcher.transport.getRpcClient()).close();
  await stopService(service);
  const figures = (values: number[]) => ({
    medianMs: Math.round(percentile(values, 50) * 10) / 10,
    p90Ms: Math.round(percentile(values, 90) * 10) / 10,
  });
  console.log(
    JSON.stringify({
      runs: RUNS,
      webSocket: WITH_WS,
      blockTimeS: BLOCK_TIME_S,
      restPollMs: POLL_MS,
      a2aStreamCompletedAfterLog: figures(streamDelays),
      restStatusCompletedAfterLog: figures(statusDelays),
    }),
  );
} finally {
  await Promise.all([testnet.chain.stop(), mainnet.chain.stop()]);
  rmSync(dataDir, { recursive: true, force: true });
}
