// The one place where "the chain does not answer" becomes the named error: which viem failures count, and the
// fail-fast hold after one, through a real HTTP transport against loopback servers that refuse or never answer.
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChainClient } from '../../src/chain/clients.js';
import { FailFast } from '../../src/chain/reachability.js';
import { ChainUnreachableError, serviceErrorOf } from '../../src/core/errors.js';
import { freePort } from '../support/service-process.js';

const MULTICALL = '0xcA11bde05977b3631167028862bE2a173976CA11';

describe('chain clients that cannot reach their RPC', () => {
  const sockets = new Set<Socket>();
  let silent: Server;
  let silentUrl: string;
  let refusedUrl: string;

  beforeAll(async () => {
    silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    silentUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
    refusedUrl = `http://127.0.0.1:${await freePort()}`;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  const failure = async (promise: Promise<unknown>): Promise<{ error: ChainUnreachableError | undefined; ms: number }> => {
    const started = performance.now();
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    const found = serviceErrorOf(error);
    return { error: found instanceof ChainUnreachableError ? found : undefined, ms: performance.now() - started };
  };

  it('a refused connection is "<network> chain unreachable: connection refused", also from under a contract call', async () => {
    const client = createChainClient('mainnet', { rpcUrl: refusedUrl, failFastMs: 0 });
    const direct = await failure(client.getBlockNumber({ cacheTime: 0 }));
    expect(direct.error?.message).toBe('mainnet chain unreachable: connection refused');
    expect(direct.error?.status).toBe(500);
    // viem wraps it in its own contract error: the adapters find it among the causes
    const wrapped = await failure(
      client.readContract({
        address: MULTICALL,
        abi: [{ type: 'function', name: 'getBlockNumber', inputs: [], outputs: [{ type: 'uint256' }], stateMutability: 'view' }],
        functionName: 'getBlockNumber',
      }),
    );
    expect(wrapped.error?.message).toBe('mainnet chain unreachable: connection refused');
  });

  it('an RPC that never answers fails at the timeout, and the calls right after fail at once', async () => {
    const client = createChainClient('testnet', { rpcUrl: silentUrl, timeoutMs: 300, failFastMs: 1_000 });
    const first = await failure(client.getChainId());
    expect(first.error?.message).toBe('testnet chain unreachable: no answer within 0.3 s');
    expect(first.ms).toBeGreaterThanOrEqual(250);
    // held: the call fails without a request (the silent server is not connected to again)
    const connected = sockets.size;
    const next = await failure(client.getBlockNumber({ cacheTime: 0 }));
    expect(next.error?.message).toBe('testnet chain unreachable: no answer within 0.3 s');
    expect(sockets.size).toBe(connected);
  });

  it("a chain its supervisor reports down fails at once with the supervisor's reason", async () => {
    const client = createChainClient('testnet', {
      rpcUrl: silentUrl,
      runState: { downReason: () => 'the local chain is being restarted', restarts: () => 0 },
    });
    const connected = sockets.size;
    const down = await failure(client.getChainId());
    expect(down.error?.message).toBe('testnet chain unreachable: the local chain is being restarted');
    expect(sockets.size).toBe(connected);
  });
});

describe('FailFast', () => {
  it('holds a failure for its time, and lets the next call try after it', () => {
    let now = 0;
    const failFast = new FailFast(1_000, () => now);
    expect(failFast.heldReason()).toBeUndefined();
    failFast.failed('connection refused');
    now = 999;
    expect(failFast.heldReason()).toBe('connection refused');
    now = 1_000;
    expect(failFast.heldReason()).toBeUndefined();
    failFast.failed('connection refused');
    failFast.answered();
    expect(failFast.heldReason()).toBeUndefined();
  });

  it('forgets a failure from before the chain was restarted', () => {
    const failFast = new FailFast(1_000);
    failFast.failed('connection refused', 0);
    expect(failFast.heldReason(0)).toBe('connection refused');
    expect(failFast.heldReason(1)).toBeUndefined();
  });

  it('holds nothing with a zero hold', () => {
    const failFast = new FailFast(0);
    failFast.failed('connection refused');
    expect(failFast.heldReason()).toBeUndefined();
  });
});
