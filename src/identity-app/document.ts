// The mock identity documents the test-network identity app "scans". Nothing here is a real document; the
// local hub accepts them because a trusted attester signs the disclosure (see LocalIdentityHub.sol).
import { type Hex, keccak256, stringToHex } from 'viem';

export type DocumentType = 'passport' | 'eu-id-card' | 'aadhaar';

export interface MockDocument {
  documentType: DocumentType;
  /** ISO 3166-1 alpha-3 issuing state, e.g. "GBR". */
  issuingState: string;
  /** ISO 3166-1 alpha-3 nationality. */
  nationality: string;
  firstNames: string;
  lastName: string;
  /** YYYY-MM-DD */
  dateOfBirth: string;
  /** "M", "F" or "X" as on an MRZ. */
  gender: string;
  documentNumber: string;
  /** YYYY-MM-DD */
  expiryDate: string;
  /** The holder is on a sanctions list: the OFAC checks do not clear. */
  sanctioned?: boolean;
  /** Mock documents are refused by the hub on Celo mainnet's chain id; default true. */
  mock?: boolean;
}

/** Hub V2 attestation ids. */
export const ATTESTATION_ID: Record<DocumentType, bigint> = { passport: 1n, 'eu-id-card': 2n, aadhaar: 3n };

export function attestationIdOf(documentType: DocumentType): Hex {
  return `0x${ATTESTATION_ID[documentType].toString(16).padStart(64, '0')}`;
}

export const DEFAULT_MOCK_DOCUMENT: Readonly<MockDocument> = Object.freeze({
  documentType: 'passport',
  issuingState: 'GBR',
  nationality: 'GBR',
  firstNames: 'ALICE',
  lastName: 'SMITH',
  dateOfBirth: '1995-01-01',
  gender: 'F',
  documentNumber: 'L898902C3',
  expiryDate: '2035-01-01',
  sanctioned: false,
  mock: true,
});

/**
 * A mock passport of its own for each seed (e.g. a human's address), so that different test humans have
 * different document numbers and therefore different nullifiers. Overrides win.
 */
export function mockDocumentFor(seed: string, overrides: Partial<MockDocument> = {}): MockDocument {
  const digest = keccak256(stringToHex(`mock-document:${seed.toLowerCase()}`));
  const documentNumber = `M${BigInt(digest).toString(36).toUpperCase().slice(0, 8)}`;
  return { ...DEFAULT_MOCK_DOCUMENT, documentNumber, ...overrides };
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Parses YYYY-MM-DD as a UTC date; throws on anything else. */
export function parseIsoDate(value: string): { year: number; month: number; day: number } {
  const match = DATE_RE.exec(value);
  if (!match) throw new Error(`date must be YYYY-MM-DD, got ${JSON.stringify(value)}`);
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    throw new Error(`not a calendar date: ${value}`);
  }
  return { year, month, day };
}

/** Completed years of age on the given (UTC) date. */
export function ageOn(dateOfBirth: string, on: Date): number {
  const dob = parseIsoDate(dateOfBirth);
  const [y, m, d] = [on.getUTCFullYear(), on.getUTCMonth() + 1, on.getUTCDate()];
  const hadBirthday = m > dob.month || (m === dob.month && d >= dob.day);
  return y - dob.year - (hadBirthday ? 0 : 1);
}
