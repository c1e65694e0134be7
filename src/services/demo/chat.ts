// POST /api/demo/chat: a conversation with an agent about agents and the registry. Signed requests are verified
// (the agent is named to the chat backend), unsigned ones are anonymous. The backend is built in (the service's
// own agent, answering through the same intents as A2A) unless CHAT_AGENT_URL names an external agent service.
// Conversation turns are kept per session_id on the store port.
import { badRequest, ServiceError } from '../../core/errors.js';
import type { NetworkName } from '../../core/networks.js';
import { AGENT_HEADERS } from '../../core/signed-request.js';
import type { KeyValueStore } from '../../store/key-value-store.js';
import type { SignedRequest, SignedRequestVerifier, VerifiedAgent } from '../signed-requests.js';

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

const MAX_TURNS = 40;
const HISTORY_TTL_MS = 24 * 60 * 60 * 1000;

export class DemoChatService {
  constructor(
    private readonly verifier: SignedRequestVerifier,
    private readonly store: KeyValueStore,
    private readonly backend: () => ChatBackend,
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
    const sessionId = typeof body.session_id === 'string' && body.session_id !== '' ? body.session_id.slice(0, 128) : 'default';

    const signature = request.headers[AGENT_HEADERS.signature] !== undefined;
    const timestamp = request.headers[AGENT_HEADERS.timestamp] !== undefined;
    if (signature !== timestamp) throw new ServiceError(401, 'Both signature and timestamp headers are required');
    const agent = signature ? await this.verifier.verify(request, { network }) : undefined;

    // one conversation per caller and session id: another agent's session_id does not read this history
    const key = `demo:chat:${network}:${agent?.agentAddress.toLowerCase() ?? 'anonymous'}:${sessionId}`;
    const history = (await this.store.get<ChatTurn[]>(key)) ?? [];
    const answer = await this.backend().reply({ query, sessionId, network, ...(agent ? { agent } : {}), history });
    const now = this.clock();
    const turns = [...history, { role: 'user', text: query, at: now } as ChatTurn, { role: 'agent', text: answer.reply, at: now } as ChatTurn].slice(
      -MAX_TURNS,
    );
    await this.store.set(key, turns, HISTORY_TTL_MS);
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
