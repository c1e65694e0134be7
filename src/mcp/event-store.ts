// The SDK transport's event store (resumability) on the store port, so a stream cut on one instance resumes on any
// instance sharing the store (sqlite alone, Redis for several): the SDK's persistent-storage mode of deploying on
// several nodes. Each stream of an MCP session is one record (what its transport sent, in order, the instance that
// sends on it, and whether its answer is in), kept for a session's lifetime after its last event; an event id is
// the stream id and the event's number, so a Last-Event-ID names its stream without a lookup.
import type { EventId, EventStore, StreamId } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isJSONRPCErrorResponse, isJSONRPCResultResponse, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { KeyValueStore } from '../store/key-value-store.js';

/** Resuming later than this is pointless: a session token, the longest thing a stream follows, lives 30 minutes. */
export const STREAM_TTL_MS = 30 * 60_000;
/** Most events one stream keeps (the oldest go first); a tool call sends a handful. */
const MAX_EVENTS = 200;
/** How long a resumption waits for another instance to send more on the stream (a long poll), and how often it looks. */
const LONG_POLL_MS = 20_000;
const LOOK_EVERY_MS = 250;

interface StoredStream {
  /** The instance whose transport sends on the stream. */
  sender: string;
  /** The number of the first event kept. */
  first: number;
  /** The messages in order; a priming event (an empty object, no message) included. */
  events: JSONRPCMessage[];
  /** The answer of the stream's request is among them: nothing more will come. */
  answered: boolean;
}

/** What a Last-Event-ID tells of its stream. */
export interface StreamState {
  /** Another instance sends on the stream: only it can add to it. */
  sentElsewhere: boolean;
  /** The answer of the stream's request is in: nothing more will come. */
  answered: boolean;
}

const isMessage = (event: JSONRPCMessage): boolean => 'jsonrpc' in event;

/** The events of one MCP session's streams. */
export class SessionEventStore implements EventStore {
  constructor(
    private readonly store: KeyValueStore,
    private readonly sessionId: string,
    private readonly instanceId: string,
  ) {}

  #key(streamId: StreamId): string {
    return `mcp:stream:${this.sessionId}:${streamId}`;
  }

  /** The stream and the number of an event id (stream ids are UUIDs or the transport's own GET stream name). */
  #parse(eventId: EventId): { streamId: StreamId; number: number } | undefined {
    const at = eventId.lastIndexOf(':');
    const number = Number(eventId.slice(at + 1));
    if (at <= 0 || !Number.isSafeInteger(number) || number < 0) return undefined;
    return { streamId: eventId.slice(0, at), number };
  }

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const stored = (await this.store.update<StoredStream>(
      this.#key(streamId),
      (current) => {
        const events = [...(current?.events ?? []), message];
        const dropped = Math.max(0, events.length - MAX_EVENTS);
        return {
          sender: current?.sender ?? this.instanceId,
          first: (current?.first ?? 0) + dropped,
          events: events.slice(dropped),
          answered: (current?.answered ?? false) || isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message),
        };
      },
      STREAM_TTL_MS,
    )) as StoredStream;
    return `${streamId}:${stored.first + stored.events.length - 1}`;
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    const parsed = this.#parse(eventId);
    if (!parsed) return undefined;
    return (await this.store.get<StoredStream>(this.#key(parsed.streamId))) ? parsed.streamId : undefined;
  }

  /**
   * Replays what the stream holds after `lastEventId`. A stream another instance sends on, not answered yet, is waited
   * on first (a long poll, the store read every quarter second) until it holds more; and a stream that will be ended
   * once replayed (see the endpoint) gets at least the last message the client saw again: the SDK's client resumes
   * from the last event id a stream carried, and would otherwise lose its place.
   */
  async replayEventsAfter(lastEventId: EventId, { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> }): Promise<StreamId> {
    const parsed = this.#parse(lastEventId);
    if (!parsed) throw new Error(`Not an event id of this session: ${lastEventId.slice(0, 100)}`);
    const key = this.#key(parsed.streamId);
    let stream = await this.store.get<StoredStream>(key);
    const pending = (s: StoredStream | undefined): s is StoredStream =>
      s !== undefined && s.sender !== this.instanceId && !s.answered && s.first + s.events.length - 1 <= parsed.number;
    for (const deadline = Date.now() + LONG_POLL_MS; pending(stream) && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, LOOK_EVERY_MS));
      stream = await this.store.get<StoredStream>(key);
    }
    if (!stream) return parsed.streamId;
    const numbered = stream.events.map((event, index) => ({ number: stream.first + index, event })).filter(({ event }) => isMessage(event));
    const after = numbered.filter(({ number }) => number > parsed.number);
    const ends = stream.sender !== this.instanceId || stream.answered;
    const seenLast = numbered.filter(({ number }) => number <= parsed.number).at(-1);
    for (const { number, event } of after.length === 0 && ends && seenLast ? [seenLast] : after) await send(`${parsed.streamId}:${number}`, event);
    return parsed.streamId;
  }

  /** Who sends on the stream of `lastEventId`, and whether it is answered (undefined: not a stream kept here). */
  async stateOf(lastEventId: EventId): Promise<StreamState | undefined> {
    const parsed = this.#parse(lastEventId);
    const stream = parsed && (await this.store.get<StoredStream>(this.#key(parsed.streamId)));
    return stream ? { sentElsewhere: stream.sender !== this.instanceId, answered: stream.answered } : undefined;
  }
}
