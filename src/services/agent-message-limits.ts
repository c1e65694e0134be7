// Messages to the service's agent (A2A message/send and message/stream in either protocol version, POST
// /api/demo/chat) need no authentication, and each may leave something in the store: a task, a conversation
// waiting for input, a chat history. So they are limited per client address, one budget for both ways in (the same
// agent answers), and each message by its size; what a client can make the store hold is then rate × size × how
// long it is kept (README, Operations).
import { ServiceError } from '../core/errors.js';
import { MemoryStore } from '../store/memory-store.js';
import { type LimitRule, RateLimiter } from './rate-limits.js';

export interface AgentMessageLimitOptions {
  /** Messages per client address and minute, A2A and chat together. */
  perMinute: number;
  /** Largest message: an A2A message as JSON (its parts, metadata and all), or a chat query (UTF-8). */
  maxMessageBytes: number;
  /** Largest request body on the paths that take messages (POST /api/a2a, POST /api/demo/chat). */
  maxBodyBytes: number;
}

/**
 * An agent answers a few messages a second at most in any real exchange; 4 kB holds any intent with a signed request
 * to verify; 32 kB a batch of queries. At these, a client adds at most a few tens of MB an hour (README).
 */
export const DEFAULT_AGENT_MESSAGE_LIMITS: AgentMessageLimitOptions = { perMinute: 60, maxMessageBytes: 4_096, maxBodyBytes: 32_768 };

/** The counted rule: its name keys the counters (REST's and A2A's alike). */
export const agentMessagesRule = (perMinute: number): LimitRule => ({
  name: 'agent-messages',
  what: 'messages to the agent',
  limit: perMinute,
  windowMs: 60_000,
});

export class AgentMessageLimits {
  /** The per-client rate, counted on the store (REST applies it through express-rate-limit, A2A through admit). */
  readonly rate: RateLimiter;
  readonly maxMessageBytes: number;
  readonly maxBodyBytes: number;

  constructor(options: AgentMessageLimitOptions = DEFAULT_AGENT_MESSAGE_LIMITS) {
    // Counted in this process, not on the store: a store write per message (about 90 us of CPU on sqlite) doubled the
    // cost of an A2A query, and a one-minute window needs no durability. Several instances each count a client alone.
    this.rate = new RateLimiter(new MemoryStore(), agentMessagesRule(options.perMinute));
    this.maxMessageBytes = options.maxMessageBytes;
    this.maxBodyBytes = options.maxBodyBytes;
  }

  /** 413 for a message of `bytes` over the limit; `what` names it for the caller ("message", "query"). */
  checkSize(bytes: number, what: string): void {
    if (bytes > this.maxMessageBytes) {
      throw new ServiceError(413, `The ${what} is too large: ${bytes} bytes, at most ${this.maxMessageBytes}; send a shorter one`);
    }
  }

  /** Counts one message of `client` (429 beyond the rate, not counted), then checks its size (413). */
  async admit(client: string, bytes: number, what: string): Promise<void> {
    await this.rate.consume(client);
    this.checkSize(bytes, what);
  }
}
