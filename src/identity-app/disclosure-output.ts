// Builds the GenericDiscloseOutputV2 that Hub V2 would hand to the registry for a mock document: what the
// disclose circuit reveals for the requested disclosures, formatted as the hub's formatter does.
import { encodeAbiParameters, type Hex, keccak256 } from 'viem';
import type { AgentCredentials } from '../core/credentials.js';
import type { Disclosures } from '../core/disclosures.js';
import { ageOn, attestationIdOf, type MockDocument, parseIsoDate } from './document.js';

/** Hub V2's output struct as viem encodes and decodes it: the disclosed credentials plus the proof's ids. */
export interface GenericDiscloseOutputV2 extends AgentCredentials {
  attestationId: Hex;
  userIdentifier: bigint;
  nullifier: bigint;
  forbiddenCountriesListPacked: readonly [bigint, bigint, bigint, bigint];
}

export const genericDiscloseOutputV2AbiType = {
  type: 'tuple',
  components: [
    { name: 'attestationId', type: 'bytes32' },
    { name: 'userIdentifier', type: 'uint256' },
    { name: 'nullifier', type: 'uint256' },
    { name: 'forbiddenCountriesListPacked', type: 'uint256[4]' },
    { name: 'issuingState', type: 'string' },
    { name: 'name', type: 'string[]' },
    { name: 'idNumber', type: 'string' },
    { name: 'nationality', type: 'string' },
    { name: 'dateOfBirth', type: 'string' },
    { name: 'gender', type: 'string' },
    { name: 'expiryDate', type: 'string' },
    { name: 'olderThan', type: 'uint256' },
    { name: 'ofac', type: 'bool[3]' },
  ],
} as const;

/** What a proof request may ask the human to disclose (the SelfApp disclosures, camel-cased). */
export type RequestedDisclosures = Partial<Disclosures> & { idNumber?: boolean };

/** The BN254 scalar field order: circuit outputs such as the nullifier are below it. */
export const BN254_SCALAR_FIELD = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

/**
 * Deterministic per (document, scope) like the circuit's nullifier: the same document gives the same
 * nullifier for one registry deployment and an unlinkable one for another.
 */
export function documentNullifier(document: MockDocument, scope: bigint): bigint {
  const digest = keccak256(
    encodeAbiParameters(
      [{ type: 'string' }, { type: 'string' }, { type: 'string' }, { type: 'string' }, { type: 'uint256' }],
      ['local-identity-hub:nullifier', document.documentType, document.issuingState.toUpperCase(), document.documentNumber, scope],
    ),
  );
  return BigInt(digest) % BN254_SCALAR_FIELD;
}

const pad2 = (n: number): string => String(n).padStart(2, '0');

/** "DD-MM-YY", the hub formatter's rendering of an MRZ date. */
export function formatHubDate(isoDate: string): string {
  const { year, month, day } = parseIsoDate(isoDate);
  return `${pad2(day)}-${pad2(month)}-${pad2(year % 100)}`;
}

/** "DD-MM-YYYY", the hub's rendering of an Aadhaar date of birth. */
export function formatHubDateFullYear(isoDate: string): string {
  const { year, month, day } = parseIsoDate(isoDate);
  return `${pad2(day)}-${pad2(month)}-${year}`;
}

export interface DisclosureOutputInput {
  document: MockDocument;
  requested: RequestedDisclosures;
  /** The registry's scope() (the nullifier is scoped to it). */
  scope: bigint;
  /** The proof's userId (the hub overwrites it from userContextData anyway). */
  userIdentifier: bigint;
  /** The proof's current date: the age is checked on this day. */
  now: Date;
}

/**
 * The disclosure the circuit would reveal. Choices (documented for the registry and tests):
 * - undisclosed fields are empty strings, and an undisclosed name is ["", ""];
 * - expiryDate is always disclosed, because the registry caps the proof's expiry by the document's;
 * - olderThan is the requested minimumAge when the holder is at least that old on `now`, else 0 (the hub
 *   then reverts InvalidOlderThan for an age-gated config);
 * - ofac flags (true = cleared) are revealed only when ofac is requested; the document-number check exists
 *   only for passports, so it is false for other documents;
 * - Aadhaar always carries nationality "IND" and expiryDate "UNAVAILABLE", as Hub V2 reports them.
 */
export function buildDisclosureOutput(input: DisclosureOutputInput): GenericDiscloseOutputV2 {
  const { document: doc, requested } = input;
  const isAadhaar = doc.documentType === 'aadhaar';
  const minimumAge = requested.minimumAge ?? 0;
  const oldEnough = minimumAge > 0 && ageOn(doc.dateOfBirth, input.now) >= minimumAge;
  const cleared = requested.ofac === true && doc.sanctioned !== true;
  const name = !requested.name ? ['', ''] : isAadhaar ? [`${doc.firstNames} ${doc.lastName}`.trim(), ''] : [doc.firstNames, doc.lastName];

  return {
    attestationId: attestationIdOf(doc.documentType),
    userIdentifier: input.userIdentifier,
    nullifier: documentNullifier(doc, input.scope),
    forbiddenCountriesListPacked: [0n, 0n, 0n, 0n],
    issuingState: requested.issuingState ? doc.issuingState : '',
    name,
    idNumber: requested.idNumber ? doc.documentNumber : '',
    nationality: isAadhaar ? 'IND' : requested.nationality ? doc.nationality : '',
    dateOfBirth: !requested.dateOfBirth ? '' : isAadhaar ? formatHubDateFullYear(doc.dateOfBirth) : formatHubDate(doc.dateOfBirth),
    gender: requested.gender ? doc.gender : '',
    expiryDate: isAadhaar ? 'UNAVAILABLE' : formatHubDate(doc.expiryDate),
    olderThan: oldEnough ? BigInt(minimumAge) : 0n,
    ofac: [cleared && doc.documentType === 'passport', cleared, cleared],
  };
}
