// POST /api/demo/chain-verify (and /chain-verify-ed25519): a verified agent has the service's relayer submit its
// meta-transaction to the demo verifier contract, which checks the agent against the registry on chain (ECDSA
// agents sign EIP-712 MetaVerify; Ed25519 agents sign the contract's messageHash, 32 raw bytes, and are named by
// their raw public key as in the registry). Unlike the deployed service,
// the HTTP signature is checked first (a gate, not only a replay key). At most 3 relayed transactions per sliding
// hour per human (nullifier), counted by the store's rate limiter (services/rate-limits.ts).
import type { Hex } from 'viem';
import { z } from 'zod';
import type { DemoVerifierGateway, MetaVerifyRefusal } from '../chain/demo-verifier-gateway.js';
import type { ChainGateway } from '../chain/gateway.js';
import { badRequest, ServiceError } from '../core/errors.js';
import { type NetworkName, resolveNetworkOrAlias } from '../core/networks.js';
import type { AgentQueryService } from '../services/agent-queries.js';
import { RateLimiter, retryAfterSeconds } from '../services/rate-limits.js';
import type { SignedRequest, SignedRequestVerifier } from '../services/signed-requests.js';
import type { KeyValueStore } from '../store/key-value-store.js';

export const CHAIN_VERIFY_LIMIT = 3;
const WINDOW_MS = 60 * 60 * 1000;
/** A relay waits for its block (and its durability): longer than that, the claim of a crashed one lapses. */
const IN_FLIGHT_TTL_MS = 2 * 60 * 1000;

const integer = z.union([z.number().int().nonnegative(), z.string().regex(/^\d{1,78}$/)]).transform((value) => BigInt(value));
const bodySchemaOf = (signatureBytes: number) =>
  z.object({
    agentKey: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
    nonce: integer,
    deadline: integer,
    eip712Signature: z.string().regex(new RegExp(`^0x[0-9a-fA-F]{${signatureBytes * 2}}$`)),
    networkId: z
      .union([z.enum(['mainnet', 'testnet', 'celo-mainnet', 'celo-sepolia', '42220', '11142220']), z.literal([42220, 11142220])])
      .optional()
      .describe('The network of the demo verifier, when not the query network'),
  });
const SIGNATURE_BYTES = { secp256k1: 65, ed25519: 64 } as const;

const REFUSALS: Record<Exclude<MetaVerifyRefusal, { other: string }>, string> = {
  NotVerifiedAgent: 'Contract rejected: agent not verified in registry (isVerifiedAgent returned false)',
  MetaTxExpired: 'Contract rejected: meta-transaction deadline expired',
  MetaTxInvalidNonce: 'Contract rejected: invalid nonce (replay or out of order)',
  MetaTxInvalidSignature: 'Contract rejected: EIP-712 signature invalid — signer does not match agent key',
};
const ED25519_INVALID =
  'Contract rejected: Ed25519 signature invalid — it does not verify for the agent key over messageHash(agentKey, nonce, deadline)';

export interface ChainVerification {
  txHash: Hex;
  blockNumber: string;
  gasUsed: string;
  network: NetworkName;
  agentAddress: string;
  agentId: string;
  /** The contract's counters after this transaction. */
  verificationCount: string;
  totalVerifications: string;
  rateLimitRemaining: number;
}

export class DemoChainVerifyService {
  readonly #body: ReturnType<typeof bodySchemaOf>;
  readonly #limit: RateLimiter;

  constructor(
    /** Which contract: ECDSA agents (EIP-712) or Ed25519 agents. */
    readonly keyType: 'secp256k1' | 'ed25519',
    private readonly verifier: SignedRequestVerifier,
    private readonly queries: AgentQueryService,
    private readonly store: KeyValueStore,
    private readonly chains: ChainGateway,
    /** The demo verifier per network, with the relayer that pays for the transactions. */
    private readonly relayed: Partial<Record<NetworkName, DemoVerifierGateway>>,
  ) {
    this.#body = bodySchemaOf(SIGNATURE_BYTES[keyType]);
    const name = keyType === 'ed25519' ? 'demo-chain-verify-ed25519' : 'demo-chain-verify';
    this.#limit = new RateLimiter(store, { name, what: 'relayed transactions', limit: CHAIN_VERIFY_LIMIT, windowMs: WINDOW_MS });
  }

  /** What relay() reads from the body: the OpenAPI document shows this schema. */
  get bodySchema(): z.ZodType {
    return this.#body;
  }

  /** The contract a network's agents sign for (read-only where this service has no relayer); 400 where there is none. */
  contractOf(network: NetworkName): DemoVerifierGateway {
    const gateway = this.chains.get(network);
    const contract = this.relayed[network] ?? (this.keyType === 'ed25519' ? gateway.demoVerifierEd25519 : gateway.demoVerifier);
    if (!contract) throw badRequest(`Network ${network} has no Ed25519 demo verifier: set ${network.toUpperCase()}_DEMO_VERIFIER_ED25519_ADDRESS`);
    return contract;
  }

  #relayerOf(network: NetworkName): DemoVerifierGateway {
    const contract = this.contractOf(network);
    if (!contract.relaying) throw new ServiceError(503, `Relayer not configured for ${network}: set RELAYER_PRIVATE_KEY`);
    return contract;
  }

  async relay(request: SignedRequest, queryNetwork: NetworkName): Promise<ChainVerification> {
    if (!this.verifier.isSigned(request)) throw new ServiceError(401, 'Missing agent authentication headers');
    let parsed: z.output<ReturnType<typeof bodySchemaOf>>;
    try {
      parsed = this.#body.parse(JSON.parse(request.body || '{}'));
    } catch {
      const bytes = SIGNATURE_BYTES[this.keyType];
      throw badRequest(
        `Invalid request body: expected { agentKey (bytes32 hex), nonce, deadline (unix seconds), eip712Signature (${bytes}-byte hex), networkId? }`,
      );
    }
    const network = parsed.networkId === undefined ? queryNetwork : resolveNetworkOrAlias(parsed.networkId);
    const contract = this.#relayerOf(network);
    const caller = await this.verifier.verify(request, { network });
    const call = { agentKey: parsed.agentKey as Hex, nonce: parsed.nonce, deadline: parsed.deadline, signature: parsed.eip712Signature as Hex };
    const refusal = await contract.refusalOf(call);
    if (refusal === 'MetaTxInvalidSignature' && this.keyType === 'ed25519') throw badRequest(ED25519_INVALID);
    if (refusal !== undefined) throw badRequest(typeof refusal === 'string' ? REFUSALS[refusal] : `Contract rejected: ${refusal.other}`);

    // one relay at a time per meta-transaction: copies sent at once would all pass the contract's check above, then
    // fail on chain but one, each using the human's hourly budget
    const inFlight = `${this.#limit.rule.name}:in-flight:${network}:${call.agentKey.toLowerCase()}:${call.nonce}`;
    if (!(await this.store.setIfAbsent(inFlight, 1, IN_FLIGHT_TTL_MS))) {
      throw new ServiceError(409, 'This meta-transaction is already being relayed: wait for that answer (a nonce is used once)');
    }
    try {
      return await this.#relay(network, contract, call, caller.agentId, caller.agentAddress);
    } finally {
      // once mined, the nonce is spent and the contract refuses the copy; a relay that failed may be tried again
      await this.store.delete(inFlight);
    }
  }

  async #relay(
    network: NetworkName,
    contract: DemoVerifierGateway,
    call: { agentKey: Hex; nonce: bigint; deadline: bigint; signature: Hex },
    callerId: bigint,
    agentAddress: string,
  ): Promise<ChainVerification> {
    const agent = await this.queries.agentByKey(network, call.agentKey);
    const human = `${network}:${agent?.view.nullifier ?? 0n}`;
    const remaining = await this.#take(human);
    let sent: Awaited<ReturnType<DemoVerifierGateway['send']>>;
    try {
      sent = await contract.send(call);
    } catch (error) {
      // nothing was relayed (the chain refused or did not answer): the human's budget is not used
      await this.#limit.undo(human);
      throw error;
    }
    // the answer names the transaction: a restart of a local chain must not take it back (nonce and counts with it)
    await this.chains.get(network).makeDurable(sent.blockNumber);
    const counts = await contract.counts(call.agentKey);
    return {
      txHash: sent.txHash,
      blockNumber: sent.blockNumber.toString(),
      gasUsed: sent.gasUsed.toString(),
      network,
      agentAddress,
      agentId: (agent?.agentId ?? callerId).toString(),
      verificationCount: counts.verificationCount.toString(),
      totalVerifications: counts.totalVerifications.toString(),
      rateLimitRemaining: remaining,
    };
  }

  /** Takes one of the human's relayed transactions of the sliding hour (atomic), or 429 with when to retry. */
  async #take(human: string): Promise<number> {
    const { count, resetAt } = await this.#limit.hit(human);
    if (count > CHAIN_VERIFY_LIMIT) {
      const seconds = retryAfterSeconds(resetAt);
      throw new ServiceError(429, `Rate limited: ${CHAIN_VERIFY_LIMIT} per hour per human; retry in about ${Math.ceil(seconds / 60)} min`, seconds);
    }
    return CHAIN_VERIFY_LIMIT - count;
  }
}
