// The request fields several endpoints take, each defined once: the route validates with it and the OpenAPI
// document is generated from it, so a pattern or an enum the document shows is the rule the route applies. What
// a JSON Schema pattern cannot say (an EIP-55 checksum, a point on a curve) is a refinement named in the
// description. The services check what depends on other fields or on the chain.
import { z } from 'zod';
import { ACCOUNT_ADDRESS_PATTERN, ADDRESS_FORM_MESSAGE, accountAddressProblem, CHECKSUM_MESSAGE, hasValidChecksum } from '../../core/addresses.js';
import { ED25519_PUBLIC_KEY_RULE, isEd25519PublicKey } from '../../core/ed25519-key.js';
import { NETWORK_NAMES, NETWORKS } from '../../core/networks.js';
import { MODE_ALIASES, REGISTRATION_MODES } from '../../core/registration-modes.js';
import { decimalPattern } from './decimal-pattern.js';

const shown = (value: unknown): string => {
  const text = JSON.stringify(value ?? null) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
};

/** A wallet or agent address: 0x and 40 hex digits, not zero, mixed case only as its EIP-55 checksum. */
export const accountAddress = (what: string) =>
  z
    .string({ error: `must be a string: ${what}, 0x and 40 hex digits` })
    .regex(ACCOUNT_ADDRESS_PATTERN, { error: (issue) => accountAddressProblem(issue.input) ?? ADDRESS_FORM_MESSAGE })
    .refine((value) => !ACCOUNT_ADDRESS_PATTERN.test(value) || hasValidChecksum(value), CHECKSUM_MESSAGE)
    .describe(`${what}: 0x and 40 hex digits, not the zero address; mixed case must match its EIP-55 checksum (one case is taken as is)`);

/** Agent ids are minted from 1 upwards; above 2^53 - 1 none can exist (and JSON numbers would lose precision). */
export const MAX_AGENT_ID = Number.MAX_SAFE_INTEGER;
const AGENT_ID_MESSAGE = `must be a positive decimal integer no larger than ${MAX_AGENT_ID}, such as 1 (no leading zeros, no hex)`;

/** An agent id as text (a path parameter, or a JSON string). */
export const agentIdText = z
  .string({ error: AGENT_ID_MESSAGE })
  .regex(new RegExp(decimalPattern(BigInt(MAX_AGENT_ID), 1n)), AGENT_ID_MESSAGE)
  .describe(`Agent id: a positive decimal integer, at most ${MAX_AGENT_ID}`);

/** An agent id in a JSON body: the number or its decimal text. */
export const agentIdValue = z
  .union([z.number({ error: AGENT_ID_MESSAGE }).int(AGENT_ID_MESSAGE).min(1, AGENT_ID_MESSAGE).max(MAX_AGENT_ID, AGENT_ID_MESSAGE), agentIdText], {
    error: `${AGENT_ID_MESSAGE}; a number or a decimal string`,
  })
  .describe(`The agent id: a positive integer at most ${MAX_AGENT_ID}, as a number or a decimal string`);

/** Nullifiers are field elements: decimal, below 2^256. */
const NULLIFIER_MESSAGE = 'must be the human nullifier: a decimal integer below 2^256, without leading zeros';
export const nullifierText = z
  .string({ error: NULLIFIER_MESSAGE })
  .regex(new RegExp(decimalPattern(2n ** 256n - 1n, 0n)), NULLIFIER_MESSAGE)
  .describe('Human nullifier: a decimal integer below 2^256');

/** A session's network: by name, or its chain id as text (resolveNetwork's values). */
const SESSION_NETWORKS = [...NETWORK_NAMES, ...NETWORK_NAMES.map((name) => String(NETWORKS[name].chainId))] as [string, ...string[]];
export const sessionNetwork = z
  .enum(SESSION_NETWORKS, {
    error: (issue) =>
      typeof issue.input === 'string'
        ? `unsupported network ${shown(issue.input)}: use "mainnet" (chain id 42220) or "testnet" (chain id 11142220)`
        : 'must be a string: "mainnet" or "testnet"',
  })
  .describe('"mainnet" (default) or "testnet"; their chain ids 42220 and 11142220 as text are accepted too');

/** A registration mode or one of the aliases other deployments use. */
export const registrationModeInput = z
  .enum([...REGISTRATION_MODES, ...Object.keys(MODE_ALIASES)] as [string, ...string[]], {
    error: (issue) =>
      typeof issue.input === 'string'
        ? `unknown mode ${shown(issue.input)}: use one of ${REGISTRATION_MODES.join(', ')} (aliases: agent-identity = linked, walletfree = wallet-free)`
        : `must be a string: one of ${REGISTRATION_MODES.join(', ')}`,
  })
  .describe('One of the registration modes (aliases: agent-identity = linked, walletfree = wallet-free)');

/** 0x-hex (the prefix optional, either case) of exactly `digits` hex digits, or of a range of counts. */
const hexPattern = (digits: number | [number, number]): RegExp =>
  new RegExp(`^(?:0[xX])?[0-9a-fA-F]{${Array.isArray(digits) ? digits.join(',') : digits}}$`);

export const hexText = (digits: number | [number, number], message: string, what: string) =>
  z.string({ error: message }).regex(hexPattern(digits), message).describe(what);

/** A 65-byte ECDSA signature r || s || v, v the recovery byte as wallets write it (27, 28) or as 0, 1. */
export const ecdsaSignatureText = (message: string, what: string) =>
  z
    .string({ error: message })
    .regex(/^(?:0[xX])?[0-9a-fA-F]{128}(?:1[bBcC]|0[01])$/, message)
    .describe(`${what}: 65 bytes, 130 hex (0x optional), ending in the recovery byte 1b, 1c, 00 or 01`);

/** An Ed25519 public key as the registry's verifier accepts it (strict RFC 8032). */
export const ed25519PublicKey = (what: string) =>
  z
    .string({ error: `must be a string: ${what}, 64 hex characters` })
    .regex(hexPattern(64), ED25519_PUBLIC_KEY_RULE)
    .refine((value) => isEd25519PublicKey(value), ED25519_PUBLIC_KEY_RULE)
    .describe(`${what}: 64 hex characters (0x optional); the canonical encoding of a curve point that is not of small order`);
