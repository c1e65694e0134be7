// /api/demo/census: verified agents contribute what their human disclosed on chain (one entry per agent, the
// latest wins), and read the aggregate. Entries live on the store port, one document per network, updated
// atomically, so they survive restarts and are shared by instances.
import type { NetworkName } from '../../core/networks.js';
import type { KeyValueStore } from '../../store/key-value-store.js';
import type { SignedRequest, SignedRequestVerifier } from '../signed-requests.js';

export interface CensusEntry {
  agentAddress: string;
  agentId: string;
  /** Three-letter code; empty when not disclosed. */
  nationality: string;
  olderThan: number;
  ofac: [boolean, boolean, boolean];
  /** When it was contributed, unix ms. */
  timestamp: number;
}

export interface CensusContribution {
  recorded: true;
  totalAgents: number;
  yourEntry: CensusEntry;
}

export interface CensusSummary {
  /** The three most frequent nationalities. */
  topCountries: { country: string; count: number }[];
  verifiedOver18: number;
  verifiedOver21: number;
  /** Entries with at least one OFAC check passed. */
  ofacClear: number;
  totalAgents: number;
}

const keyOf = (network: NetworkName) => `demo:census:${network}`;

export class DemoCensusService {
  constructor(
    private readonly verifier: SignedRequestVerifier,
    private readonly store: KeyValueStore,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The signing agent's credentials join the census (again: its entry is replaced). */
  async contribute(request: SignedRequest, network: NetworkName): Promise<CensusContribution> {
    const agent = await this.verifier.verify(request, { network });
    const entry: CensusEntry = {
      agentAddress: agent.agentAddress,
      agentId: agent.agentId.toString(),
      nationality: agent.credentials.nationality.trim(),
      olderThan: agent.credentials.olderThan,
      ofac: agent.credentials.ofac,
      timestamp: this.clock(),
    };
    const entries = await this.store.update<Record<string, CensusEntry>>(keyOf(network), (current = {}) => ({
      ...current,
      [agent.agentAddress.toLowerCase()]: entry,
    }));
    return { recorded: true, totalAgents: Object.keys(entries ?? {}).length, yourEntry: entry };
  }

  /** The aggregate, for a verified agent. */
  async summary(request: SignedRequest, network: NetworkName): Promise<CensusSummary> {
    await this.verifier.verify(request, { network });
    const entries = Object.values((await this.store.get<Record<string, CensusEntry>>(keyOf(network))) ?? {});
    const countries = new Map<string, number>();
    for (const { nationality } of entries) if (nationality !== '') countries.set(nationality, (countries.get(nationality) ?? 0) + 1);
    return {
      topCountries: [...countries]
        .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
        .slice(0, 3)
        .map(([country, count]) => ({ country, count })),
      verifiedOver18: entries.filter((e) => e.olderThan >= 18).length,
      verifiedOver21: entries.filter((e) => e.olderThan >= 21).length,
      ofacClear: entries.filter((e) => e.ofac.some(Boolean)).length,
      totalAgents: entries.length,
    };
  }
}
