// The registry index's undo journal in typed arrays, against a plain model (an array of entries): appends in block
// order, drops of final blocks from the front, undoes from the back and takes of what is new, through enough random
// steps that its arrays grow and are compacted many times.
import { describe, expect, it } from 'vitest';
import { MAX_AGENT_ID } from '../../src/services/agent-value-table.js';
import { type JournalEntry, type JournalSide, UndoJournal } from '../../src/services/undo-journal.js';
import { seededRandom } from '../support/seeded-random.js';

describe('UndoJournal', () => {
  it('holds, drops, undoes and hands out what a list of entries would, through random steps', () => {
    const next = seededRandom(41);
    const journal = new UndoJournal();
    let model: JournalEntry[] = [];
    let fresh: JournalEntry[] = [];
    let block = 1n;
    for (let step = 0; step < 30_000; step++) {
      const action = next(100);
      if (action < 70) {
        block += BigInt(next(3));
        // value numbers: 0 (none) or any other 32-bit number
        const previous = next(4) === 0 ? 0 : next(2 ** 32 - 1) + 1;
        const agentId = next(10) === 0 ? MAX_AGENT_ID - next(3) : next(2 ** 31);
        const entry: JournalEntry = { blockNumber: block, side: next(3) as JournalSide, agentId, previous };
        journal.push(entry.blockNumber, entry.side, BigInt(entry.agentId), previous);
        model.push(entry);
        fresh.push(entry);
      } else if (action < 85) {
        // phases of long and short journals: the arrays grow, and shrink again
        const final = block - BigInt(next(Math.floor(step / 5_000) % 2 === 0 ? 600 : 8));
        journal.dropThrough(final);
        model = model.filter((entry) => entry.blockNumber > final);
        fresh = fresh.filter((entry) => entry.blockNumber > final);
      } else if (action < 95) {
        const ancestor = block - BigInt(next(4));
        const undone: JournalEntry[] = [];
        for (let entry = journal.popAfter(ancestor); entry; entry = journal.popAfter(ancestor)) undone.push(entry);
        const kept = model.filter((entry) => entry.blockNumber <= ancestor);
        expect(undone).toEqual(model.slice(kept.length).reverse());
        model = kept;
        fresh = fresh.filter((entry) => entry.blockNumber <= ancestor);
        if (ancestor < block) block = ancestor > 0n ? ancestor : 1n;
      } else {
        expect([...journal.takeFresh()]).toEqual(fresh);
        fresh = [];
      }
      expect(journal.length).toBe(model.length);
    }
    expect([...journal.entries()]).toEqual(model);
  });

  it('hands out what was fresh when taken, whatever is appended before the entries are read', () => {
    const journal = new UndoJournal();
    journal.push(1n, 0, 1n, 0);
    const taken = journal.takeFresh();
    journal.push(2n, 1, 2n, 0);
    expect([...taken]).toEqual([{ blockNumber: 1n, side: 0, agentId: 1, previous: 0 }]);
    journal.takeFresh(); // taken, though never read
    expect([...journal.takeFresh()]).toEqual([]);
    journal.push(3n, 2, 3n, 0);
    expect([...journal.takeFresh()]).toEqual([{ blockNumber: 3n, side: 2, agentId: 3, previous: 0 }]);
  });

  it('records nothing for an agent id or a block number it cannot hold', () => {
    const journal = new UndoJournal();
    expect(() => journal.push(1n, 0, 2n ** 32n, 0)).toThrow(RangeError);
    expect(() => journal.push(1n, 0, -1n, 0)).toThrow(RangeError);
    expect(() => journal.push(2n ** 53n, 0, 1n, 0)).toThrow(RangeError);
    expect(journal.length).toBe(0);
    journal.push(5n, 2, 7n, 0);
    journal.push(2n ** 53n - 1n, 1, BigInt(MAX_AGENT_ID), 0);
    expect([...journal.entries()]).toEqual([
      { blockNumber: 5n, side: 2, agentId: 7, previous: 0 },
      { blockNumber: 2n ** 53n - 1n, side: 1, agentId: MAX_AGENT_ID, previous: 0 },
    ]);
  });
});
