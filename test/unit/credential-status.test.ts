// Status list indices: an agent takes runs of indices (1, 2, 4, … up to 256) so its record stays short however many
// credentials it asks for; no index is handed out twice, also by two instances on one store; a run never crosses
// into the next list; a revocation sets the bit of every credential the agent was issued, and of no other; a record
// in the earlier form (one entry per credential) is still read.
import { getListFromStatusListJWT } from '@sd-jwt/jwt-status-list';
import { describe, expect, it } from 'vitest';
import type { AgentQueryService } from '../../src/services/agent-queries.js';
import { CredentialStatus, STATUS_LIST_SIZE, type StatusReference } from '../../src/services/credential-status.js';
import { ServiceSigningKeys } from '../../src/services/signing-keys.js';
import { MemoryStore } from '../../src/store/memory-store.js';

const PUBLIC_URL = 'https://registry.example';
const ON = { provider: '0x0000000000000000000000000000000000000001', nullifier: '7' };

function statusOn(store: MemoryStore, clock: () => number = Date.now) {
  // the query service is only reached by the change feed, which these tests do not start
  const queries = {} as AgentQueryService;
  const signingKeys = new ServiceSigningKeys({ store, source: { kind: 'store' }, refreshMs: 0 });
  return new CredentialStatus({ store, queries, signingKeys, publicUrl: PUBLIC_URL, clock });
}

const indexOf = (reference: StatusReference): number => {
  const listId = Number(reference.uri.slice(reference.uri.lastIndexOf('/') + 1));
  return listId * STATUS_LIST_SIZE + reference.idx;
};

async function revokedIn(status: CredentialStatus, listId: number): Promise<number[]> {
  const token = await status.token(listId);
  if (token === undefined) return [];
  const list = getListFromStatusListJWT(token);
  return Array.from({ length: STATUS_LIST_SIZE }, (_, i) => i).filter((i) => list.getStatus(i) !== 0);
}

describe('credential status indices', () => {
  it('an agent takes runs of growing size, and its record stays a few runs long', async () => {
    const store = new MemoryStore();
    const status = statusOn(store);
    const exp = Math.floor(Date.now() / 1000) + 900;
    const indices: number[] = [];
    for (let i = 0; i < 600; i++) indices.push(indexOf(await status.allocate('testnet', 1n, ON, exp)));
    // one agent alone: its indices follow each other
    expect(indices).toEqual(Array.from({ length: 600 }, (_, i) => i));
    const record = await store.get<{ runs: number[][] }>('credential-status:agent:testnet:1');
    expect(record?.runs.map(([, size]) => size)).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 256]);
    // another agent starts after the end of the first one's last run
    expect(indexOf(await status.allocate('testnet', 2n, ON, exp))).toBe(767);
  });

  it('never hands out an index twice, from two instances on one store, and no run crosses a list', async () => {
    const store = new MemoryStore();
    const [a, b] = [statusOn(store), statusOn(store)];
    const exp = Math.floor(Date.now() / 1000) + 900;
    const taken: StatusReference[] = [];
    // waves of requests at once: two instances, seven agents
    for (let wave = 0; wave < 200; wave++) {
      const agent = (i: number) => BigInt(1 + ((wave + i) % 7));
      taken.push(...(await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? a : b).allocate('testnet', agent(i), ON, exp)))));
    }
    const indices = taken.map(indexOf);
    expect(new Set(indices).size).toBe(indices.length);
    for (const reference of taken) expect(reference.idx).toBeLessThan(STATUS_LIST_SIZE);
    // runs taken at once are used up before the counter is drawn on again: little of the index space is left unused
    expect(Math.max(...indices)).toBeLessThan(2 * indices.length);
  });

  it("a revocation sets the bits of all of the agent's credentials and of no other's", async () => {
    const store = new MemoryStore();
    const status = statusOn(store);
    const exp = Math.floor(Date.now() / 1000) + 900;
    const mine: number[] = [];
    const theirs: number[] = [];
    for (let i = 0; i < 40; i++) {
      mine.push(indexOf(await status.allocate('testnet', 1n, ON, exp)));
      theirs.push(indexOf(await status.allocate('testnet', 2n, ON, exp)));
    }
    expect(await revokedIn(status, 0)).toEqual([]);
    await status.revokeAgent('testnet', 1n);
    expect(await revokedIn(status, 0)).toEqual([...mine].sort((x, y) => x - y));
    expect(theirs.some((index) => mine.includes(index))).toBe(false);
  });

  it('forgets runs whose credentials have all expired, and starts again with one index', async () => {
    const store = new MemoryStore();
    let now = Date.now();
    const status = statusOn(store, () => now);
    const nowS = () => Math.floor(now / 1000);
    for (let i = 0; i < 7; i++) await status.allocate('testnet', 1n, ON, nowS() + 60);
    now += 120_000;
    await status.allocate('testnet', 1n, ON, nowS() + 60);
    const record = await store.get<{ runs: number[][] }>('credential-status:agent:testnet:1');
    expect(record?.runs.map(([, size, used]) => [size, used])).toEqual([[1, 1]]);
  });

  it('reads a record of the earlier form, one entry per credential', async () => {
    const store = new MemoryStore();
    const status = statusOn(store);
    const exp = Math.floor(Date.now() / 1000) + 900;
    await store.set('credential-status:next', 12);
    await store.set('credential-status:agent:testnet:1', {
      on: [ON],
      entries: [
        [3, exp, 0],
        [9, exp, 0],
      ],
    });
    await status.revokeAgent('testnet', 1n);
    expect(await revokedIn(status, 0)).toEqual([3, 9]);
    expect(indexOf(await status.allocate('testnet', 1n, ON, exp))).toBe(12);
  });
});
