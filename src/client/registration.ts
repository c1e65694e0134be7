// Registering an agent through a registry service: open a session (any mode), wait until the human has proved
// and the chain holds the agent, export the key the service generated, and turn it into a request signer; and the
// other calls a command line or a script makes of it: deregistration, an agent's proof of human, discovery.

import { privateKeyToAccount } from 'viem/accounts';
import { DISCOVERY_PATH } from '../core/endpoints.js';
import type { RequestSigner } from '../core/signed-request.js';

export interface RegistrationRequest {
  mode: 'linked' | 'wallet-free' | 'ed25519' | 'ed25519-linked' | 'privy' | 'smartwallet';
  network?: 'mainnet' | 'testnet';
  humanAddress?: string;
  disclosures?: { minimumAge?: 0 | 18 | 21; ofac?: boolean; nationality?: boolean; name?: boolean };
  agentAddress?: string;
  agentSignature?: string;
  /** smartwallet: the smart account's signature of the same challenge (ERC-1271, or ERC-6492 while counterfactual). */
  guardianSignature?: string;
  ed25519Pubkey?: string;
  ed25519Signature?: string;
}

/** What every session answer carries. */
export interface SessionState {
  sessionToken: string;
  stage: 'qr-ready' | 'proof-received' | 'completed' | 'failed';
  expiresAt: string;
  humanInstructions: string[];
  error?: string;
  [field: string]: unknown;
}

export interface OpenedRegistration extends SessionState {
  deepLink: string;
  qrData: string;
  agentAddress: string;
}

export interface OpenedDeregistration extends SessionState {
  deepLink: string;
  qrData: string;
  agentId: number;
  agentAddress: string;
  network: 'mainnet' | 'testnet';
}

export interface DeregistrationRequest {
  /** The agent's address (for an Ed25519 agent: the address derived from its key, as agent info reports it). */
  agentAddress: string;
  network?: 'mainnet' | 'testnet';
  disclosures?: RegistrationRequest['disclosures'];
}

/** GET /api/agent/verify/{chainId}/{agentId}: whether the agent has a proof of human, and whose. */
export interface AgentProof {
  agentId: number;
  chainId: number;
  isVerified: boolean;
  proofProvider: string;
  /** The proof comes from the registry's own provider. */
  isSelfProvider: boolean;
  verificationStrength: number;
  strengthLabel: string;
  humanNullifier: string;
  agentCountForHuman: number;
  [field: string]: unknown;
}

/** One network's registry, as the service's discovery document names it. */
export interface DiscoveredChain {
  chainId: number;
  registry: `0x${string}`;
  /** The JSON-RPC endpoint of a chain the service runs itself; absent for an external one (its URL may hold a key). */
  rpcUrl?: string;
}

/** The discovery document (GET /.well-known/self-agent-id.json); the fields the SDK reads are typed. */
export interface ServiceDiscovery {
  name: string;
  apiBase: string;
  networks: ('mainnet' | 'testnet')[];
  registrationModes: RegistrationRequest['mode'][];
  chains?: Partial<Record<'mainnet' | 'testnet', DiscoveredChain>>;
  [field: string]: unknown;
}

export { DISCOVERY_PATH };

export interface WaitOptions {
  /** Default 30 minutes, a session's lifetime. */
  timeoutMs?: number;
  /** Default 2 s. */
  pollIntervalMs?: number;
  /** Called with every status read, e.g. to show the stage while the human scans. */
  onStatus?: (state: SessionState) => void;
  /** Stops the wait (rejects with the signal's reason). */
  signal?: AbortSignal;
}

export interface ExportedKey {
  privateKey: `0x${string}`;
  keyType: 'secp256k1' | 'ed25519';
  publicKey?: `0x${string}`;
  agentAddress: string;
  agentId: number;
  network: 'mainnet' | 'testnet';
}

/** A registry service's error answer ({"error": ...}) with its HTTP status. */
export class RegistryError extends Error {
  override readonly name: string = 'RegistryError';

  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A session still open when the wait gave up (status 408): its token still follows it until it expires. */
export class SessionWaitTimeout extends RegistryError {
  override readonly name = 'SessionWaitTimeout';

  constructor(
    readonly state: SessionState,
    what: string,
  ) {
    super(408, `The ${what} is still ${state.stage}`);
  }
}

/** The service did not answer at all (refused, unknown host, reset): nothing was done. */
export class ServiceUnreachable extends Error {
  override readonly name = 'ServiceUnreachable';

  constructor(
    readonly url: string,
    cause: unknown,
  ) {
    const reason = (cause as { cause?: { code?: string; message?: string } }).cause;
    super(`No answer from ${url}: ${reason?.code ?? reason?.message ?? (cause instanceof Error ? cause.message : String(cause))}`, { cause });
  }
}

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', stop, { once: true });
  });

export class RegistryClient {
  readonly #base: string;
  readonly #fetch: typeof fetch;

  constructor(baseUrl: string, options: { fetch?: typeof fetch } = {}) {
    this.#base = baseUrl.replace(/\/+$/, '');
    this.#fetch = options.fetch ?? fetch;
  }

  /** POST /api/agent/register: the session token, deep link and QR data for the human. */
  openRegistration(request: RegistrationRequest): Promise<OpenedRegistration> {
    return this.#call('POST', '/api/agent/register', request);
  }

  /** The session's status (a refreshed token each time). */
  registrationStatus(token: string): Promise<SessionState> {
    return this.#call('GET', `/api/agent/register/status?token=${encodeURIComponent(token)}`);
  }

  /** Polls the session until it is completed (resolves) or failed (throws RegistryError 409) or the wait ends (SessionWaitTimeout). */
  waitForRegistration(token: string, options: WaitOptions = {}): Promise<SessionState> {
    return this.#wait((current) => this.registrationStatus(current), token, 'registration', options);
  }

  /** The key the service generated for the agent, once the registration is completed; handed out once (then 409): keep it. */
  exportKey(token: string): Promise<ExportedKey> {
    return this.#call('POST', '/api/agent/register/export', { token });
  }

  /** POST /api/agent/deregister: a session in which the agent's human proves again; the NFT is burned when it completes. */
  openDeregistration(request: DeregistrationRequest): Promise<OpenedDeregistration> {
    return this.#call('POST', '/api/agent/deregister', request);
  }

  /** The deregistration session's status (a refreshed token each time). */
  deregistrationStatus(token: string): Promise<SessionState> {
    return this.#call('GET', `/api/agent/deregister/status?token=${encodeURIComponent(token)}`);
  }

  /** Polls the deregistration until it is completed (resolves) or failed (throws RegistryError 409) or the wait ends (SessionWaitTimeout). */
  waitForDeregistration(token: string, options: WaitOptions = {}): Promise<SessionState> {
    return this.#wait((current) => this.deregistrationStatus(current), token, 'deregistration', options);
  }

  /** Whether agent `agentId` on chain `chainId` (42220 or 11142220) has a proof of human, from which provider, and how many agents its human has. */
  verifyAgent(chainId: number, agentId: number | bigint): Promise<AgentProof> {
    return this.#call('GET', `/api/agent/verify/${encodeURIComponent(chainId)}/${encodeURIComponent(String(agentId))}`);
  }

  /** The service's discovery document: its endpoints and, per network, the chain and registry it serves. */
  discovery(): Promise<ServiceDiscovery> {
    return this.#call('GET', DISCOVERY_PATH);
  }

  async #wait(status: (token: string) => Promise<SessionState>, token: string, what: string, options: WaitOptions): Promise<SessionState> {
    const deadline = Date.now() + (options.timeoutMs ?? 30 * 60_000);
    let current = token;
    for (;;) {
      options.signal?.throwIfAborted();
      const state = await status(current);
      options.onStatus?.(state);
      if (state.stage === 'completed') return state;
      if (state.stage === 'failed') throw new RegistryError(409, state.error ?? `The ${what} failed`);
      if (Date.now() >= deadline) throw new SessionWaitTimeout(state, what);
      current = state.sessionToken;
      await sleep(options.pollIntervalMs ?? 2_000, options.signal);
    }
  }

  async #call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const url = `${this.#base}${path}`;
    let res: Response;
    try {
      res = await this.#fetch(url, {
        method,
        ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new ServiceUnreachable(this.#base, error);
    }
    const answer = (await res.json().catch(() => undefined)) as (T & { error?: string }) | undefined;
    if (!res.ok) throw new RegistryError(res.status, typeof answer?.error === 'string' ? answer.error : `HTTP ${res.status} from ${url}`);
    if (answer === undefined || answer === null || typeof answer !== 'object') {
      throw new RegistryError(502, `${url} did not answer JSON: is ${this.#base} a registry service?`);
    }
    return answer;
  }
}

/** A request signer from an exported key. */
export function signerFromExport(key: Pick<ExportedKey, 'privateKey' | 'keyType'>): RequestSigner {
  return key.keyType === 'ed25519' ? { type: 'ed25519', seed: key.privateKey } : { type: 'secp256k1', account: privateKeyToAccount(key.privateKey) };
}
