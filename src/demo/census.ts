// /api/demo/census: verified agents contribute what their human disclosed on chain (one entry per agent, the
// latest wins), and read the aggregate. Entries live on the store port, one document per network, updated
// atomically, so they survive restarts and are shared by instances.
//
// Only live agents count: each read checks every entry's agent against the registry (through the agent cache, which
// the registry's events invalidate: warm, no RPC; cold, one batched round trip) and drops the entries of agents
// burned since. Dropping entries when a burn event arrives instead would miss every burn no instance heard: one
// while the service was down, one on a chain followed by another instance, one a restored chain state undid. The
// chain is the source of truth, and the read asks it.
import type { NetworkName } from '../core/networks.js';
import type { AgentQueryService } from '../services/agent-queries.js';
import type { SignedRequest, SignedRequestVerifier } from '../services/signed-requests.js';
import type { KeyValueStore } from '../store/key-value-store.js';

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
type Entries = Record<string, CensusEntry>;

export class DemoCensusService {
  constructor(
    private readonly verifier: SignedRequestVerifier,
    private readonly store: KeyValueStore,
    private readonly queries: AgentQueryService,
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
    const entries = await this.store.update<Entries>(keyOf(network), (current = {}) => ({
      ...current,
      [agent.agentAddress.toLowerCase()]: entry,
    }));
    return { recorded: true, totalAgents: (await this.#live(network, entries ?? {})).length, yourEntry: entry };
  }

  /** The aggregate of the live agents' entries, for a verified agent. */
  async summary(request: SignedRequest, network: NetworkName): Promise<CensusSummary> {
    await this.verifier.verify(request, { network });
    const entries = await this.#live(network, (await this.store.get<Entries>(keyOf(network))) ?? {});
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

  /** The entries whose agent is registered now; those of burned agents leave the document. */
  async #live(network: NetworkName, entries: Entries): Promise<CensusEntry[]> {
    const checked = await Promise.all(
      Object.entries(entries).map(async ([key, entry]) => ({
        key,
        entry,
        live: await this.queries.isRegistered(network, BigInt(entry.agentId), entry.agentAddress),
      })),
    );
    const burned = checked.filter(({ live }) => !live);
    if (burned.length > 0) {
      // only the very entries found burned: one contributed again meanwhile (a new agent id) stays
      await this.store.update<Entries>(keyOf(network), (current) => {
        if (!current) return current;
        const kept = { ...current };
        for (const { key, entry } of burned) if (kept[key]?.agentId === entry.agentId) delete kept[key];
        return kept;
      });
    }
    return checked.filter(({ live }) => live).map(({ entry }) => entry);
  }
}
