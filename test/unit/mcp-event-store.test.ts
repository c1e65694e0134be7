// The MCP transport's event store on the store port: event ids that name their stream, replays after an id (priming
// events left out), and what a resumption on another instance gets: a wait for the sender's next event, or the last
// message seen again when nothing more will come.
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { SessionEventStore } from '../../src/mcp/event-store.js';
import { MemoryStore } from '../../src/store/memory-store.js';

const progress = (n: number): JSONRPCMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progressToken: 1, progress: n },
});
const answer: JSONRPCMessage = { jsonrpc: '2.0', id: 1, result: { content: [] } };
const PRIMING = {} as JSONRPCMessage;

const replayed = async (events: SessionEventStore, after: string): Promise<[string, JSONRPCMessage][]> => {
  const sent: [string, JSONRPCMessage][] = [];
  await events.replayEventsAfter(after, {
    send: async (id, message) => {
      sent.push([id, message]);
    },
  });
  return sent;
};

describe('SessionEventStore', () => {
  it('numbers the events of each stream, and replays those after an id, without the priming event', async () => {
    const events = new SessionEventStore(new MemoryStore(), 'session-1', 'instance-a');
    expect(await events.storeEvent('stream-1', PRIMING)).toBe('stream-1:0');
    expect(await events.storeEvent('stream-1', progress(1))).toBe('stream-1:1');
    expect(await events.storeEvent('stream-2', progress(1))).toBe('stream-2:0');
    expect(await events.storeEvent('stream-1', progress(2))).toBe('stream-1:2');
    expect(await events.getStreamIdForEventId('stream-1:1')).toBe('stream-1');
    expect(await events.getStreamIdForEventId('nowhere:1')).toBeUndefined();
    expect(await events.getStreamIdForEventId('no number')).toBeUndefined();
    expect(await replayed(events, 'stream-1:0')).toEqual([
      ['stream-1:1', progress(1)],
      ['stream-1:2', progress(2)],
    ]);
    expect(await replayed(events, 'stream-1:1')).toEqual([['stream-1:2', progress(2)]]);
    // the sender's own live stream gets nothing it already has
    expect(await replayed(events, 'stream-1:2')).toEqual([]);
  });

  it('keeps the sessions apart', async () => {
    const store = new MemoryStore();
    await new SessionEventStore(store, 'session-1', 'a').storeEvent('_GET_stream', progress(1));
    expect(await new SessionEventStore(store, 'session-2', 'a').getStreamIdForEventId('_GET_stream:0')).toBeUndefined();
  });

  it('on another instance: waits for what the sender stores next, and says the stream is sent elsewhere', async () => {
    const store = new MemoryStore();
    const onA = new SessionEventStore(store, 'session-1', 'instance-a');
    const onB = new SessionEventStore(store, 'session-1', 'instance-b');
    await onA.storeEvent('stream-1', PRIMING);
    await onA.storeEvent('stream-1', progress(1));
    expect(await onB.stateOf('stream-1:1')).toEqual({ sentElsewhere: true, answered: false });
    expect(await onA.stateOf('stream-1:1')).toEqual({ sentElsewhere: false, answered: false });
    const resumed = replayed(onB, 'stream-1:1');
    setTimeout(() => void onA.storeEvent('stream-1', answer), 300);
    expect(await resumed).toEqual([['stream-1:2', answer]]);
    expect(await onB.stateOf('stream-1:2')).toEqual({ sentElsewhere: true, answered: true });
  });

  it('an answered stream with nothing after the id: the last message seen again, so the client keeps its place', async () => {
    const events = new SessionEventStore(new MemoryStore(), 'session-1', 'instance-a');
    await events.storeEvent('stream-1', PRIMING);
    await events.storeEvent('stream-1', progress(1));
    await events.storeEvent('stream-1', answer);
    expect(await replayed(events, 'stream-1:2')).toEqual([['stream-1:2', answer]]);
  });
});
