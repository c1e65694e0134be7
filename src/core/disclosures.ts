// What a human is asked to disclose, and which of the registry's six hub configs that selects.
// The digit written into userDefinedData picks the config; the hub then checks the proof against it, so the
// minimumAge/ofac the identity app is asked for must match the digit (onchain-facts 1.6, 7.6).
import { encodeAbiParameters, type Hex, sha256 } from 'viem';
import { badRequest } from './errors.js';

export type MinimumAge = 0 | 18 | 21;
export type ConfigIndex = 0 | 1 | 2 | 3 | 4 | 5;

export const MINIMUM_AGES: readonly MinimumAge[] = [0, 18, 21];
export const CONFIG_INDEXES: readonly ConfigIndex[] = [0, 1, 2, 3, 4, 5];

/** The disclosures object of register, refresh and deregister requests. Only minimumAge and ofac pick the config. */
export interface Disclosures {
  minimumAge: MinimumAge;
  ofac: boolean;
  nationality?: boolean;
  name?: boolean;
  dateOfBirth?: boolean;
  gender?: boolean;
  issuingState?: boolean;
}

/** Disclosures as a caller asks for them: every field optional, minimumAge any number until checked. */
export interface DisclosureRequest {
  minimumAge?: number;
  ofac?: boolean;
  nationality?: boolean;
  name?: boolean;
}

/** What a session asks the human to disclose: the caller's request checked, absent flags off. */
export interface RequestedDisclosures {
  minimumAge: MinimumAge;
  ofac: boolean;
  nationality: boolean;
  name: boolean;
}

/** Checks a caller's disclosures (400 for a minimumAge other than 0, 18 or 21) and fills in the defaults. */
export function requestedDisclosures(d: DisclosureRequest = {}): RequestedDisclosures {
  const minimumAge = d.minimumAge ?? 0;
  if (!(MINIMUM_AGES as readonly number[]).includes(minimumAge)) throw badRequest('disclosures.minimumAge must be 0, 18 or 21');
  return { minimumAge: minimumAge as MinimumAge, ofac: d.ofac ?? false, nationality: d.nationality ?? false, name: d.name ?? false };
}

/** (18,ofac)->4, (21,ofac)->5, 18->1, 21->2, ofac->3, else 0. */
export function configIndexFor(d: Pick<Disclosures, 'minimumAge' | 'ofac'>): ConfigIndex {
  if (d.ofac) return d.minimumAge === 18 ? 4 : d.minimumAge === 21 ? 5 : 3;
  return d.minimumAge === 18 ? 1 : d.minimumAge === 21 ? 2 : 0;
}

/** The inverse of configIndexFor: the minimum disclosures a config demands (used to rebuild a refresh request). */
export function disclosuresForConfigIndex(index: ConfigIndex): Disclosures {
  const ofac = index >= 3;
  const ages: readonly MinimumAge[] = [0, 18, 21];
  return { minimumAge: ages[index % 3] ?? 0, ofac };
}

export function isConfigIndex(value: unknown): value is ConfigIndex {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 5;
}

/** Hub V2's VerificationConfigV2, shaped as viem encodes and decodes the tuple. */
export interface VerificationConfigV2 {
  olderThanEnabled: boolean;
  olderThan: bigint;
  forbiddenCountriesEnabled: boolean;
  forbiddenCountriesListPacked: readonly [bigint, bigint, bigint, bigint];
  ofacEnabled: readonly [boolean, boolean, boolean];
}

export const verificationConfigV2AbiType = {
  type: 'tuple',
  components: [
    { name: 'olderThanEnabled', type: 'bool' },
    { name: 'olderThan', type: 'uint256' },
    { name: 'forbiddenCountriesEnabled', type: 'bool' },
    { name: 'forbiddenCountriesListPacked', type: 'uint256[4]' },
    { name: 'ofacEnabled', type: 'bool[3]' },
  ],
} as const;

/** Self's "unformatted" config: age check on iff minimumAge > 0, no forbidden countries, all three OFAC checks alike. */
export function verificationConfigFor(d: Pick<Disclosures, 'minimumAge' | 'ofac'>): VerificationConfigV2 {
  return {
    olderThanEnabled: d.minimumAge > 0,
    olderThan: BigInt(d.minimumAge),
    forbiddenCountriesEnabled: false,
    forbiddenCountriesListPacked: [0n, 0n, 0n, 0n],
    ofacEnabled: [d.ofac, d.ofac, d.ofac],
  };
}

/** The six configs the registry registers on the hub, by config index. */
export const VERIFICATION_CONFIGS: readonly VerificationConfigV2[] = CONFIG_INDEXES.map((i) => verificationConfigFor(disclosuresForConfigIndex(i)));

/** configId = sha256(abi.encode(config)), as the hub content-addresses its configs. */
export function verificationConfigId(config: VerificationConfigV2): Hex {
  return sha256(encodeAbiParameters([verificationConfigV2AbiType], [config]));
}

/** The six config ids by index (equal to the deployed registry's configIds(i); onchain-facts 1.6). */
export const VERIFICATION_CONFIG_IDS: readonly Hex[] = VERIFICATION_CONFIGS.map(verificationConfigId);
