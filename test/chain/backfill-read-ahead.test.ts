// A backfill asks the node for its next window the moment the node has answered the last one, not once that answer
// has been read and parsed: the node works on the next window meanwhile. A front between the follower and a real
// anvil sends each eth_getLogs answer's headers and half its body, and holds the rest until the follower's next
// eth_getLogs arrives (or 1.5 s pass): every window but the last must be asked for while the one before is held.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNetworkGateway } from '../../src/chain/gateway.js';
import type { RegistryEventFollower, RegistryLog } from '../../src/chain/registry-events.js';
import { registerWalletFree } from '../support/agents.js';
import { deployTestSystem, LOCAL, type TestSystem } from '../support/chain.js';

const HOLD_MS = 1_500;

interface HeldFront {
  url: string;
  /** Per eth_getLogs answered, in order: whether the next eth_getLogs arrived while its body was held. */
  overlapped: boolean[];
  close(): Promise<void>;
}

async function holdingFront(target: string): Promise<HeldFront> {
  const overlapped: boolean[] = [];
  let release: (() => void) | undefined;
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const isGetLogs = body.includes('"eth_getLogs"');
    if (isGetLogs) release?.();
    const answer = Buffer.from(await (await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).arrayBuffer());
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
    if (!isGetLogs) {
      res.end(answer);
      return;
    }
    const half = Math.floor(answer.length / 2);
    res.write(answer.subarray(0, half));
    const index = overlapped.push(false) - 1;
    const finish = (early: boolean) => {
      clearTimeout(timer);
      if (release === finishEarly) release = undefined;
      overlapped[index] = early;
      res.end(answer.subarray(half));
    };
    const finishEarly = () => finish(true);
    const timer = setTimeout(() => finish(false), HOLD_MS);
    release = finishEarly;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    overlapped,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('backfill read-ahead', () => {
  let system: TestSystem;
  let front: HeldFront;
  let follower: RegistryEventFollower;
  const minted: bigint[] = [];

  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    for (let i = 0; i < 4; i++) minted.push((await registerWalletFree(system)).agentId);
    front = await holdingFront(system.rpcUrl);
    follower = createNetworkGateway('testnet', {
      clientOptions: { rpcUrl: front.url, ...LOCAL },
      contracts: system.deployment.contracts,
      registryDeployBlock: system.deployment.registryDeployBlock,
      embedded: true,
      // a window per block: the registrations' blocks are read in several windows
    }).followRegistry({ intervalMs: 60_000, maxLogRange: 1n });
  }, 60_000);
  afterAll(async () => {
    await follower?.stop();
    await front?.close();
  });

  it('asks for each next window while the last answer is still arriving, and delivers every log once, in order', async () => {
    const delivered: RegistryLog[] = [];
    follower.subscribe((logs) => delivered.push(...logs));
    await follower.start();

    const windows = front.overlapped.length;
    expect(windows).toBeGreaterThan(4);
    // every answer but the last was still held when the next window was asked for
    expect(front.overlapped.slice(0, -1)).toEqual(Array(windows - 1).fill(true));
    expect(front.overlapped.at(-1)).toBe(false);

    const positions = delivered.map((log) => [log.blockNumber, log.logIndex] as const);
    const sorted = [...positions].sort(([a, i], [b, j]) => (a === b ? i - j : a < b ? -1 : 1));
    expect(positions).toEqual(sorted);
    expect(new Set(positions.map(([block, index]) => `${block}:${index}`)).size).toBe(positions.length);
    const expected = await system.client.getLogs({ address: system.deployment.contracts.registry, fromBlock: system.deployment.registryDeployBlock });
    const backfilled = new Set(delivered.map((log) => `${log.blockNumber}:${log.logIndex}`));
    // the backfill topics' logs of the registrations are all there (Transfer mints among them)
    const mints = expected.filter((log) => log.topics.length === 4 && BigInt(log.topics[1] ?? '0x1') === 0n);
    expect(mints.map((log) => BigInt(log.topics[3] as string))).toEqual(expect.arrayContaining(minted));
    for (const log of mints) expect(backfilled.has(`${log.blockNumber}:${log.logIndex}`)).toBe(true);
  }, 60_000);
});
