// The agent's key on disk: a JSON file only its owner can read (created 0600, never through a looser mode), never
// written over unless asked (--force), and what sign, status and deregister read back.
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ExportedKey } from '../client/registration.js';
import { chainIdOf, type NetworkName } from '../core/networks.js';
import { usageError } from './exit-codes.js';

export const DEFAULT_KEY_FILE = 'agent-key.json';

export interface KeyFile extends ExportedKey {
  /** The registry service that registered the agent (its key directory, for RFC 9421 Web Bot Auth signatures). */
  service: string;
  chainId: number;
}

export const keyFileOf = (key: ExportedKey, service: string): KeyFile => ({ service, chainId: chainIdOf(key.network), ...key });

/** Refuses, before anything is sent, a key file that a registration would have to write over. */
export function checkKeyFileFree(path: string, force: boolean): void {
  if (!force && existsSync(path)) {
    throw usageError(`${path} exists: pass --key-file with another path, or --force to replace it (its key is then lost)`);
  }
}

/** Writes the key, created with mode 0600; over an existing file only with `force` (a new file renamed over it). */
export function writeKeyFile(path: string, key: KeyFile, force: boolean): string {
  const text = `${JSON.stringify(key, null, 2)}\n`;
  const target = resolve(path);
  if (!force) {
    try {
      writeFileSync(target, text, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') checkKeyFileFree(path, false);
      throw error;
    }
    return target;
  }
  const next = `${target}.${process.pid}.tmp`;
  try {
    writeFileSync(next, text, { mode: 0o600, flag: 'wx' });
    renameSync(next, target);
  } finally {
    rmSync(next, { force: true });
  }
  return target;
}

const NETWORK_NAMES: readonly string[] = ['mainnet', 'testnet'];

/** The key file at `path`, checked; a usage error names what is missing or wrong. */
export function readKeyFile(path: string): KeyFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw usageError(
      code === 'ENOENT' ? `no key file ${path}: register first, or pass --key-file` : `cannot read ${path}: ${(error as Error).message}`,
    );
  }
  let key: Partial<KeyFile>;
  try {
    key = JSON.parse(text) as Partial<KeyFile>;
  } catch {
    throw usageError(`${path} is not JSON: is it a key file that register or export wrote?`);
  }
  const bad = (field: string) => usageError(`${path}: ${field} is missing or malformed: is it a key file that register or export wrote?`);
  if (typeof key.privateKey !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(key.privateKey)) throw bad('privateKey');
  if (key.keyType !== 'secp256k1' && key.keyType !== 'ed25519') throw bad('keyType');
  if (typeof key.network !== 'string' || !NETWORK_NAMES.includes(key.network)) throw bad('network');
  if (typeof key.agentId !== 'number' || !Number.isSafeInteger(key.agentId) || key.agentId < 1) throw bad('agentId');
  if (typeof key.agentAddress !== 'string') throw bad('agentAddress');
  if (typeof key.service !== 'string' || !URL.canParse(key.service)) throw bad('service');
  return { ...(key as KeyFile), chainId: chainIdOf(key.network as NetworkName) };
}
