// POST /api/demo/chat: a conversation with an agent about agents and the registry. Signed requests are verified
// (the agent is named to the chat backend), unsigned ones are anonymous. The backend is built in (the service's
// own agent, answering through the same intents as A2A) unless CHAT_AGENT_URL names an external agent service.
// Conversation turns are kept per session_id on the store port, bounded: no token in them (a status question
// carries its session token: redacted before anything is kept), each turn at most a message's size, a session's
// turns within a byte budget (the oldest go first), and kept an hour by default. With the per-client message rate
// (services/agent-message-limits.ts), what one client can make the store hold is bounded.
import { badRequest, ServiceError } from '../core/errors.js';
import type { NetworkName } from '../core/networks.js';
import { AGENT_HEADERS } from '../core/signed-request.js';
import { redactTokens } from '../core/token-redaction.js';
import type { AgentMessageLimits } from '../services/agent-message-limits.js';
import type { SignedRequest, SignedRequestVerifier, VerifiedAgent } from '../services/signed-requests.js';
import type { KeyValueStore } from '../store/key-value-store.js';

export interface ChatTurn {
  role: 'user' | 'agent';
  text: string;
  at: number;
}

export interface ChatInput {
  query: string;
  sessionId: string;
  network: NetworkName;
  /** Undefined for an anonymous caller. */
  agent?: VerifiedAgent;
  /** The conversation so far, oldest first. */
  history: readonly ChatTurn[];
}

/** Who answers in the chat: the built-in agent, or an external agent service. */
export interface ChatBackend {
  reply(input: ChatInput): Promise<{ reply: string; data?: object }>;
}

export interface ChatAnswer {
  reply: string;
  /** The fields behind the reply: a JSON object. */
  data?: Record<string, unknown>;
  session_id: string;
  /** The caller's agent address, or "anonymous". */
  agent: string;
  turns: number;
}

/** How long and how much of a conversation is kept. */
export interface ChatHistoryOptions {
  /** After its last turn. */
  ttlMs: number;
  /** The turns' text, UTF-8, per session; the newest exchange is always kept. */
  maxBytes: number;
}

/** An hour holds any conversation a demo has; 16 kB its last few exchanges of full-size questions. */
export const DEFAULT_CHAT_HISTORY: ChatHistoryOptions = { ttlMs: 60 * 60 * 1000, maxBytes: 16_384 };

/** Most turns kept per session, whatever their size. */
const MAX_TURNS = 40;

/** `text` cut to at most `maxBytes` of UTF-8 (an external agent's reply may be long), marked as cut. */
function capped(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  // a cut in the middle of a character decodes as U+FFFD: dropped
  return `${Buffer.from(text)
    .subarray(0, maxBytes - 3)
    .toString('utf8')
    .replace(/\uFFFD$/, '')}…`;
}

/**
 * The newest exchanges (a question and its answer: turns come in pairs) whose text fits in `maxBytes`, at least the
 * last one (just made), at most MAX_TURNS turns.
 */
function newest(turns: readonly ChatTurn[], maxBytes: number): ChatTurn[] {
  const bytesOf = (from: number) => turns.slice(from, from + 2).reduce((sum, turn) => sum + Buffer.byteLength(turn.text), 0);
  let from = Math.max(0, turns.length - 2);
  let bytes = bytesOf(from);
  while (from >= 2 && turns.length - from < MAX_TURNS && bytes + bytesOf(from - 2) <= maxBytes) {
    from -= 2;
    bytes += bytesOf(from);
  }
  return turns.slice(from);
}

export class DemoChatService {
  constructor(
    private readonly verifier: SignedRequestVerifier,
    private readonly store: KeyValueStore,
    private readonly backend: () => ChatBackend,
    /** The size of a query (the rate is counted before the request is read: the route's limit). */
    private readonly limits: AgentMessageLimits,
    private readonly history: ChatHistoryOptions = DEFAULT_CHAT_HISTORY,
    private readonly clock: () => number = Date.now,
  ) {}

  async chat(request: SignedRequest, network: NetworkName): Promise<ChatAnswer> {
    let body: { query?: unknown; session_id?: unknown };
    try {
      body = request.body ? (JSON.parse(request.body) as typeof body) : {};
    } catch {
      throw badRequest('Invalid JSON body: send {"query": "...", "session_id": "..."}');
    }
    if (typeof body !== 'object' || body === null) throw badRequest('Invalid JSON body: send {"query": "...", "session_id": "..."}');
    const query = typeof body.query === 'string' ? body.query : '';
    this.limits.checkSize(Buffer.byteLength(query), 'query');
    const sessionId = typeof body.session_id === 'string' && body.session_id !== '' ? body.session_id.slice(0, 128) : 'default';

    const signature = request.headers[AGENT_HEADERS.signature] !== undefined;
    const timestamp = request.headers[AGENT_HEADERS.timestamp] !== undefined;
    if (signature !== timestamp) throw new ServiceError(401, 'Both signature and timestamp headers are required');
    // either scheme: an RFC 9421 caller is named too, never taken for an anonymous one
    const agent = this.verifier.isSigned(request) ? await this.verifier.verify(request, { network }) : undefined;

    // one conversation per caller and session id: another agent's session_id does not read this history
    const key = `demo:chat:${network}:${agent?.agentAddress.toLowerCase() ?? 'anonymous'}:${sessionId}`;
    const history = (await this.store.get<ChatTurn[]>(key)) ?? [];
    const answer = await this.backend().reply({ query, sessionId, network, ...(agent ? { agent } : {}), history });
    const now = this.clock();
    const kept = (text: string): string => capped(redactTokens(text), this.limits.maxMessageBytes);
    // the earlier turns too: a history an earlier version kept may hold a token
    const turns = newest(
      [
        ...history.map((turn) => ({ ...turn, text: kept(turn.text) })),
        { role: 'user', text: kept(query), at: now },
        { role: 'agent', text: kept(answer.reply), at: now },
      ],
      this.history.maxBytes,
    );
    await this.store.set(key, turns, this.history.ttlMs);
    return {
      reply: answer.reply,
      ...(answer.data ? { data: { ...answer.data } } : {}),
      session_id: sessionId,
      agent: agent?.agentAddress ?? 'anonymous',
      turns: turns.length,
    };
  }
}

/** An external agent service: POST {url}/agent {query, agent_address, network, session_id}, its JSON answer as the reply. */
export function externalChatBackend(url: string, timeoutMs = 15_000): ChatBackend {
  const base = url.replace(/\/+$/, '');
  return {
    async reply({ query, sessionId, network, agent }) {
      let res: Response;
      try {
        res = await fetch(`${base}/agent`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query, agent_address: agent?.agentAddress ?? 'anonymous', network, session_id: sessionId }),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch {
        throw new ServiceError(503, `Chat agent service unavailable at ${base}`);
      }
      const answer = (await res.json().catch(() => ({}))) as { reply?: unknown; response?: unknown; detail?: unknown; error?: unknown };
      if (!res.ok) {
        const detail = typeof answer.detail === 'string' ? answer.detail : typeof answer.error === 'string' ? answer.error : `HTTP ${res.status}`;
        throw new ServiceError(502, `The chat agent service refused: ${detail}`);
      }
      const reply = typeof answer.reply === 'string' ? answer.reply : typeof answer.response === 'string' ? answer.response : JSON.stringify(answer);
      return { reply, data: answer };
    },
  };
}
