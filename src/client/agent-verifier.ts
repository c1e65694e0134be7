// verifyAgentRequest(): the SDK's framework-neutral check of a signed agent request, on WHATWG Request and Response,
// so Hono, Next.js route handlers and worker runtimes use it as is, Fastify and Express through an adapter
// (requireAgent is that adapter for Express). It checks, against the registry on chain:
// - who signed: the x-svc-agent-* headers, or an RFC 9421 signature (ERC-8128 from a secp256k1 agent, Web Bot Auth
//   from an Ed25519 agent, whose key is the one the chain registers under the agent id its Signature-Agent names);
// - that the signer is a registered agent with an unexpired proof from the registry's own proof provider;
// - that the signed message (x-svc-agent) or the nonce (RFC 9421) is used once;
// - the service's human-level policies and per-human quota, if it has them.
// Refusals are answers to send as they are: 401 without a signature, 400 for a malformed RFC 9421 one, 403 naming
// the reason, 409 for a replay, 403 {error, policy} or 429 with Retry-After for a policy, 503 when the chain (or the
// replay or quota store) cannot be read. A verifier keeps what it read of the chain for cacheTtlMs, so a warm
// verification makes no RPC round trip. Given a registry service's URL instead of the chain's, it reads the registry's
// address (and the RPC of a local chain) from the service's discovery document once, at its first request.
import type { Address, Hex } from 'viem';
import { ed25519JwkThumbprint } from '../core/agent-jwk.js';
import { agentKeyType } from '../core/agent-key.js';
import { type AgentPolicyInput, type CompiledPolicy, compilePolicy, enforcePolicy, type PolicySubject } from '../core/agent-policy.js';
import { type PublicCredentials, publicCredentials } from '../core/credentials.js';
import { recoverPersonalSigner } from '../core/ecrecover.js';
import { MemoryQuotaStore, type QuotaStore, type QuotaUse } from '../core/human-quota.js';
import { KEY_DIRECTORY_TEMPLATE, parseKeyDirectoryUrl } from '../core/key-directory.js';
import { NETWORKS } from '../core/networks.js';
import { refusalResponse } from '../core/policy-refusal.js';
import { hasRfc9421Signature, verifyRfc9421 } from '../core/rfc9421-verify.js';
import {
  type HeaderBag,
  hasSignatureHeaders,
  type RequestSignerIdentity,
  recoverRequestSigner,
  SIGNATURE_WINDOW_MS,
  signedMessageKey,
} from '../core/signed-request.js';
import { RegistryReader } from './registry-reader.js';
import { memoryReplayGuard, type ReplayGuard } from './replay-guard.js';
import { discoverRegistry } from './service-registry.js';

/** The chain to read: its RPC and the registry's address. */
export interface VerifierChain {
  /** The chain's JSON-RPC endpoint. */
  rpcUrl: string;
  /** The agent registry's address on that chain. */
  registry: Address;
  service?: never;
}

/** A registry service whose discovery document names the chain and the registry. */
export interface VerifierService {
  /**
   * The service's base URL (http://127.0.0.1:3000): the registry's address, and the RPC of a chain the service runs
   * itself, are read from its discovery document at the first request and kept (a failed read is tried again at the
   * next request, which meanwhile answers 503).
   */
  service: string;
  /** The RPC to read the chain through; default: the one discovery names, else the network's public Celo RPC. */
  rpcUrl?: string;
  registry?: never;
}

export type AgentVerifierOptions = AgentVerifierSettings & (VerifierChain | VerifierService);

export interface AgentVerifierSettings {
  /** Which Celo network the RPC serves (default mainnet). */
  network?: 'mainnet' | 'testnet';
  /** How long an agent's on-chain state is reused (default 60 s; 0: read the chain for every request). */
  cacheTtlMs?: number;
  /** Where signed messages and nonces are claimed once (default: this process's memory). */
  replay?: ReplayGuard;
  /**
   * The @authority values (host, and :port when not the scheme's default) RFC 9421 signatures must name: the hosts
   * this service is reached at. Default: the host of the request's own URL, which comes from the Host header. That
   * is right where a front routes by host (a worker's route, a CDN, a reverse proxy with named virtual hosts), so a
   * request for another host never arrives. A service reached directly, or behind a proxy that rewrites Host (to
   * 127.0.0.1:3000, say), must list its public hosts: otherwise it refuses every request signed for its public
   * name, or accepts one signed for another service that a client sent with that service's Host.
   */
  authorities?: readonly string[];
  /** Human-level policies: age, OFAC, nationality, agents per human, proof age, provider strength, a quota. */
  policy?: AgentPolicyInput | CompiledPolicy;
  /** Where the policy's per-human quota is counted (default: this process's memory; redisQuotaStore across instances). */
  quotas?: QuotaStore;
}

/** How the request was signed. */
export type AgentRequestScheme = 'x-svc-agent' | 'erc8128' | 'web-bot-auth';

/** The agent that signed a request, with what policies read of it. */
export interface VerifiedRequestAgent extends RequestSignerIdentity {
  scheme: AgentRequestScheme;
  agentId: bigint;
  /** Live agents of the same human. */
  agentCount: bigint;
  /** The human's nullifier: the same for every agent of one human (the key of per-human quotas). */
  nullifier: bigint;
  /** What the human disclosed with the proof. */
  credentials: PublicCredentials;
  /** The proof provider's verification strength, 0 to 100. */
  strength: number;
  /** Unix seconds. */
  proofExpiresAt: number;
  /** The draw on the policy's quota, when it has one (e.g. for RateLimit headers). */
  quota?: QuotaUse;
}

export type AgentVerification = { ok: true; agent: VerifiedRequestAgent } | { ok: false; response: Response };

export type AgentVerifier = (request: Request) => Promise<AgentVerification>;

const MISSING_SIGNATURE = 'Missing agent signature: sign the request with RFC 9421 (Signature-Input and Signature) or with the x-svc-agent-* headers';

const answer = (status: number, error: string): AgentVerification => ({ ok: false, response: Response.json({ error }, { status }) });

/** The first line of an error (viem's first line is its short message; the rest may name the RPC URL). */
const firstLine = (error: unknown): string => (error instanceof Error ? error.message : String(error)).split('\n')[0] as string;

/** A failure of something the verifier depends on: 503, naming it. */
class Unavailable extends Error {}

const isCompiled = (policy: AgentPolicyInput | CompiledPolicy): policy is CompiledPolicy => typeof (policy as CompiledPolicy).check === 'function';

/** A good signature of either scheme, before the agent check. */
interface Signed {
  scheme: AgentRequestScheme;
  signer: RequestSignerIdentity;
  replayKey: string;
  ttlMs: number;
}

/** A verifier with its own cache: build it once and call it for every request. */
export function createAgentVerifier(options: AgentVerifierOptions): AgentVerifier {
  const network = options.network ?? 'mainnet';
  const { chainId } = NETWORKS[network];
  const cacheTtlMs = options.cacheTtlMs ?? 60_000;
  const { service } = options;
  let reader: Promise<RegistryReader> | undefined =
    service === undefined ? Promise.resolve(new RegistryReader({ rpcUrl: options.rpcUrl, registry: options.registry, cacheTtlMs })) : undefined;
  /** The registry reader; with a service, built from its discovery document on first use (a failed read is not kept). */
  const chainReader = (): Promise<RegistryReader> => {
    if (reader === undefined && service !== undefined) {
      const loading = discoverRegistry(service, network, options.rpcUrl === undefined ? {} : { rpcUrl: options.rpcUrl }).then(
        (found) => new RegistryReader({ rpcUrl: found.rpcUrl, registry: found.registry, cacheTtlMs }),
        (error: unknown) => {
          if (reader === loading) reader = undefined;
          throw new Unavailable(`The agent check could not learn the registry from ${service}: ${firstLine(error)}`);
        },
      );
      reader = loading;
    }
    return reader as Promise<RegistryReader>;
  };
  const replay = options.replay ?? memoryReplayGuard();
  // a policy is checked here, at start: a mistake in it is the service's, not a request's
  const policy = options.policy === undefined ? undefined : isCompiled(options.policy) ? options.policy : compilePolicy(options.policy);
  const quotas = options.quotas ?? (policy?.quota ? new MemoryQuotaStore() : undefined);
  const thumbprints = new Map<Hex, Promise<string>>();

  const thumbprintOf = (agentKey: Hex): Promise<string> => {
    let thumbprint = thumbprints.get(agentKey);
    if (thumbprint === undefined) {
      if (thumbprints.size >= 10_000) thumbprints.clear();
      thumbprint = ed25519JwkThumbprint(agentKey);
      thumbprints.set(agentKey, thumbprint);
    }
    return thumbprint;
  };

  /** The registered key of the agent a Web Bot Auth Signature-Agent names, if its thumbprint is the keyid; else why not. */
  const directoryKey = async (
    chain: RegistryReader,
    thumbprint: string,
    signatureAgent: string | undefined,
  ): Promise<{ key: Hex } | { problem: string }> => {
    const expected = `Signature-Agent must name the agent's key directory on a registry service (${KEY_DIRECTORY_TEMPLATE}, chainId ${chainId})`;
    if (signatureAgent === undefined) return { problem: `Web Bot Auth: ${expected}` };
    const directory = parseKeyDirectoryUrl(signatureAgent);
    // the directory's host is not trusted for anything: the key is the one the chain registers under the agent id
    if (!directory || directory.chainId !== chainId) return { problem: `Unknown agent: ${expected}` };
    const key = await chain.agentKeyOf(directory.agentId).catch((error: unknown) => {
      throw new Unavailable(`The agent check could not read the chain: ${firstLine(error)}`);
    });
    if (key === undefined || agentKeyType(key) !== 'ed25519') {
      return { problem: `Unknown agent: no Ed25519 agent ${directory.agentId} is registered on ${network}` };
    }
    if ((await thumbprintOf(key)) !== thumbprint) {
      return { problem: `Unknown agent: the keyid is not the JWK thumbprint of agent ${directory.agentId}'s registered key` };
    }
    return { key };
  };

  const rfc9421 = async (
    chain: RegistryReader,
    request: Request,
    headers: HeaderBag,
    body: string,
    now: number,
  ): Promise<Signed | AgentVerification> => {
    const authorities = options.authorities ?? [new URL(request.url).host];
    let directoryProblem: string | undefined;
    const check = await verifyRfc9421(
      { method: request.method, url: request.url, headers, body },
      {
        authorities,
        now,
        recover: recoverPersonalSigner,
        chainIds: [chainId],
        resolveEd25519Key: async (thumbprint, signatureAgent) => {
          const resolved = await directoryKey(chain, thumbprint, signatureAgent);
          if ('problem' in resolved) directoryProblem = resolved.problem;
          return 'key' in resolved ? resolved.key : undefined;
        },
      },
    );
    if (!check.ok) return answer(check.status, directoryProblem ?? check.error);
    return { scheme: check.profile, signer: check.signer, replayKey: check.replayKey, ttlMs: Math.max(1, check.ttlMs) };
  };

  const xSvcAgent = async (request: Request, headers: HeaderBag, body: string, now: number): Promise<Signed | AgentVerification> => {
    const check = await recoverRequestSigner(headers, { method: request.method, url: request.url, body }, now, recoverPersonalSigner);
    if (!check.ok) return answer(403, check.error);
    return {
      scheme: 'x-svc-agent',
      signer: check.signer,
      replayKey: signedMessageKey(check),
      ttlMs: Math.max(1, check.timestamp + SIGNATURE_WINDOW_MS - now),
    };
  };

  const verify = async (request: Request): Promise<AgentVerification> => {
    const headers: HeaderBag = Object.fromEntries(request.headers);
    const isRfc9421 = hasRfc9421Signature(headers);
    if (!isRfc9421 && !hasSignatureHeaders(headers)) return answer(401, MISSING_SIGNATURE);
    if (request.bodyUsed) return answer(500, 'verifyAgentRequest checks the signed body: call it before anything reads the request body');
    let body: string;
    try {
      body = await request.clone().text();
    } catch (error) {
      return answer(400, `The request body could not be read: ${firstLine(error)}`);
    }
    const chain = await chainReader();
    const now = Date.now();
    const signed = isRfc9421 ? await rfc9421(chain, request, headers, body, now) : await xSvcAgent(request, headers, body, now);
    if ('ok' in signed) return signed;
    const { signer } = signed;

    const [state, selfProvider] = await Promise.all([chain.agent(signer.agentKey), chain.selfProofProvider()]).catch((error: unknown) => {
      throw new Unavailable(`The agent check could not read the chain: ${firstLine(error)}`);
    });
    if (state.agentId === 0n || !state.verified) return answer(403, 'Agent not verified on-chain');
    if (state.provider.toLowerCase() !== selfProvider.toLowerCase()) return answer(403, "Agent was not verified by the registry's proof provider");
    const nowS = Math.floor(now / 1000);
    if (Number(state.proofExpiresAt) <= nowS) return answer(403, "Agent's human proof has expired: the human must refresh it");
    const [strength, maxProofAgeS] = await Promise.all([
      chain.providerStrength(state.provider),
      policy?.policy.maxProofAgeS === undefined ? undefined : chain.maxProofAgeS(),
    ]).catch((error: unknown) => {
      throw new Unavailable(`The agent check could not read the chain: ${firstLine(error)}`);
    });

    // no route in the key: a message (or a nonce) spent at one route is spent at all of them
    const fresh = await Promise.resolve(replay.claim(signed.replayKey, signed.ttlMs)).catch((error: unknown) => {
      throw new Unavailable(`The replay guard failed: ${firstLine(error)}`);
    });
    if (!fresh)
      return answer(409, signed.scheme === 'x-svc-agent' ? 'Replay detected' : 'Replay detected: this nonce was used before; sign with a fresh one');

    const agent: VerifiedRequestAgent = {
      ...signer,
      scheme: signed.scheme,
      agentId: state.agentId,
      agentCount: state.agentCount,
      nullifier: state.nullifier,
      credentials: publicCredentials(state.credentials),
      strength,
      proofExpiresAt: Number(state.proofExpiresAt),
    };
    if (!policy) return { ok: true, agent };
    const subject: PolicySubject = {
      credentials: agent.credentials,
      agentCount: Number(state.agentCount),
      strength,
      proofExpiresAt: agent.proofExpiresAt,
      // the registry's own maximum, not the default: its expiry is the proof's time plus that (or the document's, sooner)
      ...(maxProofAgeS === undefined ? {} : { proofIssuedAt: agent.proofExpiresAt - Number(maxProofAgeS) }),
      nullifier: state.nullifier,
    };
    const outcome = await enforcePolicy(policy, subject, { ...(quotas ? { quotas } : {}), scope: network, nowMs: now }).catch((error: unknown) => {
      throw new Unavailable(`The quota store failed: ${firstLine(error)}`);
    });
    if (!outcome.ok) return { ok: false, response: refusalResponse(outcome) };
    return { ok: true, agent: outcome.quota ? { ...agent, quota: outcome.quota } : agent };
  };

  return (request) =>
    verify(request).catch((error: unknown) => {
      if (error instanceof Unavailable) return answer(503, error.message);
      throw error;
    });
}

const verifiers = new WeakMap<AgentVerifierOptions, AgentVerifier>();

/**
 * The agent that signed `request`, or the answer that refuses it. The verifier (its cache of chain reads, its replay
 * guard and quota store unless given) is built on the first call with an options object and kept for that object:
 * pass the same object every time (a new object per request reads the chain every time and forgets spent nonces),
 * and do not change it once used; or build one with createAgentVerifier.
 */
export function verifyAgentRequest(request: Request, options: AgentVerifierOptions): Promise<AgentVerification> {
  let verifier = verifiers.get(options);
  if (!verifier) {
    verifier = createAgentVerifier(options);
    verifiers.set(options, verifier);
  }
  return verifier(request);
}
