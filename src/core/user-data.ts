// userDefinedData: the ASCII string the identity app carries into the proof and the registry parses in its
// hub callback (onchain-facts 1.7, 14; reference-service-facts 4.2). Byte 0 is the action, byte 1 the config
// digit, the rest is lowercase hex without 0x. The Self SDK UTF-8-encodes the string, so every builder here
// emits ASCII only, except the legacy binary refresh form, which exists for compatibility and is opt-in.
import { type Address, bytesToHex, getAddress, type Hex, isAddress, toHex } from 'viem';
import type { EcdsaSignatureParts } from './challenge.js';
import type { ConfigIndex } from './disclosures.js';
import type { ExtKpub } from './ed25519-key.js';

export const USER_DATA_LENGTH = {
  register: 2,
  deregister: 2,
  registerAdvanced: 172,
  deregisterAdvanced: 42,
  registerWalletFree: 212,
  registerEd25519: 554,
  refresh: 66,
  refreshBinary: 34,
  identify: 2,
} as const;

export type UserDataAction = 'R' | 'D' | 'K' | 'X' | 'W' | 'E' | 'F' | 'I';

export type ParsedUserData =
  | { action: 'R'; configIndex: ConfigIndex }
  | { action: 'D'; configIndex: ConfigIndex }
  | { action: 'I'; configIndex: ConfigIndex }
  | { action: 'K'; configIndex: ConfigIndex; agent: Address; signature: EcdsaSignatureParts }
  | { action: 'X'; configIndex: ConfigIndex; agent: Address }
  | { action: 'W'; configIndex: ConfigIndex; agent: Address; guardian: Address | null; signature: EcdsaSignatureParts }
  | {
      action: 'E';
      configIndex: ConfigIndex;
      /** Raw 32-byte key, lowercase 0x-hex: the agent's agentKey. */
      pubkey: Hex;
      /** The 64-byte Ed25519 signature R || S. */
      signature: Hex;
      extKpub: ExtKpub;
      guardian: Address | null;
    }
  | { action: 'F'; configIndex: ConfigIndex; agentId: bigint; encoding: 'hex' | 'binary' };

export class UserDataError extends Error {
  override name = 'UserDataError';
}

const ZERO_HEX40 = '0'.repeat(40);
const HEX_RE = /^[0-9a-fA-F]*$/;

function digit(configIndex: ConfigIndex): string {
  if (!Number.isInteger(configIndex) || configIndex < 0 || configIndex > 5) {
    throw new UserDataError(`config index must be 0..5, got ${String(configIndex)}`);
  }
  return String(configIndex);
}

function hex40(address: Address): string {
  if (!isAddress(address, { strict: false })) throw new UserDataError(`not an address: ${address}`);
  return address.slice(2).toLowerCase();
}

/** A uint256 (bigint) or a hex word as 64 lowercase hex chars, left-padded. */
function hex64(value: bigint | Hex): string {
  const n = typeof value === 'bigint' ? value : BigInt(value);
  if (n < 0n || n >= 2n ** 256n) throw new UserDataError('value does not fit in 32 bytes');
  return n.toString(16).padStart(64, '0');
}

function vHex(v: 27 | 28): string {
  if (v !== 27 && v !== 28) throw new UserDataError('v must be 27 or 28');
  return v.toString(16);
}

function rawHex(bytes: Hex | Uint8Array, length: number, what: string): string {
  const hex = (typeof bytes === 'string' ? bytes : bytesToHex(bytes)).replace(/^0x/i, '');
  if (hex.length !== length * 2 || !HEX_RE.test(hex)) throw new UserDataError(`${what} must be ${length} bytes`);
  return hex.toLowerCase();
}

/** "R" + digit: register the proof's userId itself as the agent. */
export function registerUserData(configIndex: ConfigIndex): string {
  return `R${digit(configIndex)}`;
}

/** "D" + digit: deregister the agent keyed by the proof's userId. */
export function deregisterUserData(configIndex: ConfigIndex): string {
  return `D${digit(configIndex)}`;
}

/** "I" + digit: identify (emit the human's nullifier), no state change. */
export function identifyUserData(configIndex: ConfigIndex = 0): string {
  return `I${digit(configIndex)}`;
}

/** "K" + digit + agent40 + r64 + s64 + v2 (172 chars): agent key signed the challenge; NFT goes to the human. */
export function advancedRegisterUserData(args: { configIndex: ConfigIndex; agent: Address; signature: EcdsaSignatureParts }): string {
  const { r, s, v } = args.signature;
  return `K${digit(args.configIndex)}${hex40(args.agent)}${hex64(r)}${hex64(s)}${vHex(v)}`;
}

/** "X" + digit + agent40 (42 chars): deregister the agent with this address. */
export function advancedDeregisterUserData(args: { configIndex: ConfigIndex; agent: Address }): string {
  return `X${digit(args.configIndex)}${hex40(args.agent)}`;
}

/** "W" + digit + agent40 + guardian40 + r64 + s64 + v2 (212 chars): NFT goes to the agent; zeros = no guardian. */
export function walletFreeRegisterUserData(args: {
  configIndex: ConfigIndex;
  agent: Address;
  guardian?: Address | null;
  signature: EcdsaSignatureParts;
}): string {
  const { r, s, v } = args.signature;
  const guardian = args.guardian ? hex40(args.guardian) : ZERO_HEX40;
  return `W${digit(args.configIndex)}${hex40(args.agent)}${guardian}${hex64(r)}${hex64(s)}${vHex(v)}`;
}

/** "E" + digit + pubkey64 + sigR64 + sigS64 + 5 x extKpub64 + guardian40 (554 chars). */
export function ed25519RegisterUserData(args: {
  configIndex: ConfigIndex;
  pubkey: Hex | Uint8Array;
  /** The standard 64-byte Ed25519 signature R || S over the 32 challenge bytes. */
  signature: Hex | Uint8Array;
  extKpub: ExtKpub;
  guardian?: Address | null;
}): string {
  const guardian = args.guardian ? hex40(args.guardian) : ZERO_HEX40;
  return [
    `E${digit(args.configIndex)}`,
    rawHex(args.pubkey, 32, 'ed25519 public key'),
    rawHex(args.signature, 64, 'ed25519 signature'),
    ...args.extKpub.map(hex64),
    guardian,
  ].join('');
}

/**
 * "F" + digit + agentId. The default 'hex' form (66 chars, agentId as 64 hex) survives the Self SDK's UTF-8
 * encoding; the 'binary' form (34 chars, one char per agentId byte, code points 0..255) is the deployed
 * registry's layout and breaks under UTF-8 for bytes >= 0x80, so use it only for byte-level callers.
 */
export function refreshUserData(args: { configIndex: ConfigIndex; agentId: bigint | number; encoding?: 'hex' | 'binary' }): string {
  const agentId = BigInt(args.agentId);
  if (agentId <= 0n) throw new UserDataError('agentId must be positive');
  const word = hex64(agentId);
  if ((args.encoding ?? 'hex') === 'hex') return `F${digit(args.configIndex)}${word}`;
  let binary = '';
  for (let i = 0; i < 64; i += 2) binary += String.fromCharCode(parseInt(word.slice(i, i + 2), 16));
  return `F${digit(args.configIndex)}${binary}`;
}

/** The bytes the Self SDK puts after destChainId || userId in userContextData: UTF-8 of the string. */
export function userDefinedDataBytes(userDefinedData: string): Hex {
  return toHex(new TextEncoder().encode(userDefinedData));
}

// ----- parsing -----

function configIndexAt(s: string): ConfigIndex {
  if (s.length < 2) return 0; // the registry defaults to config 0
  const code = s.charCodeAt(1);
  if (code >= 0x30 && code <= 0x35) return (code - 0x30) as ConfigIndex;
  if (code <= 0x05) return code as ConfigIndex;
  throw new UserDataError(`invalid config index byte 0x${code.toString(16).padStart(2, '0')}`);
}

function field(s: string, from: number, to: number, what: string): string {
  const text = s.slice(from, to);
  if (text.length !== to - from || !HEX_RE.test(text)) throw new UserDataError(`${what} must be hex at [${from}..${to})`);
  return text.toLowerCase();
}

const address = (hex40text: string): Address => getAddress(`0x${hex40text}`);
const optionalAddress = (hex40text: string): Address | null => (hex40text === ZERO_HEX40 ? null : address(hex40text));

function minLength(s: string, length: number, action: string): void {
  if (s.length < length) throw new UserDataError(`${action} userDefinedData needs ${length} characters, got ${s.length}`);
}

function ecdsaParts(s: string, from: number): EcdsaSignatureParts {
  const r = `0x${field(s, from, from + 64, 'r')}` as Hex;
  const sig = `0x${field(s, from + 64, from + 128, 's')}` as Hex;
  const v = parseInt(field(s, from + 128, from + 130, 'v'), 16);
  if (v !== 27 && v !== 28) throw new UserDataError(`v must be 27 or 28, got ${v}`);
  return { r, s: sig, v };
}

/**
 * Reads userDefinedData as the registry does (lengths are minimums, trailing characters are ignored).
 * Accepts the string, or the bytes the registry received (one character per byte).
 */
export function parseUserData(input: string | Uint8Array): ParsedUserData {
  const s = typeof input === 'string' ? input : String.fromCharCode(...input);
  if (s.length === 0) throw new UserDataError('userDefinedData is empty');
  const action = s[0] as UserDataAction;
  const configIndex = configIndexAt(s);
  switch (action) {
    case 'R':
    case 'D':
    case 'I':
      return { action, configIndex };
    case 'K':
      minLength(s, USER_DATA_LENGTH.registerAdvanced, 'K');
      return { action, configIndex, agent: address(field(s, 2, 42, 'agent')), signature: ecdsaParts(s, 42) };
    case 'X':
      minLength(s, USER_DATA_LENGTH.deregisterAdvanced, 'X');
      return { action, configIndex, agent: address(field(s, 2, 42, 'agent')) };
    case 'W':
      minLength(s, USER_DATA_LENGTH.registerWalletFree, 'W');
      return {
        action,
        configIndex,
        agent: address(field(s, 2, 42, 'agent')),
        guardian: optionalAddress(field(s, 42, 82, 'guardian')),
        signature: ecdsaParts(s, 82),
      };
    case 'E': {
      minLength(s, USER_DATA_LENGTH.registerEd25519, 'E');
      const word = (from: number, what: string): bigint => BigInt(`0x${field(s, from, from + 64, what)}`);
      return {
        action,
        configIndex,
        pubkey: `0x${field(s, 2, 66, 'pubkey')}`,
        signature: `0x${field(s, 66, 194, 'signature')}`,
        extKpub: [word(194, 'extKpub[0]'), word(258, 'extKpub[1]'), word(322, 'extKpub[2]'), word(386, 'extKpub[3]'), word(450, 'extKpub[4]')],
        guardian: optionalAddress(field(s, 514, 554, 'guardian')),
      };
    }
    case 'F': {
      if (s.length >= USER_DATA_LENGTH.refresh && HEX_RE.test(s.slice(2, 66))) {
        return { action, configIndex, agentId: BigInt(`0x${s.slice(2, 66)}`), encoding: 'hex' };
      }
      minLength(s, USER_DATA_LENGTH.refreshBinary, 'F');
      let agentId = 0n;
      for (let i = 2; i < 34; i++) {
        const code = s.charCodeAt(i);
        if (code > 0xff) throw new UserDataError('binary refresh agentId must use code points 0..255');
        agentId = (agentId << 8n) | BigInt(code);
      }
      return { action, configIndex, agentId, encoding: 'binary' };
    }
    default:
      throw new UserDataError(`unknown action 0x${s.charCodeAt(0).toString(16).padStart(2, '0')}`);
  }
}
