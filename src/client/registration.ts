// Registering an agent through a registry service: open a session (any mode), wait until the human has proved
// and the chain holds the agent, export the key the service generated, and turn it into a request signer.
import { privateKeyToAccount } from 'viem/accounts';
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
  override readonly name = 'RegistryError';

  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

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

  /** Polls the session until it is completed (resolves) or failed/expired (throws). */
  async waitForRegistration(token: string, options: { timeoutMs?: number; pollIntervalMs?: number } = {}): Promise<SessionState> {
    const deadline = Date.now() + (options.timeoutMs ?? 30 * 60_000);
    let current = token;
    for (;;) {
      const state = await this.registrationStatus(current);
      if (state.stage === 'completed') return state;
      if (state.stage === 'failed') throw new RegistryError(409, state.error ?? 'The registration failed');
      if (Date.now() >= deadline) throw new RegistryError(408, `The registration is still ${state.stage}`);
      current = state.sessionToken;
      await new Promise((resolve) => setTimeout(resolve, options.pollIntervalMs ?? 2_000));
    }
  }

  /** The key the service generated for the agent, once the registration is completed; handed out once (then 409): keep it. */
  exportKey(token: string): Promise<ExportedKey> {
    return this.#call('POST', '/api/agent/register/export', { token });
  }

  async #call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const res = await this.#fetch(`${this.#base}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const answer = (await res.json().catch(() => ({}))) as T & { error?: string };
    if (!res.ok) throw new RegistryError(res.status, answer.error ?? `HTTP ${res.status}`);
    return answer;
  }
}

/** A request signer from an exported key. */
export function signerFromExport(key: Pick<ExportedKey, 'privateKey' | 'keyType'>): RequestSigner {
  return key.keyType === 'ed25519' ? { type: 'ed25519', seed: key.privateKey } : { type: 'secp256k1', account: privateKeyToAccount(key.privateKey) };
}
