// The embedded chains' state file, written by the service rather than by anvil. anvil's own `--state` dump is
// periodic (a hard kill loses the blocks since the last one) and writes the file in place (a kill during the write
// leaves half a file, which the next start cannot load). Here the state is asked of anvil (`anvil_dumpState`,
// gzipped JSON), unzipped, written next to the file and renamed over it: the file always holds a whole state, of
// the moment of the last dump. The rename survives a crash of the process, like the sqlite store's WAL with
// synchronous=NORMAL; it is not flushed to the disk itself (an OS crash may lose the last dumps).
import { rename, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';

const unzip = promisify(gunzip);

/** A dump is a few MB: allow it time even on a busy machine. */
const DUMP_TIMEOUT_MS = 15_000;

/** One JSON-RPC call to a local anvil, outside viem: the supervisor needs no chain object and no fail-fast rules. */
export async function anvilRpc<T>(rpcUrl: string, method: string, params: unknown[] = [], timeoutMs = DUMP_TIMEOUT_MS): Promise<T> {
  const response = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = (await response.json()) as { result?: T; error?: { message?: string } };
  if (body.error || body.result === undefined) throw new Error(`${method} failed: ${body.error?.message ?? `HTTP ${response.status}`}`);
  return body.result;
}

export const blockNumberOf = async (rpcUrl: string, timeoutMs?: number): Promise<bigint> =>
  BigInt(await anvilRpc<string>(rpcUrl, 'eth_blockNumber', [], timeoutMs));

/**
 * Writes the chain's state (accounts, blocks, transactions and receipts) to `path`, atomically. Without anvil's
 * historical states: they grow the file by about a state per block (280 MB after 1,000 blocks, 13 s to dump),
 * where this stays about 1-3 MB and 30-40 ms. The cost: after a restart, calls at a block before the one loaded
 * are refused (BlockOutOfRange); the one read the service makes at a past block falls back to the latest.
 */
export async function dumpState(rpcUrl: string, path: string): Promise<void> {
  // false: without the historical states
  const dumped = await anvilRpc<string>(rpcUrl, 'anvil_dumpState', [false]);
  const json = await unzip(Buffer.from(dumped.slice(2), 'hex'));
  const next = `${path}.${process.pid}.tmp`;
  await writeFile(next, json, { mode: 0o600 });
  await rename(next, path);
}
