// requireAgent(): an Express middleware for other services that accept only agents backed by a human. It checks
// a signed agent request itself, against the registry on chain: who signed (the signature), that the key is a
// registered agent with a proof that has not expired, from the registry's own proof provider, and that the
// signed message is used once (the replay key is the signer and the message, as in the registry service, so
// another encoding or another signature of the same message is a replay too; ECDSA signatures must be in their
// one canonical form, low s and v 27/28, as the service requires). The verified agent is put on the request as
// `req.agent`.
//
// The signature covers the exact body text: mount a text parser before it (express.text({ type: '*/*' })), or
// keep the raw text as `req.rawBody` in express.json's `verify` hook.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { type Address, type Chain, createPublicClient, type Hex, http, parseAbi } from 'viem';
import { celo, celoSepolia } from 'viem/chains';
import {
  type HeaderBag,
  hasSignatureHeaders,
  type RequestSignerIdentity,
  recoverRequestSigner,
  SIGNATURE_WINDOW_MS,
  signedMessageKey,
} from '../core/signed-request.js';

/** The registry functions the check reads (the deployed registry on Celo has each of them). */
const REGISTRY_ABI = parseAbi([
  'function getAgentId(bytes32 agentKey) view returns (uint256)',
  'function isVerifiedAgent(bytes32 agentKey) view returns (bool)',
  'function getProofProvider(uint256 agentId) view returns (address)',
  'function selfProofProvider() view returns (address)',
  'function getAgentCountForHuman(uint256 nullifier) view returns (uint256)',
  'function getHumanNullifier(uint256 agentId) view returns (uint256)',
]);

export interface VerifiedRequestAgent extends RequestSignerIdentity {
  agentId: bigint;
  /** Live agents of the same human. */
  agentCount: bigint;
}

/** Where a signed message is claimed once; default: this process's memory (use a shared store across instances). */
export interface ReplayGuard {
  /**
   * True the first time `key` is claimed within `ttlMs`. The key names the signer and the message it signed
   * (`<agent key>:<message hash>`), so one guard can serve every route of a service, and a message spent at one
   * route is spent at all of them.
   */
  claim(key: string, ttlMs: number): boolean | Promise<boolean>;
}

export interface RequireAgentOptions {
  /** The chain's JSON-RPC endpoint. */
  rpcUrl: string;
  /** The agent registry's address on that chain. */
  registry: Address;
  /** Which Celo network the RPC serves (default mainnet). */
  network?: 'mainnet' | 'testnet';
  /** How long an agent's on-chain state is reused (default 60 s; 0: read the chain for every request). */
  cacheTtlMs?: number;
  replay?: ReplayGuard;
}

declare module 'express-serve-static-core' {
  interface Request {
    /** The agent that signed this request (set by requireAgent). */
    agent?: VerifiedRequestAgent;
    /** The raw body text, when an app keeps it (for signature checks after a JSON parser). */
    rawBody?: string;
  }
}

/** A replay guard in this process's memory: entries leave when their signature's window has passed. */
export function memoryReplayGuard(maxEntries = 100_000): ReplayGuard {
  const seen = new Map<string, number>();
  return {
    claim(key, ttlMs) {
      const now = Date.now();
      for (const [k, until] of seen) {
        if (until > now && seen.size < maxEntries) break;
        seen.delete(k); // oldest first (insertion order): expired ones, or the oldest when full
      }
      if ((seen.get(key) ?? 0) > now) return false;
      seen.set(key, now + ttlMs);
      return true;
    },
  };
}

function rawBodyOf(req: Request): string | undefined {
  if (req.rawBody !== undefined) return req.rawBody;
  if (typeof req.body === 'string') return req.body;
  if (Buffer.isBuffer(req.body)) return req.body.toString('utf8');
  if (req.body === undefined || (typeof req.body === 'object' && req.body !== null && Object.keys(req.body).length === 0)) return '';
  return undefined; // parsed already: the signed text is gone
}

export function requireAgent(options: RequireAgentOptions): RequestHandler {
  const chain: Chain = options.network === 'testnet' ? celoSepolia : celo;
  const client = createPublicClient({ chain, transport: http(options.rpcUrl) });
  const registry = { address: options.registry, abi: REGISTRY_ABI } as const;
  const ttl = options.cacheTtlMs ?? 60_000;
  const replay = options.replay ?? memoryReplayGuard();
  const agents = new Map<Hex, { until: number; state: Promise<{ agentId: bigint; verified: boolean; provider: Address; agentCount: bigint }> }>();
  let selfProvider: { until: number; address: Promise<Address> } | undefined;

  const stateOf = (agentKey: Hex) => {
    const cached = agents.get(agentKey);
    if (cached && cached.until > Date.now()) return cached.state;
    const state = (async () => {
      const agentId = await client.readContract({ ...registry, functionName: 'getAgentId', args: [agentKey] });
      if (agentId === 0n) return { agentId, verified: false, provider: '0x0000000000000000000000000000000000000000' as Address, agentCount: 0n };
      const [verified, provider, nullifier] = await Promise.all([
        client.readContract({ ...registry, functionName: 'isVerifiedAgent', args: [agentKey] }),
        client.readContract({ ...registry, functionName: 'getProofProvider', args: [agentId] }),
        client.readContract({ ...registry, functionName: 'getHumanNullifier', args: [agentId] }),
      ]);
      const agentCount = await client.readContract({ ...registry, functionName: 'getAgentCountForHuman', args: [nullifier] });
      return { agentId, verified, provider, agentCount };
    })();
    agents.set(agentKey, { until: Date.now() + ttl, state });
    // Only an accepted agent is remembered: one refused now may register or refresh its proof a moment later.
    state.then(
      (s) => !s.verified && agents.delete(agentKey),
      () => agents.delete(agentKey),
    );
    return state;
  };
  const registryProvider = () => {
    if (selfProvider && selfProvider.until > Date.now()) return selfProvider.address;
    const address = client.readContract({ ...registry, functionName: 'selfProofProvider' });
    selfProvider = { until: Date.now() + ttl, address };
    address.catch(() => {
      selfProvider = undefined;
    });
    return address;
  };

  return (req: Request, res: Response, next: NextFunction) => {
    const refuse = (status: number, error: string) => {
      res.status(status).json({ error });
    };
    const headers = req.headers as HeaderBag;
    if (!hasSignatureHeaders(headers)) return refuse(401, 'Missing agent authentication headers');
    const body = rawBodyOf(req);
    if (body === undefined) return refuse(500, 'requireAgent needs the raw body: mount express.text() before it, or keep req.rawBody');
    void (async () => {
      const now = Date.now();
      const check = await recoverRequestSigner(headers, { method: req.method, url: req.originalUrl, body }, now);
      if (!check.ok) return refuse(403, check.error);
      const state = await stateOf(check.signer.agentKey);
      if (state.agentId === 0n || !state.verified) return refuse(403, 'Agent not verified on-chain');
      if (state.provider.toLowerCase() !== (await registryProvider()).toLowerCase()) {
        return refuse(403, "Agent was not verified by the registry's proof provider");
      }
      if (!(await replay.claim(signedMessageKey(check), Math.max(1, check.timestamp + SIGNATURE_WINDOW_MS - now))))
        return refuse(409, 'Replay detected');
      req.agent = { ...check.signer, agentId: state.agentId, agentCount: state.agentCount };
      next();
    })().catch((error: unknown) =>
      refuse(503, `The agent check could not read the chain: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`),
    );
  };
}
