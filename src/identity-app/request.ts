// A proof request as the identity app receives it: the fields of the SelfApp object behind a deep link.
import { getAddress, isAddress, type Address } from 'viem';
import type { MinimumAge } from '../core/disclosures.js';
import type { RequestedDisclosures } from './disclosure-output.js';

export interface ProofRequest {
  /** The verification root the proof is for (SelfApp.endpoint). */
  registry: Address;
  chainId: number;
  /** SelfApp.scope. Carried for display; the proof is made for the registry's on-chain scope(). */
  scopeSeed: string;
  /** SelfApp.userId: who the proof is for (becomes the output's userIdentifier). */
  userId: Address;
  userDefinedData: string;
  disclosures: RequestedDisclosures;
}

/** The SelfApp fields the identity app reads (reference-service-facts 3.1). */
export interface SelfAppFields {
  endpoint: string;
  chainID: number;
  scope: string;
  /** 40 hex chars, with or without 0x. */
  userId: string;
  userDefinedData: string;
  disclosures?: Record<string, unknown>;
}

const AGES: readonly number[] = [0, 18, 21];

/** Maps SelfApp.disclosures (snake_case keys, minimumAge only when > 0) to the app's requested disclosures. */
export function requestedDisclosuresFromSelfApp(disclosures: Record<string, unknown> = {}): RequestedDisclosures {
  const minimumAge = Number(disclosures['minimumAge'] ?? 0);
  if (!AGES.includes(minimumAge)) throw new Error(`minimumAge must be 0, 18 or 21, got ${String(disclosures['minimumAge'])}`);
  const flag = (key: string): boolean => disclosures[key] === true;
  return {
    minimumAge: minimumAge as MinimumAge,
    ofac: flag('ofac'),
    nationality: flag('nationality'),
    name: flag('name'),
    dateOfBirth: flag('date_of_birth'),
    gender: flag('gender'),
    issuingState: flag('issuing_state'),
    idNumber: flag('passport_number') || flag('id_number'),
  };
}

export function proofRequestFromSelfApp(app: SelfAppFields): ProofRequest {
  const userId = app.userId.startsWith('0x') ? app.userId : `0x${app.userId}`;
  if (!isAddress(app.endpoint, { strict: false })) throw new Error(`SelfApp.endpoint is not an address: ${app.endpoint}`);
  if (!isAddress(userId, { strict: false })) throw new Error(`SelfApp.userId is not an address: ${app.userId}`);
  return {
    registry: getAddress(app.endpoint),
    chainId: Number(app.chainID),
    scopeSeed: app.scope,
    userId: getAddress(userId),
    userDefinedData: app.userDefinedData,
    disclosures: requestedDisclosuresFromSelfApp(app.disclosures),
  };
}

/** Reads the `selfApp` query parameter (URL-encoded JSON) of a deep link. */
export function proofRequestFromDeepLink(deepLink: string): ProofRequest {
  const encoded = new URL(deepLink).searchParams.get('selfApp');
  if (!encoded) throw new Error('deep link has no selfApp parameter');
  return proofRequestFromSelfApp(JSON.parse(encoded) as SelfAppFields);
}
