// npm run bench:a2a: how soon an A2A register task tells its caller that the agent is registered. Each run
// opens a task with the SDK's client (SendStreamingMessage, with a push notification webhook on this machine),
// lets the mock identity app register the agent on a local chain without calling back, and measures from the
// moment the registering transaction's receipt is in to (a) the task's `completed` update on the stream and
// (b) the webhook receiving it.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { createA2aAgent } from '../src/a2a/agent.js';
import { createApp } from '../src/http/app.js';
import { proofRequestFromDeepLink, prove } from '../src/identity-app/index.js';
import { createLogger } from '../src/logger.js';
import { createServices } from '../src/services/index.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { a2aClient, openRegisterTask, sessionOfTask } from './a2a-register-task.js';
import { startLocalSystem } from './local-system.js';

const RUNS = Number(process.env['RUNS'] ?? 20);
const dir = mkdtempSync(join(tmpdir(), 'bench-a2a-'));
const system = await startLocalSystem();
const { chain, client, attester } = system;
const store = new SqliteStore(join(dir, 'store.sqlite'));

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const round = (ms: number): number => Math.round(ms * 10) / 10;

// the webhook: when each task's completed notification arrived
const webhookCompleted = new Map<string, number>();
const webhook = createServer((req, res) => {
  let text = '';
  req.on('data', (chunk: Buffer) => (text += chunk.toString()));
  req.on('end', () => {
    const update = (JSON.parse(text) as { statusUpdate?: { taskId: string; status?: { state?: string } } }).statusUpdate;
    if (update?.status?.state === 'TASK_STATE_COMPLETED') webhookCompleted.set(update.taskId, performance.now());
    res.end();
  });
});
await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
const webhookUrl = `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/hook`;

try {
  const chains = system.gateway();
  const secret = randomBytes(32);
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const services = createServices({ chains, store, sessionSecret: secret, publicUrl: base, deepLinkScheme: 'selfapp', appName: 'bench' });
  await services.queries.start();
  const logger = createLogger('silent');
  const agent = createA2aAgent(services, { publicUrl: base, version: 'bench', store, secret, pushPolicy: { allowPrivateNetworks: true }, logger });
  const app = createApp({ chains, services, logger, version: 'bench', publicUrl: base, a2a: agent });
  server.on('request', app);
  // each run comes from its own address, so the per-address session limit does not stop the benchmark
  let run = 0;
  const a2a = await a2aClient(base, () => `10.1.${run}.1`);
  const relayer = await system.newWallet();

  const streamDelay: number[] = [];
  const pushDelay: number[] = [];
  for (run = 0; run < RUNS; run++) {
    const stream = openRegisterTask(a2a, webhookUrl);
    let taskId = '';
    let mined = 0;
    let proving: Promise<void> | undefined;
    for await (const event of stream) {
      const payload = event.payload;
      if (payload?.$case === 'task') {
        taskId = payload.value.id;
        const { deepLink } = sessionOfTask(payload.value);
        proving = prove({ client, wallet: relayer, attester, request: proofRequestFromDeepLink(deepLink) }).then((result) => {
          if (result.status !== 'submitted') throw new Error(result.reason);
          mined = performance.now(); // prove() returns once the registering block's receipt is in
        });
      } else if (payload?.$case === 'statusUpdate' && payload.value.status?.state === TaskState.TASK_STATE_COMPLETED) {
        await proving;
        streamDelay.push(performance.now() - mined);
      }
    }
    for (let i = 0; i < 100 && !webhookCompleted.has(taskId); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    const pushed = webhookCompleted.get(taskId);
    if (pushed === undefined) throw new Error(`the webhook never heard that task ${taskId} completed`);
    pushDelay.push(pushed - mined);
  }
  services.watcher.stopAll();
  await services.queries.stop();
  server.close();
  console.log(
    JSON.stringify({
      runs: RUNS,
      blockToStreamCompletedMedianMs: round(median(streamDelay)),
      blockToStreamCompletedMaxMs: round(Math.max(...streamDelay)),
      blockToWebhookCompletedMedianMs: round(median(pushDelay)),
      blockToWebhookCompletedMaxMs: round(Math.max(...pushDelay)),
    }),
  );
} finally {
  webhook.close();
  await store.close();
  await chain.stop();
  rmSync(dir, { recursive: true, force: true });
}
