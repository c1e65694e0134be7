// POST /api/demo/verify: an agent proves who it is with a signed request; the answer says which agent, how many
// agents its human has, what the human disclosed, and how many verifications this service has done (a counter
// on the store port, so it survives restarts and is shared by instances).
import type { InterfaceCredentials } from '../core/credentials.js';
import type { NetworkName } from '../core/networks.js';
import { callerPolicy, type SignedRequest, type SignedRequestVerifier } from '../services/signed-requests.js';
import type { KeyValueStore } from '../store/key-value-store.js';

export interface DemoVerification {
  valid: true;
  network: NetworkName;
  agentAddress: string;
  agentKey: string;
  keyType: 'secp256k1' | 'ed25519';
  /** Decimal text, as the deployed service answers. */
  agentId: string;
  /** Live agents of the same human, decimal text. */
  agentCount: string;
  /** Successful verifications by this service so far. */
  verificationCount: number;
  credentials: InterfaceCredentials;
}

const COUNTER_KEY = 'demo:verify:count';

export class DemoVerifyService {
  constructor(
    private readonly verifier: SignedRequestVerifier,
    private readonly store: KeyValueStore,
  ) {}

  /** A JSON body may carry `policy`: the caller's own policies for this check (403 {error, policy} when one refuses). */
  async verify(request: SignedRequest, network: NetworkName): Promise<DemoVerification> {
    const policy = callerPolicy(policyField(request.body));
    const agent = await this.verifier.verify(request, { network, ...(policy ? { policy } : {}) });
    const verificationCount = (await this.store.update<number>(COUNTER_KEY, (count = 0) => count + 1)) as number;
    return {
      valid: true,
      network,
      agentAddress: agent.agentAddress,
      agentKey: agent.agentKey,
      keyType: agent.keyType,
      agentId: agent.agentId.toString(),
      agentCount: String(agent.agentCount),
      verificationCount,
      credentials: agent.credentials,
    };
  }
}

/** The `policy` member of a JSON object body; undefined for any other body (any body may be signed). */
function policyField(body: string | null | undefined): unknown {
  if (!body?.trimStart().startsWith('{')) return undefined;
  try {
    return (JSON.parse(body) as Record<string, unknown>)['policy'];
  } catch {
    return undefined;
  }
}
