// Revocation of issued credentials: token status lists (draft-ietf-oauth-status-list), one bit per credential, signed
// with the service's key. Each credential gets the next index on the store port (an atomic counter: instances
// sharing the store never hand out one index twice); lists hold STATUS_LIST_SIZE entries, so a verifier decodes a few
// hundred bytes. The store also keeps, per agent, the indices of its live credentials and what they were issued
// on (provider, nullifier). Every registry event about an agent, heard through the query service's change feed
// in the follower poll that saw it, makes each instance look at that agent again: burned, without a proof, an
// expired proof, another provider or another human, and its credentials' bits are set. A network-wide change
// (a reorganisation) looks at every agent holding live credentials.
import { createHeaderAndPayload, StatusList } from '@sd-jwt/jwt-status-list';
import { CREDENTIAL_LIFETIME_S } from '../core/agent-credential.js';
import { statusListPath } from '../core/endpoints.js';
import { jwsSign } from '../core/jws-crypto.js';
import { NETWORK_NAMES, type NetworkName } from '../core/networks.js';
import type { Clock, KeyValueStore } from '../store/key-value-store.js';
import type { AgentQueryService } from './agent-queries.js';
import { agentKeyPrefix, answerKeys } from './answer-reuse.js';
import type { SigningKeys } from './signing-keys.js';

/** Entries per list. */
export const STATUS_LIST_SIZE = 4096;
/** How long a fetched list may be used (its Cache-Control max-age and its `ttl` claim). */
export const STATUS_LIST_MAX_AGE_S = 60;
/** A list token's own lifetime: a verifier holding an older one fetches again. */
const STATUS_TOKEN_LIFETIME_S = 3_600;
/** The media type of a status list token. */
export const STATUS_LIST_MEDIA_TYPE = 'application/statuslist+jwt';

const NEXT_INDEX = 'credential-status:next';
const listKey = (listId: number) => `credential-status:list:${listId}`;
const agentPrefix = (network: NetworkName) => `credential-status:agent:${network}:`;
const agentKey = (network: NetworkName, agentId: bigint) => `${agentPrefix(network)}${agentId}`;

/** What a credential was issued on: it stands while the agent still has this. */
export interface IssuedOn {
  provider: string;
  /** Decimal. */
  nullifier: string;
}

const AGENT_KEY_PREFIXES = NETWORK_NAMES.map(agentKeyPrefix);

/** The most indices an agent takes from the shared counter at once. */
const MAX_RUN = 256;

/**
 * An agent's live credentials, kept short whatever their number (each issue rewrites the record): what they were
 * issued on, once per distinct value, and the runs of indices the agent took, each [first index, size, indices used,
 * latest exp among them (unix seconds), position in `on`]. An agent takes one index for its first credential, and a
 * run twice the size of its last (up to MAX_RUN) each time the one it has is used up, so an agent asking for one
 * credential per request rewrites a few runs, not thousands of entries; a run's unused end is never handed out.
 * A run never crosses from one list to the next. An agent's indices lying together tells a verifier nothing the
 * credential's agent_address does not.
 */
interface AgentRecord {
  on: IssuedOn[];
  runs: Run[];
  /** The form of earlier versions: one [index, exp, position] per credential (read, never written). */
  entries?: [number, number, number][];
}

type Run = [first: number, size: number, used: number, exp: number, on: number];

interface IssuedEntry extends IssuedOn {
  index: number;
}

const runsOf = (record: AgentRecord | undefined): Run[] =>
  record?.runs ?? (record?.entries ?? []).map(([index, exp, on]): Run => [index, 1, 1, exp, on]);

const issuedEntries = (record: AgentRecord | undefined): IssuedEntry[] =>
  runsOf(record).flatMap(([first, , used, , on]) => Array.from({ length: used }, (_, i) => ({ index: first + i, ...(record?.on[on] as IssuedOn) })));

/** The record without its runs whose credentials have all expired, and without the `on` values no run uses. */
function liveRecord(record: AgentRecord | undefined, nowS: number): AgentRecord {
  const runs = runsOf(record).filter(([, , , exp]) => exp > nowS);
  const kept = (record?.on ?? []).filter((_, position) => runs.some((run) => run[4] === position));
  return { on: kept, runs: runs.map(([first, size, used, exp, on]): Run => [first, size, used, exp, kept.indexOf(record?.on[on] as IssuedOn)]) };
}

const positionOf = (record: AgentRecord, on: IssuedOn): number =>
  record.on.findIndex((held) => held.provider === on.provider && held.nullifier === on.nullifier);

export interface StatusReference {
  idx: number;
  uri: string;
}

/** Changed agents read one by one up to this many; beyond, the agents holding credentials are listed once. */
const READ_EACH_UP_TO = 16;

export interface CredentialStatusOptions {
  store: KeyValueStore;
  queries: AgentQueryService;
  signingKeys: SigningKeys;
  publicUrl: string;
  clock?: Clock;
  /** A check of an agent failed (its credentials were revoked then: failing closed costs the agent a new request). */
  onError?: (error: unknown) => void;
}

export class CredentialStatus {
  readonly #options: CredentialStatusOptions;
  readonly #clock: Clock;
  readonly #pending = new Set<Promise<void>>();
  /** The signed token of each list, with the revoked set and kid it was made from. */
  readonly #tokens = new Map<number, { revoked: string; kid: string; iat: number; token: string }>();
  #unsubscribe: (() => void) | undefined;
  /**
   * Keys (answer-reuse.ts) changed since the last look, as announced: a backfill announces thousands a second, nearly
   * all of agents without a credential, so they are only kept (not parsed or hashed) until looked at.
   */
  #changedKeys: string[] = [];

  constructor(options: CredentialStatusOptions) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
  }

  /** Follows the registry's changes (the query service's feed); returns nothing, stop() ends it. */
  start(): void {
    this.#unsubscribe ??= this.#options.queries.onChange((key) => this.#changed(key));
  }

  stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }

  /** Resolves once the checks started so far have set what they had to (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  /** An index for a credential of the agent's, recorded against it until the credential expires. */
  async allocate(network: NetworkName, agentId: bigint, on: IssuedOn, exp: number): Promise<StatusReference> {
    const { store, publicUrl } = this.#options;
    const key = agentKey(network, agentId);
    // every credential lives at most CREDENTIAL_LIFETIME_S from its issue, and this one is the latest
    const keepMs = (CREDENTIAL_LIFETIME_S + 60) * 1000;
    const nowS = Math.floor(this.#clock() / 1000);
    let index: number | undefined;
    let wanted = 1;
    // the usual case: a run of the agent's, issued on the same, has room
    await store.update<AgentRecord>(
      key,
      (current) => {
        const record = liveRecord(current, nowS);
        index = undefined;
        const position = positionOf(record, on);
        const run = position < 0 ? undefined : record.runs.findLast(([, size, used, , runOn]) => runOn === position && used < size);
        const last = record.runs.at(-1);
        wanted = last === undefined ? 1 : Math.min(MAX_RUN, last[1] * 2);
        if (run === undefined) return record.runs.length > 0 ? record : undefined;
        index = run[0] + run[2];
        run[2] += 1;
        run[3] = Math.max(run[3], exp);
        return record;
      },
      keepMs,
    );
    if (index === undefined) {
      // a new run from the shared counter (atomic: instances sharing the store never hand out one index twice), cut
      // at the end of the list it starts in
      let first = 0;
      let size = 0;
      await store.update<number>(NEXT_INDEX, (next = 0) => {
        first = next;
        size = Math.min(wanted, STATUS_LIST_SIZE - (next % STATUS_LIST_SIZE));
        return next + size;
      });
      await store.update<AgentRecord>(
        key,
        (current) => {
          const record = liveRecord(current, nowS);
          let position = positionOf(record, on);
          if (position < 0) position = record.on.push({ provider: on.provider, nullifier: on.nullifier }) - 1;
          record.runs.push([first, size, 0, exp, position]);
          // a credential asked for at the same time may have added a run first: the oldest with room is used first
          const run = record.runs.find(([, runSize, used, , runOn]) => runOn === position && used < runSize) as Run;
          index = run[0] + run[2];
          run[2] += 1;
          run[3] = Math.max(run[3], exp);
          return record;
        },
        keepMs,
      );
    }
    if (index === undefined) throw new Error('no status index was taken');
    const listId = Math.floor(index / STATUS_LIST_SIZE);
    return { idx: index % STATUS_LIST_SIZE, uri: `${publicUrl}${statusListPath(listId)}` };
  }

  /** The signed status list token of `listId`; undefined for a list no index was taken from yet. */
  async token(listId: number): Promise<string | undefined> {
    const { store, signingKeys, publicUrl } = this.#options;
    const next = (await store.get<number>(NEXT_INDEX)) ?? 0;
    if (!Number.isSafeInteger(listId) || listId < 0 || listId * STATUS_LIST_SIZE >= next) return undefined;
    const revokedList = (await store.get<number[]>(listKey(listId))) ?? [];
    const revoked = revokedList.join(',');
    const key = await signingKeys.current();
    const nowS = Math.floor(this.#clock() / 1000);
    const held = this.#tokens.get(listId);
    // the same bits under the same key: the token made before serves until half its life is gone
    if (held && held.revoked === revoked && held.kid === key.kid && nowS - held.iat < STATUS_TOKEN_LIFETIME_S / 2) return held.token;
    const list = new StatusList(new Array<number>(STATUS_LIST_SIZE).fill(0), 1);
    for (const idx of revokedList) list.setStatus(idx, 1);
    const { header, payload } = createHeaderAndPayload(
      list,
      { iss: publicUrl, sub: `${publicUrl}${statusListPath(listId)}`, iat: nowS, exp: nowS + STATUS_TOKEN_LIFETIME_S, ttl: STATUS_LIST_MAX_AGE_S },
      { alg: key.alg, typ: 'statuslist+jwt', kid: key.kid },
    );
    const signingInput = `${b64(header)}.${b64(payload)}`;
    const token = `${signingInput}.${jwsSign(key.alg, key.privateKey, signingInput)}`;
    this.#tokens.set(listId, { revoked, kid: key.kid, iat: nowS, token });
    return token;
  }

  /** Sets the bits of every live credential of the agent (a deregistration the service itself saw, tests). */
  async revokeAgent(network: NetworkName, agentId: bigint): Promise<void> {
    const entries = issuedEntries(await this.#options.store.get<AgentRecord>(agentKey(network, agentId)));
    if (entries.length > 0) await this.#revoke(entries);
  }

  #changed(key: string): void {
    // only an agent's change, or a network's (a reorganisation), can change what a credential was issued on; a human's
    // or a nullifier's comes with its agents'
    if (!AGENT_KEY_PREFIXES.some((prefix) => key.startsWith(prefix)) && !(NETWORK_NAMES as readonly string[]).includes(key)) return;
    // the follower delivers a range's changes in one tick: they are looked at together, right after it
    if (this.#changedKeys.length === 0) this.#track(Promise.resolve().then(() => this.#recheckChanged()));
    this.#changedKeys.push(key);
  }

  /**
   * The agents changed since the last look. A few (a live chain's block) are read one by one; many (a backfill's
   * window, thousands of agents nearly all without a credential) through one listing of the agents that hold one.
   * A network's own key (a reorganisation) looks at every agent of the network holding one.
   */
  async #recheckChanged(): Promise<void> {
    const keys = this.#changedKeys;
    this.#changedKeys = [];
    const checks = await Promise.all(
      NETWORK_NAMES.map(async (network) => {
        if (keys.includes(answerKeys.network(network))) return [this.#recheckNetwork(network)];
        const prefix = agentKeyPrefix(network);
        const changed = keys.filter((key) => key.startsWith(prefix));
        if (changed.length === 0) return [];
        if (changed.length <= READ_EACH_UP_TO) return [...new Set(changed)].map((key) => this.#recheck(network, BigInt(key.slice(prefix.length))));
        const holders = (await this.#options.store.keys(agentPrefix(network))).map((key) => key.slice(agentPrefix(network).length));
        if (holders.length === 0) return [];
        const changedSet = new Set(changed);
        return holders.filter((id) => changedSet.has(`${prefix}${id}`)).map((id) => this.#recheck(network, BigInt(id)));
      }),
    );
    for (const result of await Promise.allSettled(checks.flat())) {
      if (result.status === 'rejected') this.#options.onError?.(result.reason);
    }
  }

  #track(check: Promise<void>): void {
    const tracked = check.catch((error: unknown) => this.#options.onError?.(error)).finally(() => this.#pending.delete(tracked));
    this.#pending.add(tracked);
  }

  async #recheckNetwork(network: NetworkName): Promise<void> {
    const prefix = agentPrefix(network);
    const keys = await this.#options.store.keys(prefix);
    await Promise.all(keys.map((key) => this.#recheck(network, BigInt(key.slice(prefix.length)))));
  }

  /** Looks at the agent on the chain again, and revokes the credentials it no longer backs. */
  async #recheck(network: NetworkName, agentId: bigint): Promise<void> {
    const { store, queries } = this.#options;
    const entries = issuedEntries(await store.get<AgentRecord>(agentKey(network, agentId)));
    if (entries.length === 0) return;
    let stale: IssuedEntry[];
    try {
      const view = await queries.agentById(network, agentId);
      const nowS = this.#clock() / 1000;
      const backed = view?.hasHumanProof && view.isSelfProvider && view.isProofFresh && nowS < Number(view.proofExpiresAt);
      stale =
        view && backed
          ? entries.filter(
              (entry) => entry.provider.toLowerCase() !== view.proofProvider.toLowerCase() || entry.nullifier !== view.nullifier.toString(),
            )
          : entries;
    } catch (error) {
      await this.#revoke(entries);
      throw error;
    }
    await this.#revoke(stale);
  }

  async #revoke(entries: readonly IssuedEntry[]): Promise<void> {
    const byList = new Map<number, number[]>();
    for (const { index } of entries) {
      const listId = Math.floor(index / STATUS_LIST_SIZE);
      byList.set(listId, [...(byList.get(listId) ?? []), index % STATUS_LIST_SIZE]);
    }
    await Promise.all(
      [...byList].map(([listId, indices]) =>
        this.#options.store.update<number[]>(listKey(listId), (revoked = []) => {
          const all = new Set([...revoked, ...indices]);
          return all.size === revoked.length ? revoked : [...all].sort((a, b) => a - b);
        }),
      ),
    );
  }
}

const b64 = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');
