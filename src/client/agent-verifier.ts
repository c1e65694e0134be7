// verifyAgentRequest(): the SDK's framework-neutral check of an agent's request, on WHATWG Request and Response,
// so Hono, Next.js route handlers and worker runtimes use it as is, Fastify and Express through an adapter
// (requireAgent is that adapter for Express). An agent proves itself in one of two ways:
// - a signature, checked against the registry on chain: the x-svc-agent-* headers, or an RFC 9421 signature
//   (ERC-8128 from a secp256k1 agent, Web Bot Auth from an Ed25519 agent, whose key is the one the chain registers
//   under the agent id its Signature-Agent names); the signer must be a registered agent with an unexpired proof from
//   the registry's own proof provider;
// - or, with the `credentials` option, a presented human-backed-agent credential (Authorization: SD-JWT), checked
//   offline against the registry service's JWKS and status list (credential-proof.ts): no chain read.
// Given a registry service's URL instead of the chain's (`service`), a verifier reads the registry's address (and the
// RPC of a chain the service runs itself) from the service's discovery document once, at its first signed request.
// Either way the signed message, the nonce or the presentation is used once, and the service's human-level policies
// and per-human quota apply. Refusals are answers to send as they are: 401 without a proof, 400 for a malformed RFC
// 9421 signature or presentation, 403 naming the reason, 409 for a replay, 403 {error, policy} or 429 with
// Retry-After for a policy, 503 when the chain, the registry's JWKS or status list, or the replay or quota store
// cannot be read. A verifier keeps what it read for a while (the chain for cacheTtlMs, the JWKS and status lists for
// their max-age), so a warm verification makes no round trip.
import type { Address, Hex } from 'viem';
import type { SelectiveClaim } from '../core/agent-credential.js';
import { ed25519JwkThumbprint } from '../core/agent-jwk.js';
import { agentKeyType } from '../core/agent-key.js';
import { type AgentPolicyInput, type CompiledPolicy, compilePolicy, enforcePolicy, type PolicySubject } from '../core/agent-policy.js';
import { CREDENTIAL_AUTH_SCHEME } from '../core/credential-request-binding.js';
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
import { type CredentialProofOptions, checkCredentialProof, credentialsOfDisclosed, presentedCredential } from './credential-proof.js';
import { RegistryReader } from './registry-reader.js';
import { memoryReplayGuard, type ReplayGuard } from './replay-guard.js';
import { discoverRegistry } from './service-registry.js';

export interface AgentVerifierOptions {
  /** The chain's JSON-RPC endpoint, for signed requests (with `registry`); a verifier of credentials only needs none. */
  rpcUrl?: string;
  /** The agent registry's address on that chain; with `credentials`, a credential must name it too. */
  registry?: Address;
  /**
   * Instead of `registry`: a registry service's base URL (http://127.0.0.1:3000). The registry's address, and the RPC
   * of a chain the service runs itself, are read from its discovery document at the first signed request and kept (a
   * failed read is tried again at the next request, which meanwhile answers 503). `rpcUrl` then overrides the RPC;
   * without either, the network's public Celo RPC is used.
   */
  service?: string;
  /** Which Celo network (default mainnet): the chain a signer or a credential's agent must be on. */
  network?: 'mainnet' | 'testnet';
  /** How long an agent's on-chain state is reused (default 60 s; 0: read the chain for every request). */
  cacheTtlMs?: number;
  /** Where signed messages, nonces and presentations are claimed once (default: this process's memory). */
  replay?: ReplayGuard;
  /**
   * The @authority values (host, and :port when not the scheme's default) RFC 9421 signatures and credential
   * presentations must name: the hosts this service is reached at. Default: the host of the request's own URL, which
   * comes from the Host header. That is right where a front routes by host (a worker's route, a CDN, a reverse proxy
   * with named virtual hosts), so a request for another host never arrives. A service reached directly, or behind a
   * proxy that rewrites Host (to 127.0.0.1:3000, say), must list its public hosts: otherwise it refuses every request
   * signed for its public name, or accepts one signed for another service that a client sent with that service's Host.
   */
  authorities?: readonly string[];
  /**
   * Accept human-backed-agent credentials (Authorization: SD-JWT <presentation>) issued for `audience` by the registry
   * service at `issuer` (or whose JWKS is `jwksUrl`), checked offline.
   */
  credentials?: CredentialProofOptions;
  /** Human-level policies: age, OFAC, nationality, agents per human, proof age, provider strength, a quota. */
  policy?: AgentPolicyInput | CompiledPolicy;
  /** Where the policy's per-human quota is counted (default: this process's memory; redisQuotaStore across instances). */
  quotas?: QuotaStore;
}

/** How the request was signed. */
export type AgentRequestScheme = 'x-svc-agent' | 'erc8128' | 'web-bot-auth';

/** What a verifier knows of any agent it lets in. */
interface AgentBasics extends RequestSignerIdentity {
  agentId: bigint;
  /** Live agents of the same human (for a credential: when it was issued). */
  agentCount: bigint;
  /** What the human disclosed with the proof (for a credential: what the agent chose to show of it). */
  credentials: PublicCredentials;
  /** The proof provider's verification strength, 0 to 100. */
  strength: number;
  /** Unix seconds. */
  proofExpiresAt: number;
  /** The draw on the policy's quota, when it has one (e.g. for RateLimit headers). */
  quota?: QuotaUse;
}

/** The agent that signed a request, checked on chain. */
export interface SigningAgent extends AgentBasics {
  scheme: AgentRequestScheme;
  /** The human's nullifier: the same for every agent of one human (the key of per-human quotas). */
  nullifier: bigint;
}

/** The agent that presented a human-backed-agent credential, checked offline. */
export interface CredentialAgent extends AgentBasics {
  scheme: 'sd-jwt';
  /** The human's pairwise pseudonym at this audience: the same for all of the human's agents here (the key of per-human quotas). */
  sub: string;
  /** The selectively disclosable claims the agent showed. */
  disclosed: Partial<Record<SelectiveClaim, boolean | string>>;
  /** The registry service that issued the credential. */
  issuer: string;
  /** Unix seconds: when the credential expires. */
  expiresAt: number;
}

/** The agent behind a request, with what policies read of it: `scheme` tells which kind. */
export type VerifiedRequestAgent = SigningAgent | CredentialAgent;

export type AgentVerification = { ok: true; agent: VerifiedRequestAgent } | { ok: false; response: Response };

export type AgentVerifier = (request: Request) => Promise<AgentVerification>;

const MISSING_SIGNATURE = 'Missing agent signature: sign the request with RFC 9421 (Signature-Input and Signature) or with the x-svc-agent-* headers';
const MISSING_CREDENTIAL = 'present a human-backed-agent credential for this audience (Authorization: SD-JWT <presentation>)';

const answer = (status: number, error: string, headers?: Record<string, string>): AgentVerification => ({
  ok: false,
  response: Response.json({ error }, { status, ...(headers ? { headers } : {}) }),
});

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
  const { service } = options;
  const cacheTtlMs = options.cacheTtlMs ?? 60_000;
  if (service !== undefined && options.registry !== undefined)
    throw new TypeError('createAgentVerifier: give registry (with rpcUrl) or service, not both');
  if (service === undefined && options.rpcUrl !== undefined && options.registry === undefined) {
    throw new TypeError('createAgentVerifier: rpcUrl needs registry too (or a service whose discovery names it)');
  }
  if (service === undefined && options.rpcUrl === undefined && options.credentials === undefined) {
    throw new TypeError('createAgentVerifier needs rpcUrl and registry or a service (signed requests), credentials (presented credentials), or both');
  }
  if (options.credentials && options.credentials.issuer === undefined && options.credentials.jwksUrl === undefined) {
    throw new TypeError('createAgentVerifier: credentials needs the registry service that issues them (issuer or jwksUrl)');
  }
  let reader: Promise<RegistryReader> | undefined =
    service === undefined && options.rpcUrl !== undefined && options.registry !== undefined
      ? Promise.resolve(new RegistryReader({ rpcUrl: options.rpcUrl, registry: options.registry, cacheTtlMs }))
      : undefined;
  /** Whether signed requests are checked (against a chain given, or one a service's discovery names). */
  const readsChain = reader !== undefined || service !== undefined;
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
    reader: RegistryReader,
    thumbprint: string,
    signatureAgent: string | undefined,
  ): Promise<{ key: Hex } | { problem: string }> => {
    const expected = `Signature-Agent must name the agent's key directory on a registry service (${KEY_DIRECTORY_TEMPLATE}, chainId ${chainId})`;
    if (signatureAgent === undefined) return { problem: `Web Bot Auth: ${expected}` };
    const directory = parseKeyDirectoryUrl(signatureAgent);
    // the directory's host is not trusted for anything: the key is the one the chain registers under the agent id
    if (!directory || directory.chainId !== chainId) return { problem: `Unknown agent: ${expected}` };
    const key = await reader.agentKeyOf(directory.agentId).catch((error: unknown) => {
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
    reader: RegistryReader,
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
          const resolved = await directoryKey(reader, thumbprint, signatureAgent);
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

  /** The policies and the quota, for an agent a signature or a credential proved. */
  const admit = async <A extends VerifiedRequestAgent>(agent: A, subject: PolicySubject, now: number): Promise<AgentVerification> => {
    if (!policy) return { ok: true, agent };
    const outcome = await enforcePolicy(policy, subject, { ...(quotas ? { quotas } : {}), scope: network, nowMs: now }).catch((error: unknown) => {
      throw new Unavailable(`The quota store failed: ${firstLine(error)}`);
    });
    if (!outcome.ok) return { ok: false, response: refusalResponse(outcome) };
    return { ok: true, agent: outcome.quota ? { ...agent, quota: outcome.quota } : agent };
  };

  const claimOnce = (key: string, ttlMs: number): Promise<boolean> =>
    Promise.resolve(replay.claim(key, ttlMs)).catch((error: unknown) => {
      throw new Unavailable(`The replay guard failed: ${firstLine(error)}`);
    });

  const signedAgent = async (reader: RegistryReader, request: Request, headers: HeaderBag, body: string, now: number): Promise<AgentVerification> => {
    const signed = hasRfc9421Signature(headers) ? await rfc9421(reader, request, headers, body, now) : await xSvcAgent(request, headers, body, now);
    if ('ok' in signed) return signed;
    const { signer } = signed;

    const [state, selfProvider] = await Promise.all([reader.agent(signer.agentKey), reader.selfProofProvider()]).catch((error: unknown) => {
      throw new Unavailable(`The agent check could not read the chain: ${firstLine(error)}`);
    });
    if (state.agentId === 0n || !state.verified) return answer(403, 'Agent not verified on-chain');
    if (state.provider.toLowerCase() !== selfProvider.toLowerCase()) return answer(403, "Agent was not verified by the registry's proof provider");
    const nowS = Math.floor(now / 1000);
    if (Number(state.proofExpiresAt) <= nowS) return answer(403, "Agent's human proof has expired: the human must refresh it");
    const [strength, maxProofAgeS] = await Promise.all([
      reader.providerStrength(state.provider),
      policy?.policy.maxProofAgeS === undefined ? undefined : reader.maxProofAgeS(),
    ]).catch((error: unknown) => {
      throw new Unavailable(`The agent check could not read the chain: ${firstLine(error)}`);
    });

    // no route in the key: a message (or a nonce) spent at one route is spent at all of them
    if (!(await claimOnce(signed.replayKey, signed.ttlMs))) {
      return answer(409, signed.scheme === 'x-svc-agent' ? 'Replay detected' : 'Replay detected: this nonce was used before; sign with a fresh one');
    }

    const agent: SigningAgent = {
      ...signer,
      scheme: signed.scheme,
      agentId: state.agentId,
      agentCount: state.agentCount,
      nullifier: state.nullifier,
      credentials: publicCredentials(state.credentials),
      strength,
      proofExpiresAt: Number(state.proofExpiresAt),
    };
    return admit(
      agent,
      {
        credentials: agent.credentials,
        agentCount: Number(state.agentCount),
        strength,
        proofExpiresAt: agent.proofExpiresAt,
        // the registry's own maximum, not the default: its expiry is the proof's time plus that (or the document's, sooner)
        ...(maxProofAgeS === undefined ? {} : { proofIssuedAt: agent.proofExpiresAt - Number(maxProofAgeS) }),
        nullifier: state.nullifier,
      },
      now,
    );
  };

  const credentialAgent = async (
    accepted: CredentialProofOptions,
    presentation: string,
    request: Request,
    body: string,
    now: number,
  ): Promise<AgentVerification> => {
    const check = await checkCredentialProof(
      presentation,
      { method: request.method, url: request.url, body },
      {
        ...accepted,
        authorities: options.authorities ?? [new URL(request.url).host],
        chainId,
        ...(options.registry === undefined ? {} : { registry: options.registry }),
        nowMs: now,
      },
    );
    if (!check.ok) return { ok: false, response: Response.json({ error: check.error, reason: check.reason }, { status: check.status }) };
    const { credential, agentKey, replayKey, ttlMs } = check.proof;
    if (!(await claimOnce(replayKey, ttlMs))) {
      return {
        ok: false,
        response: Response.json(
          { error: 'Replay detected: this presentation was used before; present the credential again, with a new key-binding JWT', reason: 'replay' },
          { status: 409 },
        ),
      };
    }
    const agent: CredentialAgent = {
      scheme: 'sd-jwt',
      keyType: credential.agentJwk.kty === 'OKP' ? 'ed25519' : 'secp256k1',
      agentKey,
      agentAddress: credential.agentAddress,
      agentId: credential.agentId,
      agentCount: BigInt(credential.humanAgentCount),
      sub: credential.sub,
      credentials: credentialsOfDisclosed(credential.disclosed),
      disclosed: credential.disclosed,
      strength: credential.strength,
      proofExpiresAt: credential.proofExpiresAt,
      issuer: credential.issuer,
      expiresAt: credential.expiresAt,
    };
    // no proof time offline: maxProofAgeS estimates it from the expiry and the registry's default maximum
    return admit(
      agent,
      {
        credentials: agent.credentials,
        agentCount: credential.humanAgentCount,
        strength: agent.strength,
        proofExpiresAt: agent.proofExpiresAt,
        nullifier: 0n,
        pseudonym: credential.sub,
      },
      now,
    );
  };

  const missing = (): AgentVerification =>
    options.credentials
      ? answer(401, readsChain ? `${MISSING_SIGNATURE}, or ${MISSING_CREDENTIAL}` : `Missing agent credential: ${MISSING_CREDENTIAL}`, {
          'WWW-Authenticate': `${CREDENTIAL_AUTH_SCHEME} audience=${JSON.stringify(options.credentials.audience)}`,
        })
      : answer(401, MISSING_SIGNATURE);

  const verify = async (request: Request): Promise<AgentVerification> => {
    const headers: HeaderBag = Object.fromEntries(request.headers);
    const signed = readsChain && (hasRfc9421Signature(headers) || hasSignatureHeaders(headers));
    const presentation = options.credentials && !signed ? presentedCredential(request.headers) : undefined;
    if (!signed && presentation === undefined) {
      if (options.credentials && /^SD-JWT\s/i.test(request.headers.get('authorization') ?? '')) {
        return answer(
          400,
          'Authorization: SD-JWT must be followed by one presentation: the SD-JWT, its disclosures and its key-binding JWT, joined by ~',
        );
      }
      return missing();
    }
    if (request.bodyUsed) return answer(500, 'verifyAgentRequest checks the signed body: call it before anything reads the request body');
    let body: string;
    try {
      // a request without a body (a GET) needs no copy of one: cloning a Request tees its stream, a good part of a check
      body = request.body === null ? '' : await request.clone().text();
    } catch (error) {
      return answer(400, `The request body could not be read: ${firstLine(error)}`);
    }
    const now = Date.now();
    if (signed) return signedAgent(await chainReader(), request, headers, body, now);
    return credentialAgent(options.credentials as CredentialProofOptions, presentation as string, request, body, now);
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
