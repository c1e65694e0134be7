// Verifying a signed agent request: who signed it (the x-svc-agent-* headers, core/signed-request.ts, or an RFC 9421
// signature, core/rfc9421-verify.ts: ERC-8128 for secp256k1 agents, Web Bot Auth for Ed25519 ones), whether that agent is registered,
// backed by a proof that has not expired and that came from the registry's own proof provider (through the
// event-invalidated agent cache: a warm verify costs no RPC), and that the signed message was not used before
// anywhere: one claim per (signer, message) for every endpoint, REST and A2A alike, on the store port, so shared
// by every instance and kept across restarts until the signature's window has passed.

import type { Address, Hex } from 'viem';
import { z } from 'zod';
import { ed25519JwkThumbprint } from '../core/agent-jwk.js';
import { agentKeyType } from '../core/agent-key.js';
import { type AgentPolicy, agentPolicySchema, type CompiledPolicy, compilePolicy, policySubjectOf } from '../core/agent-policy.js';
import type { InterfaceCredentials } from '../core/credentials.js';
import { recoverPersonalSigner } from '../core/ecrecover.js';
import { ServiceError } from '../core/errors.js';
import type { QuotaInput } from '../core/human-quota.js';
import { KEY_DIRECTORY_TEMPLATE, parseKeyDirectoryUrl } from '../core/key-directory.js';
import { NETWORKS, type NetworkName } from '../core/networks.js';
import { hasRfc9421Signature, verifyRfc9421 } from '../core/rfc9421-verify.js';
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
import { HumanQuotas } from './human-quotas.js';

/** A request as the adapter received it: the raw body text is what was signed. */
export interface SignedRequest {
  headers: HeaderBag;
  method: string;
  /** The path and query (or the full URL) the request was sent to. */
  url: string;
  /** The Host the request was sent to, when `url` is a path (RFC 9421 signs the authority). */
  authority?: string;
  body?: string | null;
}

export interface VerifiedAgent extends RequestSignerIdentity {
  /** How the request was signed. */
  scheme: 'x-svc-agent' | 'erc8128' | 'web-bot-auth';
  network: NetworkName;
  agentId: bigint;
  /** Live agents of the same human. */
  agentCount: number;
  nullifier: bigint;
  /** Unix seconds. */
  proofExpiresAt: number;
  /** The proof provider's verification strength, 0 to 100. */
  strength: number;
  /** The proof provider's address (the registry's own: others are refused). */
  provider: Address;
  credentials: InterfaceCredentials;
}

const LOOPBACK_HOSTNAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/** What an RFC 9421 check needs of a request: its absolute URL, from the Host it arrived with when it was given a path. */
function absoluteUrl(request: SignedRequest): string | undefined {
  if (/^https?:\/\//i.test(request.url)) return request.url;
  if (request.authority === undefined || !URL.canParse(`http://${request.authority}/`)) return undefined;
  return `http://${request.authority}${request.url.startsWith('/') ? '' : '/'}${request.url}`;
}

export interface SignedRequestOptions {
  network: NetworkName;
  /** The caller's own policies for this request (demo verify, the A2A verify intent); the quota stays the service's. */
  policy?: Omit<AgentPolicy, 'quota'>;
}

/** The policies a caller may set for its own request: all but the quota, which is the service's. */
export const callerPolicySchema = agentPolicySchema.omit({ quota: true });

/** A caller's policy as sent (a JSON value), validated; undefined when none was sent, 400 naming the problem when malformed. */
export function callerPolicy(value: unknown): Omit<AgentPolicy, 'quota'> | undefined {
  if (value === undefined) return undefined;
  const parsed = callerPolicySchema.safeParse(value);
  if (!parsed.success) throw new ServiceError(400, `Invalid policy: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** The budget of signed requests that every human's agents share, on every signed endpoint. */
export const SIGNED_REQUESTS_QUOTA = 'signed-requests';

export class SignedRequestVerifier {
  readonly #thumbprints = new Map<Hex, Promise<string>>();
  readonly #quotas: HumanQuotas;
  readonly #policy: CompiledPolicy;

  /**
   * @param authorities the @authority values RFC 9421 signatures may name (PUBLIC_URL's host, SIGNATURE_AUTHORITIES);
   * empty: any loopback name, as a service on this machine only is reached.
   * @param quota signed requests per window per human, across all of the human's agents and every signed endpoint
   * (HUMAN_QUOTA_*); absent: none.
   */
  constructor(
    private readonly queries: AgentQueryService,
    private readonly store: KeyValueStore,
    private readonly clock: Clock = Date.now,
    private readonly authorities: readonly string[] = [],
    quota?: QuotaInput,
  ) {
    this.#quotas = new HumanQuotas(store, clock);
    this.#policy = compilePolicy(quota ? { quota: { ...quota, name: SIGNED_REQUESTS_QUOTA } } : {});
  }

  /** Whether an RFC 9421 signature (or a directory signature) may name this @authority (host[:port]). */
  acceptsAuthority(host: string): boolean {
    const lower = host.toLowerCase();
    if (this.authorities.length > 0) return this.authorities.includes(lower);
    return URL.canParse(`http://${lower}/`) && LOOPBACK_HOSTNAMES.has(new URL(`http://${lower}/`).hostname);
  }

  /** Which authorities are accepted, said to a caller who signed for another. */
  authorityRule(): string {
    return this.authorities.length > 0
      ? `this service answers at ${this.authorities.join(', ')}`
      : 'without PUBLIC_URL or SIGNATURE_AUTHORITIES this service accepts loopback names only (localhost, 127.0.0.1, [::1])';
  }

  /** Whether the request carries a signature at all (anonymous callers of endpoints that allow them). */
  isSigned(request: Pick<SignedRequest, 'headers'>): boolean {
    return hasSignatureHeaders(request.headers) || hasRfc9421Signature(request.headers);
  }

  /**
   * The agent that signed the request; 401 without a signature, 400 for a malformed RFC 9421 one, 403 when the
   * signature or the agent check fails, 409 on a replay.
   */
  async verify(request: SignedRequest, options: SignedRequestOptions): Promise<VerifiedAgent> {
    const { network } = options;
    const now = this.clock();
    const signed = hasRfc9421Signature(request.headers) ? await this.#rfc9421(request, network, now) : await this.#xSvcAgent(request, now);
    const { signer } = signed;
    const agent = await this.queries.agentByKey(network, signer.agentKey);
    if (!agent) {
      throw new ServiceError(
        403,
        `Agent not verified on-chain: no agent is registered with this key on ${network} (chain ${NETWORKS[network].chainId}); if it is registered on the other network, name it (network=mainnet or testnet)`,
      );
    }
    if (!agent.view.hasHumanProof) throw new ServiceError(403, 'Agent not verified on-chain: it has no proof of human');
    if (!agent.isVerified) throw new ServiceError(403, "Agent's human proof has expired: refresh it (POST /api/agent/refresh)");
    if (!agent.view.isSelfProvider) throw new ServiceError(403, "Agent was not verified by the registry's proof provider");

    // no endpoint name in the key: a message (or a nonce) spent at one endpoint or over A2A is spent at all of them
    if (!(await this.store.setIfAbsent(`replay:${signed.replayKey}`, 1, signed.ttlMs))) {
      throw new ServiceError(
        409,
        signed.scheme === 'x-svc-agent' ? 'Replay detected' : 'Replay detected: this nonce was used before; sign with a fresh one',
      );
    }

    // after the replay guard, so a replay costs the human nothing; a caller's policy never replaces the service's quota
    const policy = options.policy ? compilePolicy({ ...options.policy, ...(this.#policy.quota ? { quota: this.#policy.quota } : {}) }) : this.#policy;
    await this.#quotas.enforce(policy, policySubjectOf(agent.view), network);

    return {
      ...signer,
      scheme: signed.scheme,
      network,
      agentId: agent.agentId,
      agentCount: Number(agent.view.agentCountForHuman),
      nullifier: agent.view.nullifier,
      proofExpiresAt: Number(agent.view.proofExpiresAt),
      strength: agent.view.verificationStrength,
      provider: agent.view.proofProvider,
      credentials: interfaceCredentials(agent.view),
    };
  }

  async #xSvcAgent(request: SignedRequest, now: number): Promise<Signed> {
    const check = await recoverRequestSigner(request.headers, request, now, recoverPersonalSigner);
    if (!check.ok) throw new ServiceError(hasSignatureHeaders(request.headers) ? 403 : 401, check.error);
    return {
      scheme: 'x-svc-agent',
      signer: check.signer,
      replayKey: signedMessageKey(check),
      ttlMs: Math.max(1, check.timestamp + SIGNATURE_WINDOW_MS - now),
    };
  }

  async #rfc9421(request: SignedRequest, network: NetworkName, now: number): Promise<Signed> {
    const url = absoluteUrl(request);
    if (url === undefined)
      throw new ServiceError(
        400,
        'An RFC 9421 signature signs the authority: send the request with a Host header (over A2A: give the absolute URL it was signed for)',
      );
    const { host } = new URL(url);
    if (!this.acceptsAuthority(host)) throw new ServiceError(403, `Signed for another host (${host}): ${this.authorityRule()}`);
    const authorities = this.authorities.length > 0 ? this.authorities : [host];
    const { chainId } = NETWORKS[network];
    let directoryProblem: string | undefined;
    const check = await verifyRfc9421(
      { method: request.method, url, headers: request.headers, body: request.body ?? '' },
      {
        authorities,
        now,
        recover: recoverPersonalSigner,
        chainIds: [chainId],
        resolveEd25519Key: async (thumbprint, signatureAgent) => {
          const resolved = await this.#directoryKey(network, thumbprint, signatureAgent, authorities);
          if ('problem' in resolved) directoryProblem = resolved.problem;
          return 'key' in resolved ? resolved.key : undefined;
        },
      },
    );
    if (!check.ok) throw new ServiceError(check.status, directoryProblem ?? check.error);
    if (check.chainId !== undefined && check.chainId !== chainId) {
      throw new ServiceError(403, `The keyid names chain ${check.chainId}, but this request checks the agent on ${network} (chain ${chainId})`);
    }
    return { scheme: check.profile, signer: check.signer, replayKey: check.replayKey, ttlMs: Math.max(1, check.ttlMs) };
  }

  /**
   * The key of the Ed25519 agent a Web Bot Auth signature names: Signature-Agent must be that agent's key directory
   * here, and the agent's registered key must have the keyid's thumbprint. Why not, in words, otherwise.
   */
  async #directoryKey(
    network: NetworkName,
    thumbprint: string,
    signatureAgent: string | undefined,
    authorities: readonly string[],
  ): Promise<{ key: Hex } | { problem: string }> {
    const { chainId } = NETWORKS[network];
    const expected = `Signature-Agent must name the agent's key directory here (${KEY_DIRECTORY_TEMPLATE}, chainId ${chainId})`;
    if (signatureAgent === undefined) return { problem: `Web Bot Auth: ${expected}` };
    const directory = parseKeyDirectoryUrl(signatureAgent);
    if (!directory || !authorities.includes(directory.host) || directory.chainId !== chainId) return { problem: `Unknown agent: ${expected}` };
    const view = await this.queries.agentById(network, directory.agentId);
    if (!view || agentKeyType(view.agentKey) !== 'ed25519') {
      return { problem: `Unknown agent: no Ed25519 agent ${directory.agentId} is registered on ${network}` };
    }
    if ((await this.#thumbprint(view.agentKey)) !== thumbprint) {
      return { problem: `Unknown agent: the keyid is not the JWK thumbprint of agent ${directory.agentId}'s registered key` };
    }
    return { key: view.agentKey };
  }

  /** JWK thumbprints of registered keys, kept: an agent's key never changes under its id. */
  #thumbprint(agentKey: Hex): Promise<string> {
    let thumbprint = this.#thumbprints.get(agentKey);
    if (thumbprint === undefined) {
      if (this.#thumbprints.size >= 10_000) this.#thumbprints.clear();
      thumbprint = ed25519JwkThumbprint(agentKey);
      this.#thumbprints.set(agentKey, thumbprint);
    }
    return thumbprint;
  }
}

/** A good signature of either scheme, before the agent check. */
interface Signed {
  scheme: VerifiedAgent['scheme'];
  signer: RequestSignerIdentity;
  replayKey: string;
  ttlMs: number;
}
