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

/** Beside the state file: the number of the newest block it holds, for programs outside the service. */
export const DURABLE_BLOCK_FILE = 'durable-block';

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

const BEST_BLOCK = Buffer.from('"best_block_number":');

/** The newest block a dumped state holds (anvil's `best_block_number`, a plain number). */
export function dumpedBlockOf(json: Buffer): bigint {
  const at = json.indexOf(BEST_BLOCK);
  const digits =
    at < 0 ? undefined : /^\s*"?(?:0x([0-9a-fA-F]+)|(\d+))/.exec(json.subarray(at + BEST_BLOCK.length, at + BEST_BLOCK.length + 80).toString());
  if (!digits) throw new Error('anvil_dumpState returned a state without best_block_number');
  return digits[1] !== undefined ? BigInt(`0x${digits[1]}`) : BigInt(digits[2] as string);
}

/**
 * Writes the chain's state (accounts, blocks, transactions and receipts) to `path`, atomically, and resolves with
 * the newest block it holds: read from the dump itself, so a dump asked for after a block was mined is known to
 * hold it. Without anvil's historical states: they grow the file by about a state per block (280 MB after 1,000
 * blocks, 13 s to dump), where this stays about 1-3 MB and 30-40 ms. The cost: after a restart, calls at a block
 * before the one loaded are refused (BlockOutOfRange); the one read the service makes at a past block falls back
 * to the latest.
 */
export async function dumpState(rpcUrl: string, path: string): Promise<bigint> {
  // false: without the historical states
  const dumped = await anvilRpc<string>(rpcUrl, 'anvil_dumpState', [false]);
  const json = await unzip(Buffer.from(dumped.slice(2), 'hex'));
  const block = dumpedBlockOf(json);
  await writeAtomically(path, json);
  return block;
}

/** Written next to the file and renamed over it: a reader (or a start after a crash) never sees half a file. */
export async function writeAtomically(path: string, content: string | Buffer): Promise<void> {
  const next = `${path}.${process.pid}.tmp`;
  await writeFile(next, content, { mode: 0o600 });
  await rename(next, path);
}
