// A proof request as the identity app receives it: the fields of the SelfApp object behind a deep link.
import { type Address, getAddress, isAddress } from 'viem';
import { selfAppFromDeepLink } from '../core/deep-link.js';
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
  if (typeof app !== 'object' || app === null) throw new Error('SelfApp is not an object');
  if (typeof app.endpoint !== 'string' || !isAddress(app.endpoint, { strict: false })) {
    throw new Error(`SelfApp.endpoint is not an address: ${String(app.endpoint)}`);
  }
  const chainId = Number(app.chainID);
  if (!Number.isSafeInteger(chainId) || chainId <= 0) throw new Error(`SelfApp.chainID is not a chain id: ${String(app.chainID)}`);
  if (typeof app.userId !== 'string') throw new Error('SelfApp.userId is missing');
  const userId = app.userId.startsWith('0x') ? app.userId : `0x${app.userId}`;
  if (!isAddress(userId, { strict: false })) throw new Error(`SelfApp.userId is not an address: ${app.userId}`);
  if (typeof app.userDefinedData !== 'string') throw new Error('SelfApp.userDefinedData is missing');
  return {
    registry: getAddress(app.endpoint),
    chainId,
    scopeSeed: typeof app.scope === 'string' ? app.scope : '',
    userId: getAddress(userId),
    userDefinedData: app.userDefinedData,
    disclosures: requestedDisclosuresFromSelfApp(app.disclosures ?? {}),
  };
}

/** The proof request behind a deep link (core/deep-link.ts reads the link's SelfApp). */
export function proofRequestFromDeepLink(deepLink: string): ProofRequest {
  const app = selfAppFromDeepLink(deepLink);
  return proofRequestFromSelfApp({ ...app, disclosures: { ...app.disclosures } });
}
