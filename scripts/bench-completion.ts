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
// COMPARE=<path of another build's main.js> runs that build too, beside this one on the same chain, its sessions'
// proofs in the same blocks: a paired comparison that a busy machine disturbs far less than two runs one after the other.
//
// Blocks: anvil mines every second (interval mining), as Celo does. With automine a block would follow each
// transaction at once, so every head the service hears would carry the benchmark's own registration; with 1 s
// blocks heads come on their own clock, empty ones included, and the registrations of a run share one block.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { createPublicClient, type Hex, webSocket } from 'viem';
import { localWebSocketUrl } from '../src/chain/new-heads.js';
import { agentRegistryAbi } from '../src/contracts/artifacts/index.js';
import { proofRequestFromDeepLink, prove } from '../src/identity-app/index.js';
import { a2aClient, openRegisterTask, sessionOfTask } from './a2a-register-task.js';
import { startLocalSystem } from './local-system.js';
import { percentile } from './percentile.js';
import { type Started, startService, stopService } from './service-process.js';

const RUNS = Number(process.env['RUNS'] ?? 30);
const POLL_MS = Number(process.env['POLL_MS'] ?? 5);
const WITH_WS = process.env['WS'] !== 'off';
const COMPARE = process.env['COMPARE'];
const BLOCK_TIME_S = 1;
const RUN_TIMEOUT_MS = 30_000;

const testnet = await startLocalSystem(11142220);
const mainnet = await startLocalSystem(42220);
const dataDir = mkdtempSync(join(tmpdir(), 'bench-completion-'));
const wsUrl = localWebSocketUrl(testnet.chain.rpcUrl);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Measured {
  label: string;
  service: Started;
  a2a: Client;
  streamDelays: number[];
  statusDelays: number[];
}

/** One run's sessions on a service: the deep links to prove, and when each said completed. */
async function openSessions(measured: Measured, run: number) {
  const { service, a2a } = measured;
  // the A2A task: its session's deep link comes with the task, its completion on the stream
  const stream = openRegisterTask(a2a);
  const first = await stream.next();
  if (first.done || first.value.payload?.$case !== 'task') throw new Error('the register task did not start with its task');
  const { deepLink: taskLink } = sessionOfTask(first.value.payload.value);
  const streamCompleted = (async () => {
    for await (const event of stream) {
      const state = event.payload?.$case === 'statusUpdate' ? event.payload.value.status?.state : undefined;
      if (state === TaskState.TASK_STATE_COMPLETED) return performance.now();
      if (state === TaskState.TASK_STATE_FAILED) throw new Error('the task failed');
    }
    throw new Error('the stream ended before the task completed');
  })();

  // the REST session, followed by polling its status
  const opened = await fetch(`${service.base}/api/agent/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.3.${run}.1` },
    body: JSON.stringify({ mode: 'wallet-free', network: 'testnet' }),
  });
  if (opened.status !== 200) throw new Error(`POST /api/agent/register answered ${opened.status}`);
  const session = (await opened.json()) as { sessionToken: string; deepLink: string };
  const statusCompleted = (async () => {
    let token = session.sessionToken;
    for (;;) {
      const res = await fetch(`${service.base}/api/agent/register/status`, { headers: { authorization: `Bearer ${token}` } });
      const answer = (await res.json()) as { stage: string; sessionToken: string };
      if (answer.stage === 'completed') return performance.now();
      if (res.status !== 200 || answer.stage === 'failed') throw new Error(`status: ${res.status} ${JSON.stringify(answer)}`);
      token = answer.sessionToken;
      await sleep(POLL_MS);
    }
  })();
  return { links: [taskLink, session.deepLink], completed: Promise.all([streamCompleted, statusCompleted]) };
}

try {
  const builds = [{ label: 'this build', main: 'dist/main.js' }, ...(COMPARE ? [{ label: COMPARE, main: COMPARE }] : [])];
  const relayers = await Promise.all(builds.flatMap(() => [testnet.newWallet(), testnet.newWallet()]));
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

  let run = 0;
  const measured: Measured[] = [];
  for (const [i, build] of builds.entries()) {
    const service = await startService({ testnet, mainnet }, join(dataDir, String(i)), WITH_WS ? { TESTNET_WS_URL: wsUrl } : {}, build.main);
    const a2a = await a2aClient(service.base, () => `10.2.${run}.1`);
    measured.push({ label: build.label, service, a2a, streamDelays: [], statusDelays: [] });
  }

  for (run = 0; run < RUNS; run++) {
    const opened = await Promise.all(measured.map((m) => openSessions(m, run)));
    // every proof into the next block, with no callback to the service
    const txs = await Promise.all(
      opened
        .flatMap((o) => o.links)
        .map(async (deepLink, i) => {
          const wallet = relayers[i];
          if (!wallet) throw new Error('a relayer short');
          const result = await prove({ client: testnet.client, wallet, attester: testnet.attester, request: proofRequestFromDeepLink(deepLink) });
          if (result.status !== 'submitted') throw new Error(result.reason);
          return result.txHash;
        }),
    );
    // a run that never completes is a finding, not a hang: name the build and stop
    const completed = await Promise.all(
      opened.map((o, i) =>
        Promise.race([
          o.completed,
          sleep(RUN_TIMEOUT_MS).then(() => {
            throw new Error(`run ${run}: ${measured[i]?.label} did not complete within ${RUN_TIMEOUT_MS} ms`);
          }),
        ]),
      ),
    );
    for (let i = 0; i < 200 && !txs.every((tx) => logSeen.has(tx)); i++) await sleep(10);
    for (const [i, m] of measured.entries()) {
      const [viaTask, viaRest] = [logSeen.get(txs[2 * i] as Hex), logSeen.get(txs[2 * i + 1] as Hex)];
      const [b, c] = completed[i] as unknown as [number, number];
      if (viaTask === undefined || viaRest === undefined) throw new Error('the WebSocket watcher never saw a registration');
      m.streamDelays.push(b - viaTask);
      m.statusDelays.push(c - viaRest);
    }
  }
  unwatch();
  await (await watcher.transport.getRpcClient()).close();
  await Promise.all(measured.map((m) => stopService(m.service)));
  const figures = (values: number[]) => ({
    medianMs: Math.round(percentile(values, 50) * 10) / 10,
    p90Ms: Math.round(percentile(values, 90) * 10) / 10,
  });
  for (const m of measured) {
    console.log(
      JSON.stringify({
        build: m.label,
        runs: RUNS,
        webSocket: WITH_WS,
        blockTimeS: BLOCK_TIME_S,
        restPollMs: POLL_MS,
        a2aStreamCompletedAfterLog: figures(m.streamDelays),
        restStatusCompletedAfterLog: figures(m.statusDelays),
      }),
    );
  }
} finally {
  await Promise.all([testnet.chain.stop(), mainnet.chain.stop()]);
  rmSync(dataDir, { recursive: true, force: true });
}
