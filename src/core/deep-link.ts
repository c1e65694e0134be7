// The deep link a human opens in the identity app: `<scheme>://verify?scope=<scope>&selfApp=<JSON>`. The
// SelfApp object carries everything the app needs (Self's field names, so a Self-style app reads it as is):
// the registry (endpoint) and chain, who the proof is for (userId), the userDefinedData, the requested
// disclosures, and where to report the outcome (deeplinkCallback).
import { type Address, getAddress } from 'viem';
import { chainIdOf, type NetworkName } from './networks.js';

export const DEFAULT_DEEP_LINK_SCHEME = 'selfapp';
export const SCOPE_SEED = 'self-agent-id';

export interface RequestedDisclosureFlags {
  minimumAge: 0 | 18 | 21;
  ofac: boolean;
  nationality?: boolean;
  name?: boolean;
}

/** SelfApp.disclosures: flags only when requested, minimumAge only when above 0 (as Self's builder emits). */
export interface SelfAppDisclosures {
  minimumAge?: 18 | 21;
  ofac?: true;
  nationality?: true;
  name?: true;
}

export interface SelfApp {
  version: 2;
  sessionId: string;
  appName: string;
  scope: string;
  /** The registry: the contract the proof is verified for. */
  endpoint: Address;
  endpointType: 'celo' | 'staging_celo';
  chainID: number;
  /** 40 lowercase hex characters without 0x, as Self's builder stores a hex userId. */
  userId: string;
  userIdType: 'hex';
  userDefinedData: string;
  disclosures: SelfAppDisclosures;
  /** Where the identity app reports the outcome (POST, JSON). */
  deeplinkCallback: string;
  devMode: boolean;
}

export interface SelfAppInput {
  sessionId: string;
  appName: string;
  network: NetworkName;
  registry: Address;
  userId: Address;
  userDefinedData: string;
  disclosures: RequestedDisclosureFlags;
  callbackUrl: string;
}

export function buildSelfApp(input: SelfAppInput): SelfApp {
  const { disclosures } = input;
  return {
    version: 2,
    sessionId: input.sessionId,
    appName: input.appName,
    scope: SCOPE_SEED,
    endpoint: getAddress(input.registry),
    endpointType: input.network === 'mainnet' ? 'celo' : 'staging_celo',
    chainID: chainIdOf(input.network),
    userId: input.userId.slice(2).toLowerCase(),
    userIdType: 'hex',
    userDefinedData: input.userDefinedData,
    disclosures: {
      ...(disclosures.minimumAge > 0 ? { minimumAge: disclosures.minimumAge as 18 | 21 } : {}),
      ...(disclosures.ofac ? { ofac: true } : {}),
      ...(disclosures.nationality ? { nationality: true } : {}),
      ...(disclosures.name ? { name: true } : {}),
    },
    deeplinkCallback: input.callbackUrl,
    devMode: input.network === 'testnet',
  };
}

export function deepLinkFor(app: SelfApp, scheme: string = DEFAULT_DEEP_LINK_SCHEME): string {
  return `${scheme}://verify?scope=${encodeURIComponent(app.scope)}&selfApp=${encodeURIComponent(JSON.stringify(app))}`;
}

/** The SelfApp object inside a deep link; throws on anything that is not one of ours. */
export function selfAppFromDeepLink(deepLink: string): SelfApp {
  let url: URL;
  try {
    url = new URL(deepLink);
  } catch {
    throw new Error('not a deep link: expected <scheme>://verify?scope=...&selfApp=...');
  }
  const encoded = url.searchParams.get('selfApp');
  if (!encoded) throw new Error('deep link has no selfApp parameter');
  return JSON.parse(encoded) as SelfApp;
}
