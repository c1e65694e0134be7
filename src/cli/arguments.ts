// The command line's grammar (node:util parseArgs): each command declares its options; the ones every command takes
// (--url, --json, --help) are added here, and a parse error becomes a usage error (exit 2) naming what is wrong.
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { NETWORKS, type NetworkName } from '../core/networks.js';
import { usageError } from './exit-codes.js';
import { Output } from './output.js';

export const DEFAULT_URL = 'http://127.0.0.1:3000';
/** Where --url defaults from, so that a shell can set it once. */
export const URL_VARIABLE = 'AGENT_REGISTRY_URL';

type Options = NonNullable<ParseArgsConfig['options']>;

export const COMMON_OPTIONS = {
  url: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;

export const COMMON_HELP = `Every command:
  --url URL     the registry service (default $${URL_VARIABLE}, else ${DEFAULT_URL})
  --json        print JSON for scripts (register, export and deregister: one JSON object per line, each an "event")
  -h, --help    this command's help`;

/** Parses `args` with the command's options and the common ones; throws a usage error on anything unknown or malformed. */
export function parseCommand<const T extends Options>(args: readonly string[], options: T, positionals: { max: number }) {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: T & typeof COMMON_OPTIONS; allowPositionals: true; strict: true }>>;
  try {
    parsed = parseArgs({ args: [...args], options: { ...options, ...COMMON_OPTIONS }, allowPositionals: true, strict: true });
  } catch (error) {
    // Node's message adds advice about "--" in a second sentence; the first says what is wrong
    throw usageError(((error as Error).message.split('. ')[0] ?? String(error)).replace(/\.$/, ''));
  }
  if (!(parsed.values as { help?: boolean }).help && parsed.positionals.length > positionals.max) {
    throw usageError(`unexpected argument ${JSON.stringify(parsed.positionals[positionals.max])}`);
  }
  return parsed;
}

/** A command's arguments and its output (JSON with --json), or undefined once --help has printed `usage`. */
export function startCommand<const T extends Options>(args: readonly string[], options: T, usage: string, positionals: { max: number }) {
  const parsed = parseCommand(args, options, positionals);
  const values = parsed.values as { help?: boolean; json?: boolean };
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    return undefined;
  }
  return { ...parsed, out: new Output(values.json === true) };
}

/** The service's base URL: --url, else $AGENT_REGISTRY_URL, else the local default; an http(s) URL. */
export function serviceUrl(value: string | undefined): string {
  const url = value ?? (process.env[URL_VARIABLE] || DEFAULT_URL);
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) throw usageError(`--url must be an http(s) URL, got ${JSON.stringify(url)}`);
  return url.replace(/\/+$/, '');
}

/** A network by name or chain id. */
export function networkArgument(value: string, what: string): NetworkName {
  for (const network of Object.values(NETWORKS)) {
    if (value === network.name || value === String(network.chainId)) return network.name;
  }
  throw usageError(`${what} must be mainnet (chain id 42220) or testnet (chain id 11142220), got ${JSON.stringify(value)}`);
}

/** A 0x address of 20 bytes. */
export function addressArgument(value: string, what: string): `0x${string}` {
  if (!/^0x[0-9a-fA-F]{40}$/.test(value)) throw usageError(`${what} must be a 0x address of 40 hex digits, got ${JSON.stringify(value)}`);
  return value as `0x${string}`;
}

/** A whole number of seconds, as milliseconds. */
export function secondsArgument(value: string | undefined, what: string, fallbackS: number): number {
  if (value === undefined) return fallbackS * 1000;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw usageError(`${what} must be a whole number of seconds, got ${JSON.stringify(value)}`);
  return Number(value) * 1000;
}
