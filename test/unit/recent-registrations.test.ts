// The registering transactions a session completes from: Registered logs only, not those a reorganisation
// removed, the oldest dropped past the capacity.
import { encodeEventTopics, type Hex, keccak256, toHex } from 'viem';
import { describe, expect, it } from 'vitest';
import { agentRegistryAbi } from '../../src/contracts/artifacts/index.js';
import { RecentRegistrations } from '../../src/services/recent-registrations.js';

const hashOf = (n: number): Hex => keccak256(toHex(n));
const registered = (agentId: bigint, transactionHash: Hex, removed = false) => ({
  topics: encodeEventTopics({ abi: agentRegistryAbi, eventName: 'Registered', args: { agentId } }) as Hex[],
  data: '0x' as Hex,
  transactionHash,
  removed,
});

describe('RecentRegistrations', () => {
  it('keeps the transaction of each Registered log and ignores other logs', () => {
    const recent = new RecentRegistrations();
    const transfer = {
      topics: encodeEventTopics({ abi: agentRegistryAbi, eventName: 'Transfer', args: { tokenId: 7n } }) as Hex[],
      data: '0x' as Hex,
      transactionHash: hashOf(2),
    };
    recent.note([registered(5n, hashOf(1)), transfer]);
    expect(recent.transactionOf(5n)).toBe(hashOf(1));
    expect(recent.transactionOf(7n)).toBeUndefined();
  });

  it('ignores a log a reorganisation removed, and forgets everything when cleared', () => {
    const recent = new RecentRegistrations();
    recent.note([registered(1n, hashOf(1), true), registered(2n, hashOf(2))]);
    expect(recent.transactionOf(1n)).toBeUndefined();
    recent.clear();
    expect(recent.transactionOf(2n)).toBeUndefined();
  });

  it('drops the oldest past its capacity', () => {
    const recent = new RecentRegistrations(2);
    recent.note([registered(1n, hashOf(1)), registered(2n, hashOf(2)), registered(3n, hashOf(3))]);
    expect(recent.transactionOf(1n)).toBeUndefined();
    expect([recent.transactionOf(2n), recent.transactionOf(3n)]).toEqual([hashOf(2), hashOf(3)]);
  });
});
