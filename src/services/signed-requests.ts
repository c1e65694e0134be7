// Verifying a signed agent request: who signed it (core/signed-request.ts), whether that agent is registered,
// backed by a proof that has not expired and that came from the registry's own proof provider (through the
// event-invalidated agent cache: a warm verify costs no RPC), and that the signed message was not used before
// anywhere: one claim per (signer, message) for every endpoint, REST and A2A alike, on the store port, so shared
// by every instance and kept across restarts until the signature's window has passed.

import type { InterfaceCredentials } from '../core/credentials.js';
import { recoverPersonalSigner } from '../core/ecrecover.js';
import { ServiceError } from '../core/errors.js';
import type { NetworkName } from '../core/networks.js';
import {
  type HeaderBag,
  hasSignatureHeaders,
  type RequestSignerIdentity,
  recoverRequestSigner,
  SIGNATURE_WINDOW_MS,
  signedMessageKey,
} from '../core/signed-request.js';
import type { Clock, KeyValueStore } from '../store/key-value-store.js';
import { type AgentQueryService, interfaceCredentials } from './agent-queries.js';

/** A request as the adapter received it: the raw body text is what was signed. */
export interface SignedRequest {
  headers: HeaderBag;
  method: string;
  /** The path and query (or the full URL) the request was sent to. */
  url: string;
  body?: string | null;
}

export interface VerifiedAgent extends RequestSignerIdentity {
  network: NetworkName;
  agentId: bigint;
  /** Live agents of the same human. */
  agentCount: number;
  nullifier: bigint;
  /** Unix seconds. */
  proofExpiresAt: number;
  credentials: InterfaceCredentials;
}

export interface SignedRequestOptions {
  network: NetworkName;
}

export class SignedRequestVerifier {
  constructor(
    private readonly queries: AgentQueryService,
    private readonly store: KeyValueStore,
    private readonly clock: Clock = Date.now,
  ) {}

  /** Whether the request carries a signature at all (anonymous callers of endpoints that allow them). */
  isSigned(request: Pick<SignedRequest, 'headers'>): boolean {
    return hasSignatureHeaders(request.headers);
  }

  /** The agent that signed the request; 401 without the headers, 403 when the agent check fails, 409 on a replay. */
  async verify(request: SignedRequest, { network }: SignedRequestOptions): Promise<VerifiedAgent> {
    const now = this.clock();
    const check = await recoverRequestSigner(request.headers, request, now, recoverPersonalSigner);
    if (!check.ok) throw new ServiceError(this.isSigned(request) ? 403 : 401, check.error);
    const { signer, timestamp } = check;
    const agent = await this.queries.agentByKey(network, signer.agentKey);
    if (!agent) throw new ServiceError(403, `Agent not verified on-chain: no agent is registered with this key on ${network}`);
    if (!agent.view.hasHumanProof) throw new ServiceError(403, 'Agent not verified on-chain: it has no proof of human');
    if (!agent.isVerified) throw new ServiceError(403, "Agent's human proof has expired: refresh it (POST /api/agent/refresh)");
    if (!agent.view.isSelfProvider) throw new ServiceError(403, "Agent was not verified by the registry's proof provider");

    // no endpoint name in the key: a message spent at one endpoint (or over A2A) is spent at all of them
    const ttlMs = Math.max(1, timestamp + SIGNATURE_WINDOW_MS - now);
    if (!(await this.store.setIfAbsent(`replay:${signedMessageKey(check)}`, 1, ttlMs))) throw new ServiceError(409, 'Replay detected');

    return {
      ...signer,
      network,
      agentId: agent.agentId,
      agentCount: Number(agent.view.agentCountForHuman),
      nullifier: agent.view.nullifier,
      proofExpiresAt: Number(agent.view.proofExpiresAt),
      credentials: interfaceCredentials(agent.view),
    };
  }
}
