// The chat demo's built-in agent: reads the question with the A2A intent parser and answers it as the A2A agent
// does (lookup, verify, freshness, status, help), naming the signed caller. Sessions are opened through
// /api/agent/register or A2A, not in the chat.
import { serviceErrorOf } from '../core/errors.js';
import type { ChatBackend } from '../demo/chat.js';
import type { Services } from '../services/index.js';
import { answerIntent } from './answers.js';
import { parseIntent } from './intents.js';

export function intentChatAgent(services: Services): ChatBackend {
  return {
    async reply({ query, network, agent }) {
      const who = agent ? `Hello agent #${agent.agentId} (${agent.agentAddress}), backed by a human. ` : '';
      // the chat's network unless the question names one
      const named = /\b(testnet|sepolia|alfajores|mainnet|chain\s*(id\s*)?\d+)\b/i.test(query);
      const text = { kind: 'text', text: query } as const;
      const parsed = parseIntent(named ? [text] : [text, { kind: 'data', data: { network } }]);
      if (!parsed.ok) return { reply: `${who}${parsed.message}`, data: { missing: parsed.missing } };
      const { request } = parsed;
      if (request.intent === 'register' || request.intent === 'deregister') {
        return {
          reply: `${who}To ${request.intent} an agent, open a session: POST /api/agent/${request.intent}, or send the ${request.intent} intent over A2A.`,
        };
      }
      try {
        const [text, data] = await answerIntent(services, request);
        return { reply: `${who}${text}`, data };
      } catch (thrown) {
        const error = serviceErrorOf(thrown);
        if (!error) throw thrown;
        return { reply: `${who}${error.message}`, data: { error: error.message, status: error.status } };
      }
    },
  };
}
