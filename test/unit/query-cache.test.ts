// The cache rules of the public queries without a chain: what each registry log invalidates, that a read older
// than the log follower's progress is never stored, and the owner/guardian index built from logs.
import { type Address, encodeAbiParameters, encodeEventTopics, type Hex, pad } from 'viem';
import { describe, expect, it } from 'vitest';
import { decodedRange, decodeRegistryLog as logEffect } from '../../src/chain/actions/registry-logs.js';
import type { AgentLens, AgentView, AtBlock } from '../../src/chain/agent-lens.js';
import { type LogSubscriber, REORG_WINDOW, type RegistryEventFollower } from '../../src/chain/registry-events.js';
import { agentRegistryAbi } from '../../src/contracts/artifacts/index.js';
import { proofTypeOf, strengthLabelOf } from '../../src/core/proof-type.js';
import { Metrics } from '../../src/metrics.js';
import { AgentCache } from '../../src/services/agent-cache.js';
import { temporaryDatabase } from '../../src/services/disk-value-table.js';
import { bucketEntries, encodeBucket, HumanAgentIndex } from '../../src/services/human-agent-index.js';
import { seededRandom } from '../support/seeded-random.js';

type EventName = Parameters<typeof encodeEventTopics<typeof agentRegistryAbi>>[0]['eventName'];

function log(eventName: EventName, args: Record<string, unknown>, data: Hex = '0x'): { topics: Hex[]; data: Hex } {
  const topics = encodeEventTopics({ abi: agentRegistryAbi, eventName, args } as Parameters<typeof encodeEventTopics>[0]) as Hex[];
  return { topics, data };
}

const nullifierData = (nullifier: bigint, strength?: number): Hex =>
  strength === undefined
    ? encodeAbiParameters([{ type: 'uint256' }], [nullifier])
    : encodeAbiParameters([{ type: 'uint256' }, { type: 'uint8' }], [nullifier, strength]);

const A: Address = '0x1111111111111111111111111111111111111111';
const B: Address = '0x2222222222222222222222222222222222222222';
const ZERO: Address = '0x0000000000000000000000000000000000000000';

describe('proof-type labels', () => {
  it('label the score as the interface says', () => {
    expect([100, 101, 99, 80, 79, 60, 59, 40, 39, 0].map(proofTypeOf)).toEqual([
      'passport',
      'passport',
      'kyc',
      'kyc',
      'govt_id',
      'govt_id',
      'liveness',
      'liveness',
      'unknown',
      'unknown',
    ]);
    expect(strengthLabelOf(false, 100)).toBe('None');
    expect(strengthLabelOf(true, 0)).toBe('unknown');
  });
});

describe('decodeRegistryLog', () => {
  it('names the agent of per-agent and ERC-721 events', () => {
    expect(logEffect(log('AgentMetadataUpdated', { agentId: 7n }))).toEqual({ kind: 'agent', agentId: 7n });
    expect(logEffect(log('GuardianSet', { agentId: 8n, guardian: A }))).toEqual({ kind: 'agent', agentId: 8n, guardian: A });
    expect(logEffect(log('Transfer', { from: ZERO, to: A, tokenId: 9n }))).toEqual({ kind: 'agent', agentId: 9n, owner: A });
    expect(logEffect(log('Transfer', { from: A, to: ZERO, tokenId: 9n }))).toEqual({ kind: 'agent', agentId: 9n, owner: ZERO });
    expect(logEffect(log('Approval', { owner: A, approved: B, tokenId: 9n }))).toEqual({ kind: 'agent', agentId: 9n });
    expect(logEffect(log('HumanProofRefreshed', { agentId: 3n }, '0x'))).toEqual({ kind: 'agent', agentId: 3n });
  });

  it('carries the nullifier of registrations and revocations (their human agent count changes)', () => {
    expect(logEffect(log('AgentRegisteredWithHumanProof', { agentId: 4n, proofProvider: A }, nullifierData(99n, 100)))).toEqual({
      kind: 'agent',
      agentId: 4n,
      nullifier: 99n,
      revoked: false,
    });
    expect(logEffect(log('HumanProofRevoked', { agentId: 4n }, nullifierData(99n)))).toEqual({
      kind: 'agent',
      agentId: 4n,
      nullifier: 99n,
      revoked: true,
    });
  });

  it('ignores settings that no answer shows, and drops everything for provider changes and unknown events', () => {
    expect(logEffect(log('NullifierIdentified', { nullifier: 5n }, nullifierData(1n)))).toEqual({ kind: 'none' });
    expect(logEffect(log('MaxAgentsPerHumanUpdated', {}, nullifierData(2n)))).toEqual({ kind: 'none' });
    expect(logEffect(log('ProofProviderRemoved', { provider: A }))).toEqual({ kind: 'all' });
    expect(logEffect({ topics: [pad('0x1234')], data: '0x' })).toEqual({ kind: 'all' });
  });

  it('decodes a delivered (frozen) range once for all its readers, and any other array as it is now', () => {
    const range = Object.freeze([log('Transfer', { from: ZERO, to: A, tokenId: 1n }), log('GuardianSet', { agentId: 1n, guardian: B })]);
    const first = decodedRange(range);
    expect(first).toEqual([
      { kind: 'agent', agentId: 1n, owner: A.toLowerCase() },
      { kind: 'agent', agentId: 1n, guardian: B.toLowerCase() },
    ]);
    expect(decodedRange(range)).toBe(first);
    // an array that can change is decoded each time: what it holds now
    const reused = [log('Transfer', { from: ZERO, to: A, tokenId: 2n })];
    expect(decodedRange(reused)).toEqual([{ kind: 'agent', agentId: 2n, owner: A.toLowerCase() }]);
    reused[0] = log('Transfer', { from: ZERO, to: B, tokenId: 3n });
    expect(decodedRange(reused)).toEqual([{ kind: 'agent', agentId: 3n, owner: B.toLowerCase() }]);
  });
});

/** A follower whose progress the test sets, and whose subscribers it calls. */
function fakeFollower() {
  const subscribers: LogSubscriber[] = [];
  const follower = {
    processedBlock: 10n,
    live: true,
    isLive(): boolean {
      return this.live;
    },
    subscribe(subscriber: LogSubscriber) {
      subscribers.push(subscriber);
      return () => undefined;
    },
    addCheck() {
      return () => undefined;
    },
    deliver(logs: { topics: Hex[]; data: Hex }[], toBlock: bigint) {
      for (const s of subscribers) s(logs as never, toBlock, toBlock);
      this.processedBlock = toBlock;
    },
  };
  return follower;
}

function view(agentId: bigint, nullifier: bigint): AgentView {
  return { agentId, exists: true, nullifier } as AgentView;
}

function fakeLens(blockOf: () => bigint) {
  const reads: bigint[] = [];
  const lens = {
    async agent(agentId: bigint): Promise<AtBlock<AgentView>> {
      reads.push(agentId);
      return { blockNumber: blockOf(), value: view(agentId, agentId < 100n ? 42n : 0n) };
    },
    async agentsForNullifier(): Promise<AtBlock<readonly bigint[]>> {
      return { blockNumber: blockOf(), value: [1n] };
    },
  };
  return { lens: lens as unknown as AgentLens, reads };
}

describe('AgentCache', () => {
  const setUp = (readBlock: { value: bigint }) => {
    const follower = fakeFollower();
    const { lens, reads } = fakeLens(() => readBlock.value);
    const cache = new AgentCache({
      network: 'testnet',
      lens,
      blockTimestamp: async () => 0,
      agentIdOf: async () => 0n,
      follower: follower as unknown as RegistryEventFollower,
      metrics: new Metrics(),
    });
    return { follower, cache, reads };
  };

  it("stores a read made at or after the follower's last processed block, and serves it until an event", async () => {
    const block = { value: 10n };
    const { follower, cache, reads } = setUp(block);
    await cache.agent(1n);
    await cache.agent(1n);
    expect(reads).toEqual([1n]);
    follower.deliver([log('AgentMetadataUpdated', { agentId: 2n })], 11n); // another agent
    await cache.agent(1n);
    expect(reads).toEqual([1n]);
    follower.deliver([log('AgentMetadataUpdated', { agentId: 1n })], 12n);
    block.value = 12n;
    await cache.agent(1n);
    expect(reads).toEqual([1n, 1n]);
  });

  it("never stores a read older than the follower's progress (it may miss an event already applied)", async () => {
    const block = { value: 9n };
    const { cache, reads } = setUp(block);
    await cache.agent(1n);
    await cache.agent(1n);
    expect(reads).toEqual([1n, 1n]);
  });

  it('drops a read that an event overtook while it was in flight', async () => {
    const block = { value: 10n };
    const { follower, cache, reads } = setUp(block);
    const first = cache.agent(1n);
    follower.deliver([log('AgentCredentialsStored', { agentId: 1n })], 10n);
    await first;
    await cache.agent(1n);
    expect(reads).toEqual([1n, 1n]);
  });

  it('a registration or revocation drops every cached agent of that nullifier, and its list', async () => {
    const block = { value: 10n };
    const { follower, cache, reads } = setUp(block);
    await Promise.all([cache.agent(1n), cache.agent(2n), cache.agent(500n), cache.agentsForNullifier(42n)]);
    expect(cache.size).toMatchObject({ agents: 3, nullifierLists: 1 });
    follower.deliver([log('AgentRegisteredWithHumanProof', { agentId: 3n, proofProvider: A }, nullifierData(42n, 100))], 11n);
    expect(cache.size).toMatchObject({ agents: 1, nullifierLists: 0 });
    block.value = 11n;
    await cache.agent(500n);
    expect(reads).toEqual([1n, 2n, 500n]);
  });

  it('is bypassed while the follower is not live', async () => {
    const block = { value: 10n };
    const { follower, cache, reads } = setUp(block);
    follower.live = false;
    await cache.agent(1n);
    await cache.agent(1n);
    expect(reads).toEqual([1n, 1n]);
    expect(cache.size.agents).toBe(0);
  });

  it('shares one read between concurrent misses', async () => {
    const { cache, reads } = setUp({ value: 10n });
    await Promise.all([cache.agent(1n), cache.agent(1n), cache.agent(1n)]);
    expect(reads).toEqual([1n]);
  });
});

describe('HumanAgentIndex', () => {
  it('lists owned and guarded agents in id order; burns remove both', () => {
    const index = new HumanAgentIndex();
    index.apply([
      log('Transfer', { from: ZERO, to: A, tokenId: 5n }),
      log('Transfer', { from: ZERO, to: B, tokenId: 2n }),
      log('GuardianSet', { agentId: 2n, guardian: A }),
      log('Transfer', { from: ZERO, to: A, tokenId: 1n }),
    ]);
    expect(index.agentsOf(A)).toEqual([1n, 2n, 5n]);
    expect(index.agentsOf(B)).toEqual([2n]);
    expect(index.agentsOf(A.toLowerCase() as Address)).toEqual([1n, 2n, 5n]);
    index.apply([log('Transfer', { from: B, to: ZERO, tokenId: 2n }), log('Transfer', { from: A, to: ZERO, tokenId: 5n })]);
    expect(index.agentsOf(A)).toEqual([1n]);
    expect(index.agentsOf(B)).toEqual([]);
  });

  it('undoes the changes of blocks a reorganisation dropped, newest first, within the reorganisation window', () => {
    const index = new HumanAgentIndex();
    const at = (blockNumber: bigint, entry: { topics: Hex[]; data: Hex }) => ({ ...entry, blockNumber });
    index.apply([at(10n, log('Transfer', { from: ZERO, to: A, tokenId: 1n }))], 10n);
    index.apply(
      [
        at(11n, log('GuardianSet', { agentId: 1n, guardian: B })),
        at(12n, log('Transfer', { from: A, to: B, tokenId: 1n })),
        at(12n, log('Transfer', { from: ZERO, to: A, tokenId: 2n })),
        at(13n, log('Transfer', { from: B, to: ZERO, tokenId: 1n })),
      ],
      13n,
    );
    expect(index.agentsOf(A)).toEqual([2n]);
    expect(index.agentsOf(B)).toEqual([]);
    index.rewindTo(12n); // the burn is undone: B owns and guards agent 1 again
    expect(index.agentsOf(B)).toEqual([1n]);
    index.rewindTo(10n);
    expect(index.agentsOf(A)).toEqual([1n]);
    expect(index.agentsOf(B)).toEqual([]);

    // changes older than the window are final: nothing is kept to undo them
    index.apply([at(20n, log('Transfer', { from: ZERO, to: B, tokenId: 3n }))], 20n + REORG_WINDOW);
    index.rewindTo(0n);
    expect(index.agentsOf(A)).toEqual([1n]);
    expect(index.agentsOf(B)).toEqual([3n]);

    // a backfill's range far behind the head is final as it is applied: nothing journaled, nothing undone
    index.apply([at(30n, log('Transfer', { from: ZERO, to: B, tokenId: 4n }))], 30n, 30n + REORG_WINDOW);
    expect(index.storedJournal()).toEqual([]);
    index.rewindTo(29n);
    expect(index.agentsOf(B)).toEqual([3n, 4n]);
    // within the window of the head it is journaled
    index.apply([at(40n, log('Transfer', { from: ZERO, to: B, tokenId: 5n }))], 40n, 40n + REORG_WINDOW - 1n);
    index.rewindTo(39n);
    expect(index.agentsOf(B)).toEqual([3n, 4n]);
  });

  it("keeps each nullifier's agents: joined at a registration with a proof, left at a revocation; a reorganisation and a stored copy alike", () => {
    const index = new HumanAgentIndex();
    const at = (blockNumber: bigint, entry: { topics: Hex[]; data: Hex }) => ({ ...entry, blockNumber });
    const register = (blockNumber: bigint, agentId: bigint, nullifier: bigint) => [
      at(blockNumber, log('Transfer', { from: ZERO, to: A, tokenId: agentId })),
      at(blockNumber, log('AgentRegisteredWithHumanProof', { agentId, proofProvider: A }, nullifierData(nullifier, 100))),
    ];
    // the registry burns, then says the proof is revoked
    const revoke = (blockNumber: bigint, agentId: bigint, nullifier: bigint) => [
      at(blockNumber, log('Transfer', { from: A, to: ZERO, tokenId: agentId })),
      at(blockNumber, log('HumanProofRevoked', { agentId }, nullifierData(nullifier))),
    ];
    index.apply([...register(10n, 1n, 7n), ...register(10n, 2n, 7n), ...register(10n, 3n, 8n)], 10n);
    expect(index.agentsOfNullifier(7n)).toEqual([1n, 2n]);
    expect(index.agentsOfNullifier(8n)).toEqual([3n]);
    expect(bucketEntries(index.takeChanges().buckets.get(0n)!)).toEqual([
      [1, A, null, 7n],
      [2, A, null, 7n],
      [3, A, null, 8n],
    ]);

    index.apply(revoke(11n, 1n, 7n), 11n);
    expect(index.agentsOfNullifier(7n)).toEqual([2n]);
    const copy = new HumanAgentIndex();
    copy.load([index.takeChanges().buckets.get(0n)!], index.storedJournal());
    expect(copy.agentsOfNullifier(7n)).toEqual([2n]);
    copy.rewindTo(10n); // the revocation is undone
    expect(copy.agentsOfNullifier(7n)).toEqual([1n, 2n]);
    index.rewindTo(9n);
    expect(index.agentsOfNullifier(7n)).toEqual([]);
    expect(index.agentsOfNullifier(8n)).toEqual([]);
  });

  it('hands out the buckets a range changed, and a copy loaded from them (with its journal) answers and undoes alike', () => {
    const index = new HumanAgentIndex();
    const at = (blockNumber: bigint, entry: { topics: Hex[]; data: Hex }) => ({ ...entry, blockNumber });
    index.apply([at(10n, log('Transfer', { from: ZERO, to: A, tokenId: 1n })), at(10n, log('Transfer', { from: ZERO, to: B, tokenId: 2000n }))], 10n);
    const first = index.takeChanges();
    expect(first.cleared).toBe(false);
    expect([...first.buckets.keys()]).toEqual([0n, 1n]); // ids 1 and 2000, 1,024 to a bucket
    expect(bucketEntries(first.buckets.get(1n)!)).toEqual([[2000, B, null, null]]);
    expect(index.takeChanges().buckets.size).toBe(0);

    index.apply([at(12n, log('GuardianSet', { agentId: 1n, guardian: B }))], 12n);
    const second = index.takeChanges();
    expect([...second.buckets.keys()]).toEqual([0n]);
    const copy = new HumanAgentIndex();
    copy.load([second.buckets.get(0n)!, first.buckets.get(1n)!], index.storedJournal());
    expect(copy.agentsOf(B)).toEqual([1n, 2000n]);
    copy.rewindTo(11n); // the stored journal undoes the guardian
    expect(copy.agentsOf(B)).toEqual([2000n]);
    expect(bucketEntries(copy.takeChanges().buckets.get(0n)!)).toEqual([[1, A, null, null]]);

    // a clear says so, and a burn leaves its bucket empty (deleted from the store)
    index.apply([at(13n, log('Transfer', { from: B, to: ZERO, tokenId: 2000n }))], 13n);
    const burned = index.takeChanges().buckets;
    expect(burned.has(1n)).toBe(true);
    expect(burned.get(1n)).toBeUndefined();
    index.clear();
    expect(index.takeChanges()).toEqual({ cleared: true, buckets: new Map() });
  });

  it('stores a bucket as bytes that read back as they were, and refuses bytes that are not records', () => {
    const C: Address = '0xabcdefabcdefabcdefabcdefabcdefabcdefabcd';
    const entries: Parameters<typeof encodeBucket>[0] = [
      [1, A, null, 0n],
      [2, B, C, 2n ** 256n - 1n],
      [1023, null, C, null],
    ];
    const bucket = encodeBucket(entries);
    expect(bucketEntries(bucket)).toEqual(entries);
    const copy = new HumanAgentIndex();
    copy.load([bucket], []);
    expect(copy.agentsOf(C)).toEqual([2n, 1023n]);
    expect(copy.agentsOfNullifier(0n)).toEqual([1n]);
    expect(copy.takeChanges().buckets.size).toBe(0); // loading changes nothing
    copy.markAllChanged();
    expect(copy.takeChanges().buckets.get(0n)).toBe(bucket);

    const bytes = Buffer.from(bucket, 'base64');
    for (const malformed of [bytes.subarray(0, 3), bytes.subarray(0, bytes.length - 1), Buffer.from([1, 0, 0, 0, 0]), Buffer.from([1, 0, 0, 0, 8])]) {
      expect(() => bucketEntries(malformed.toString('base64'))).toThrow(/malformed/);
      expect(() => copy.load([bucket, malformed.toString('base64')], [])).toThrow(/malformed/);
      expect(copy.agentsOf(C)).toEqual([]); // a failed load holds nothing
    }
    // and a journal entry that could not be undone
    const malformedJournal: unknown[] = [
      ['10', 'o', '1', '0xzz'],
      ['10', 'x', '1', null],
      ['ten', 'n', '1', null],
      ['10', 'n', '1', (2n ** 256n).toString()],
      ['10', 'o', '4294967295', null], // an agent id the index cannot hold
      [(2n ** 53n).toString(), 'o', '1', null], // a block number a double does not hold exactly
      null,
    ];
    for (const entry of malformedJournal) {
      // after a valid entry: nothing of the journal is kept either
      expect(() => copy.load([bucket], [['10', 'g', '2', A], entry as never])).toThrow(/journal entry of the agent index is malformed/);
      expect(copy.agentsOf(C)).toEqual([]);
      expect(copy.storedJournal()).toEqual([]);
    }
    const checksummed: Address = '0xAbCdEfAbCdEfAbCdEfAbCdEfAbCdEfAbCdEfAbCd';
    const journal: [string, 'o' | 'g' | 'n', string, string | null][] = [
      ['10', 'g', '2', checksummed],
      ['10', 'n', '1', '100'],
      ['11', 'n', '2', (2n ** 256n - 1n).toString()],
      ['11', 'o', '4294967294', null],
    ];
    copy.load([bucket], journal);
    // addresses come back in lower case, nullifiers in decimal
    const stored = [['10', 'g', '2', C], ...journal.slice(1)];
    expect(copy.storedJournal()).toEqual(stored);
    copy.markAllChanged();
    expect(copy.takeJournal()).toEqual({ rewritten: true, entries: stored });
    copy.rewindTo(9n); // before block 10: agent 2's guardian was C, agent 1 on nullifier 100, agent 2 on 2^256 - 1
    expect(copy.storedJournal()).toEqual([]);
    expect(copy.agentsOf(C)).toEqual([2n, 1023n]);
    expect(copy.agentsOfNullifier(100n)).toEqual([1n]);
    expect(copy.agentsOfNullifier(0n)).toEqual([]);
    expect(copy.agentsOfNullifier(2n ** 256n - 1n)).toEqual([2n]);
  });

  it('tells a failure of its database once (not a refused value), and is back in memory at the clear that rebuilds it', async () => {
    const failures: unknown[] = [];
    let db: ReturnType<typeof temporaryDatabase> | undefined;
    const index = new HumanAgentIndex(undefined, {
      onDiskFailure: (error) => failures.push(error),
      openDatabase: () => {
        db = temporaryDatabase();
        return db;
      },
    });
    index.apply([log('Transfer', { from: ZERO, to: A, tokenId: 1n })]);
    await index.moveToDisk();
    expect(index.storage).toBe('disk');
    expect(() => index.apply([log('Transfer', { from: ZERO, to: A, tokenId: 2n ** 33n })])).toThrow(/outside the index's range/);
    expect(failures).toEqual([]);
    // its file can no longer be written
    db?.pragma('query_only = ON');
    for (const tokenId of [2n, 3n]) expect(() => index.apply([log('Transfer', { from: ZERO, to: B, tokenId })])).toThrow(/readonly/);
    expect(failures).toHaveLength(1);
    expect(String(failures[0])).toMatch(/readonly/);
    index.clear();
    expect(index.storage).toBe('memory');
    index.apply([log('Transfer', { from: ZERO, to: B, tokenId: 2n })]);
    expect(index.agentsOf(B)).toEqual([2n]);
    db?.close();
  });

  it('hands out the journal entries made since the last take, and the whole journal once a rewind undid some', () => {
    const index = new HumanAgentIndex();
    const at = (blockNumber: bigint, entry: { topics: Hex[]; data: Hex }) => ({ ...entry, blockNumber });
    index.apply([at(10n, log('Transfer', { from: ZERO, to: A, tokenId: 1n }))], 10n);
    expect(index.takeJournal()).toEqual({ rewritten: false, entries: [['10', 'o', '1', null]] });
    index.apply([at(11n, log('Transfer', { from: A, to: B, tokenId: 1n }))], 11n);
    expect(index.takeJournal()).toEqual({ rewritten: false, entries: [['11', 'o', '1', A]] });
    expect(index.takeJournal()).toEqual({ rewritten: false, entries: [] });

    index.apply([at(12n, log('GuardianSet', { agentId: 1n, guardian: A }))], 12n);
    index.rewindTo(11n); // undoes the guardian, untaken, and nothing stored: still written again whole
    expect(index.takeJournal()).toEqual({
      rewritten: true,
      entries: [
        ['10', 'o', '1', null],
        ['11', 'o', '1', A],
      ],
    });
    index.markAllChanged();
    expect(index.takeJournal().rewritten).toBe(true);

    // a copy loaded from the store has nothing new to hand out
    const copy = new HumanAgentIndex();
    copy.load([index.takeChanges().buckets.get(0n)!], index.storedJournal());
    expect(copy.takeJournal()).toEqual({ rewritten: false, entries: [] });
  });

  it('moves to a temporary database while logs keep coming, and answers, undoes and stores as the arrays do', async () => {
    const next = seededRandom(41);
    const humans = Array.from({ length: 300 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}` as Address);
    const human = () => humans[next(humans.length)] as Address;
    const nullifier = () => BigInt(next(2_000) + 1);
    const at = (blockNumber: bigint, entry: { topics: Hex[]; data: Hex }) => ({ ...entry, blockNumber });
    const [plain, moved] = [new HumanAgentIndex(), new HumanAgentIndex()];
    const both = (logs: ReturnType<typeof at>[], toBlock: bigint, head?: bigint) => {
      plain.apply(logs, toBlock, head);
      moved.apply(logs, toBlock, head);
    };
    let lastAgent = 0n;
    const register = (block: bigint) => {
      const agentId = ++lastAgent;
      return [
        at(block, log('Transfer', { from: ZERO, to: human(), tokenId: agentId })),
        at(block, log('AgentRegisteredWithHumanProof', { agentId, proofProvider: A }, nullifierData(nullifier(), 100))),
      ];
    };
    // registrations, transfers, guardians, and deregistrations (a burn and the revocation) of earlier agents
    const change = (block: bigint) => {
      const agentId = BigInt(next(Number(lastAgent)) + 1);
      const roll = next(4);
      if (roll === 0) return register(block);
      if (roll === 1) return [at(block, log('Transfer', { from: A, to: human(), tokenId: agentId }))];
      if (roll === 2) return [at(block, log('GuardianSet', { agentId, guardian: human() }))];
      return [
        at(block, log('Transfer', { from: A, to: ZERO, tokenId: agentId })),
        at(block, log('HumanProofRevoked', { agentId }, nullifierData(nullifier()))),
      ];
    };
    // a backfill far behind the head (nothing journaled), then blocks near it
    for (let block = 1n; block <= 60n; block++) both(Array.from({ length: 200 }, () => register(block)).flat(), block, 1_000n);
    let block = 1_000n;
    const step = () => {
      block++;
      both(Array.from({ length: 20 }, () => change(block)).flat(), block);
    };
    for (let i = 0; i < 5; i++) step();
    const expectSame = () => {
      expect(humans.map((address) => moved.agentsOf(address))).toEqual(humans.map((address) => plain.agentsOf(address)));
      const nullifiers = Array.from({ length: 2_000 }, (_, i) => BigInt(i + 1));
      expect(nullifiers.map((n) => moved.agentsOfNullifier(n))).toEqual(nullifiers.map((n) => plain.agentsOfNullifier(n)));
      expect(moved.storedJournal()).toEqual(plain.storedJournal());
    };

    expect(moved.storage).toBe('memory');
    const moving = moved.moveToDisk();
    let done = false;
    void moving.then(() => {
      done = true;
    });
    // a range applied at every turn the move leaves
    let during = 0;
    for (; !done; during++) {
      step();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await moving;
    expect(moved.storage).toBe('disk');
    expect(during).toBeGreaterThan(1);
    expectSame();
    for (let i = 0; i < 5; i++) step();
    expectSame();
    expect(moved.takeJournal()).toEqual(plain.takeJournal());
    expect(moved.takeChanges()).toEqual(plain.takeChanges());

    // a reorganisation undoes changes journaled before the move and after it
    plain.rewindTo(block - 12n);
    moved.rewindTo(block - 12n);
    expectSame();
    moved.markAllChanged();
    plain.markAllChanged();
    const buckets = moved.takeChanges().buckets;
    expect(buckets.size).toBeGreaterThanOrEqual(12); // 12,000 agents and more, 1,024 to a bucket
    expect(buckets).toEqual(plain.takeChanges().buckets);

    // a load or a clear puts the index back in the arrays, and a clear made during a move gives the move up
    const copy = new HumanAgentIndex();
    copy.load([...buckets.values()] as string[], moved.storedJournal());
    await copy.moveToDisk();
    copy.load([...buckets.values()] as string[], moved.storedJournal());
    expect(copy.storage).toBe('memory');
    expect(humans.map((address) => copy.agentsOf(address))).toEqual(humans.map((address) => plain.agentsOf(address)));
    const givenUp = copy.moveToDisk();
    copy.clear();
    await givenUp;
    expect(copy.storage).toBe('memory');
    // a move asked for right after a clear is one of its own, not the one given up
    copy.load([...buckets.values()] as string[], moved.storedJournal());
    const second = copy.moveToDisk();
    copy.load([...buckets.values()] as string[], moved.storedJournal());
    await copy.moveToDisk();
    expect(copy.storage).toBe('disk');
    await second;
    expect(humans.map((address) => copy.agentsOf(address))).toEqual(humans.map((address) => plain.agentsOf(address)));
    copy.clear();
    expect(copy.agentsOf(humans[0] as Address)).toEqual([]);
    moved.clear();
    expect(moved.storage).toBe('memory');
    expect(moved.agentsOf(humans[0] as Address)).toEqual([]);
  });
});
