// Addresses as callers send them. The form is 0x and 40 hex digits; a mixed-case address carries an EIP-55
// checksum, which must match (a typo in a checksummed address is caught here, not after a human has proved for
// it); all-lowercase and all-uppercase digits carry none and are taken as they are. The zero address is no
// one's wallet or agent: a proof bound to it fails on chain only after the human has scanned, so it is refused.
import { type Address, checksumAddress } from 'viem';
import { badRequest } from './errors.js';

/** 0x and 40 hex digits, not all zero: the form the HTTP schemas (and so the OpenAPI document) check. */
export const ACCOUNT_ADDRESS_PATTERN = /^0x(?!0{40}$)[0-9a-fA-F]{40}$/;

const ADDRESS_FORM = /^0x[0-9a-fA-F]{40}$/;
const ZERO = /^0x0{40}$/;

/** Mixed-case digits must be the EIP-55 checksum; one-case digits carry none. */
export function hasValidChecksum(address: string): boolean {
  const digits = address.slice(2);
  if (digits === digits.toLowerCase() || digits === digits.toUpperCase()) return true;
  return checksumAddress(address as Address) === address;
}

export const ADDRESS_FORM_MESSAGE = 'must be a 0x-prefixed 20-byte hex address (0x and 40 hex digits)';
export const ZERO_ADDRESS_MESSAGE = 'must not be the zero address: give the real address';
export const CHECKSUM_MESSAGE =
  'has mixed case that does not match its EIP-55 checksum: check the address for a typo (copy it again from the wallet), or send it in one case';

/** What is wrong with `value` as an account address (form, zero, checksum), or undefined when nothing is. */
export function accountAddressProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || !ADDRESS_FORM.test(value)) return ADDRESS_FORM_MESSAGE;
  if (ZERO.test(value)) return ZERO_ADDRESS_MESSAGE;
  if (!hasValidChecksum(value)) return CHECKSUM_MESSAGE;
  return undefined;
}

export const isAccountAddress = (value: unknown): value is Address => accountAddressProblem(value) === undefined;

/** `value` checksummed, or a 400 `<field> <problem>` (and `hint`, e.g. which address is meant). */
export function parseAccountAddress(value: unknown, field: string, hint?: string): Address {
  const problem = accountAddressProblem(value);
  if (problem) throw badRequest(`${field} ${problem}${hint ? ` (${hint})` : ''}`);
  return checksumAddress(value as Address);
}
