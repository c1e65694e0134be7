// What the agent answers to the intents that need no session (lookup, verify, freshness, status, help): one
// service call each, a sentence for people and the REST answer's fields for programs. The A2A executor (as the
// artifact of a completed task) and the chat demo's built-in agent answer alike.
import { randomUUID } from 'node:crypto';
import type { Artifact } from '@a2a-js/sdk';
import type { Services } from '../services/index.js';
import { callerPolicy } from '../services/signed-requests.js';
import { skills } from './agent-card.js';
import type { Intent, IntentRequest } from './intents.js';
import { answerParts } from './parts.js';

/** A query's answer as its task's artifact: the sentence, then the fields of the REST response. */
export const answerArtifact = (intent: Intent, text: string, data: object): Artifact => ({
  artifactId: randomUUID(),
  name: `${intent}-answer`,
  description: 'The answer: a sentence, then the same fields as the REST response',
  parts: answerParts(text, data),
  metadata: undefined,
  extensions: [],
});

export async function answerIntent(services: Services, request: IntentRequest): Promise<[string, object]> {
  const { queries, sessions } = services;
  switch (request.intent) {
    case 'lookup': {
      const info = await queries.info(request.network, request.agentId!);
      return [`Agent ${info.agentId} on ${info.network}: ${info.isVerified ? 'verified' : 'not verified'} (${info.strengthLabel})`, info];
    }
    case 'verify': {
      if (request.signedRequest) {
        const policy = callerPolicy(request.fields['policy']);
        const agent = await services.signedRequests.verify(request.signedRequest, { network: request.network, ...(policy ? { policy } : {}) });
        const answer = { ...agent, agentId: agent.agentId.toString(), nullifier: agent.nullifier.toString(), valid: true };
        return [`The request was signed by agent ${answer.agentId}, backed by a human`, answer];
      }
      const result = await queries.verify(request.network, request.agentId!);
      return [`Agent ${result.agentId} ${result.isVerified ? 'is backed by a human' : 'has no valid proof of human'}`, result];
    }
    case 'freshness': {
      const result = await queries.freshness(request.network, request.agentId!);
      const when = result.proofExpiresAt > 0 ? ` (expires ${new Date(result.proofExpiresAt * 1000).toISOString()})` : '';
      return [`The proof of agent ${result.agentId} is ${result.isProofFresh ? 'fresh' : 'not fresh'}${when}`, result];
    }
    case 'status': {
      const status = await sessions.status(request.sessionToken!);
      return [`Session stage: ${status.stage}`, status];
    }
    default: {
      const list = skills().map((s) => ({ intent: s.id, name: s.name, description: s.description, examples: s.examples }));
      return [`I can: ${list.map((s) => s.intent).join(', ')}. Send a data part {"intent": ..., ...} or plain text.`, { intents: list }];
    }
  }
}
