// POST /api/demo/agent-to-agent: the service's own demo agent answers a verified agent, says whether the two
// are backed by the same human, and signs its answer in the same header family, so the caller can check who
// answered. Counters (verifications, distinct callers) live on the store port.
import type { LocalAccount } from 'viem';
import { addressAgentKey } from '../core/agent-key.js';
import { ServiceError } from '../core/errors.js';
import type { NetworkName } from '../core/networks.js';
import { signedHeaders } from '../core/signed-request.js';
import type { AgentQueryService } from '../services/agent-queries.js';
import type { SignedRequest, SignedRequestVerifier } from '../services/signed-requests.js';
import type { KeyValueStore } from '../store/key-value-store.js';

export interface AgentToAgentAnswer {
  /** The exact JSON text the demo agent signed: send it as is. */
  body: string;
  /** The demo agent's signature headers over (POST, the request URL, body). */
  headers: Record<string, string>;
}

const SETTING: Record<NetworkName, string> = { mainnet: 'DEMO_AGENT_PRIVATE_KEY_MAINNET', testnet: 'DEMO_AGENT_PRIVATE_KEY_TESTNET' };

export class DemoAgentToAgentService {
  constructor(
    private readonly verifier: SignedRequestVerifier,
    private readonly queries: AgentQueryService,
    private readonly store: KeyValueStore,
    /** The demo agent's account per network (configured, or made by the embedded testnet). */
    private readonly demoAgents: Partial<Record<NetworkName, LocalAccount>>,
  ) {}

  async answer(request: SignedRequest, network: NetworkName): Promise<AgentToAgentAnswer> {
    const demoAgent = this.demoAgents[network];
    // a component the operator did not configure, as an unconfigured relayer or bundler: 503 naming the setting
    if (!demoAgent) throw new ServiceError(503, `Demo agent not configured for ${network}: set ${SETTING[network]} to a registered agent's key`);
    const caller = await this.verifier.verify(request, { network });
    const demo = await this.queries.agentByKey(network, addressAgentKey(demoAgent.address));
    const verificationCount = (await this.store.update<number>(`demo:agent-to-agent:count:${network}`, (count = 0) => count + 1)) as number;
    const callers = (await this.store.update<Record<string, true>>(`demo:agent-to-agent:callers:${network}`, (seen = {}) => ({
      ...seen,
      [caller.agentAddress.toLowerCase()]: true,
    }))) as Record<string, true>;
    const uniqueAgents = Object.keys(callers).length;
    const answer = {
      verified: true,
      demoAgent: { address: demoAgent.address, agentId: String(demo?.agentId ?? 0n), verified: demo?.isVerified ?? false },
      callerAgent: { address: caller.agentAddress, agentId: caller.agentId.toString(), verified: true },
      sameHuman: demo !== undefined && demo.view.nullifier !== 0n && demo.view.nullifier === caller.nullifier,
      verificationCount,
      uniqueAgents,
      message:
        `Beep boop! You are agent #${verificationCount} that I have verified as being backed by a human. ` +
        `I have seen ${uniqueAgents} unique agent${uniqueAgents === 1 ? '' : 's'} so far.`,
    };
    const body = JSON.stringify(answer);
    const headers = await signedHeaders({ type: 'secp256k1', account: demoAgent }, { method: 'POST', url: request.url, body });
    return { body, headers };
  }
}
