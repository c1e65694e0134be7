// Registration sessions: open one (agent key, userDefinedData, deep link), follow it to the chain, export
// the key the service generated. The chain is the source of truth: a session completes when the registry
// knows the agent's key, whoever submitted the proof.
import type { Address, Hex } from 'viem';
import type { AgentView } from '../chain/agent-lens.js';
import type { NetworkGateway } from '../chain/gateway.js';
import { parseAccountAddress } from '../core/addresses.js';
import { type PublicCredentials, publicCredentials } from '../core/credentials.js';
import { configIndexFor, type DisclosureRequest, requestedDisclosures } from '../core/disclosures.js';
import { badRequest, ServiceError } from '../core/errors.js';
import { type NetworkName, resolveNetwork } from '../core/networks.js';
import { MODE_RULES, type RegistrationMode, resolveMode } from '../core/registration-modes.js';
import { type Challenge, ecdsaChallenge, ed25519Challenge, enrollAgent } from './agent-enrollment.js';
import { ChainSyncedSessions, type FlowDeps, type OpenedSession, SessionFlow, type StatusBase } from './session-flow.js';
import { newSessionId, type RegistrationRecord } from './session-record.js';
import { SessionTokens } from './session-token.js';

export type { DisclosureRequest } from '../core/disclosures.js';
export type { CallbackReport } from './session-flow.js';

export interface RegistrationRequest {
  mode: string;
  network?: string;
  humanAddress?: string;
  disclosures?: DisclosureRequest;
  agentAddress?: string;
  agentSignature?: string;
  guardianSignature?: string;
  ed25519Pubkey?: string;
  ed25519Signature?: string;
}

export interface RegistrationSession extends OpenedSession {
  agentAddress: Address;
  mode: RegistrationMode;
  network: NetworkName;
  configIndex: number;
}

export interface RegistrationStatus extends StatusBase {
  agentAddress: Address;
  mode: RegistrationMode;
  agentId?: number;
  credentials?: PublicCredentials;
}

export interface ExportedKey {
  privateKey: Hex;
  keyType: 'secp256k1' | 'ed25519';
  /** Ed25519 only: the raw public key (the registry's agent key). */
  publicKey?: Hex;
  agentAddress: Address;
  agentId: number;
  network: NetworkName;
  mode: RegistrationMode;
}

export interface RegistrationDeps extends FlowDeps {
  /** The transaction that minted an agent, when the service saw its Registered log (the follower or the WebSocket). */
  registrationTransaction?: (network: NetworkName, agentId: bigint) => Hex | undefined;
}

function parseHuman(value: string | undefined, mode: RegistrationMode): Address | undefined {
  if (!MODE_RULES[mode].needsHumanAddress) return undefined;
  if (value === undefined) {
    throw badRequest(`humanAddress is required for mode ${mode} and must be a 0x-prefixed 20-byte hex address (the human's wallet)`);
  }
  return parseAccountAddress(value, 'humanAddress', `the human's wallet, required for mode ${mode}`);
}

export class RegistrationService extends ChainSyncedSessions<'register', RegistrationStatus> {
  constructor(private readonly deps: RegistrationDeps) {
    super(new SessionFlow(deps, 'register'));
  }

  async start(request: RegistrationRequest): Promise<RegistrationSession> {
    const mode = resolveMode(request.mode);
    const network = resolveNetwork(request.network ?? 'mainnet');
    const humanAddress = parseHuman(request.humanAddress, mode);
    const disclosures = requestedDisclosures(request.disclosures);
    const configIndex = configIndexFor(disclosures);
    const gateway = this.deps.chains.get(network);

    const { humanAddress: _raw, ...rest } = request;
    const enrollment = await enrollAgent(
      { ...rest, mode, ...(humanAddress ? { humanAddress } : {}) },
      { chainId: gateway.chainId, registry: gateway.registry, configIndex },
    );
    const now = this.deps.clock();
    const record: RegistrationRecord = {
      id: newSessionId(),
      type: 'register',
      stage: 'qr-ready',
      network,
      mode,
      agentAddress: enrollment.agentAddress,
      agentKey: enrollment.agentKey,
      ...(humanAddress ? { humanAddress } : {}),
      userId: enrollment.userId,
      userDefinedData: enrollment.userDefinedData,
      configIndex,
      disclosures,
      exportable: !MODE_RULES[mode].externalKey && Object.keys(enrollment.secrets).length > 0,
      createdAt: now,
      expiresAt: now + SessionTokens.LIFETIME_MS,
    };
    const { session } = await this.flow.create(record, enrollment.secrets);
    return {
      ...session,
      agentAddress: enrollment.agentAddress,
      mode,
      network,
      configIndex,
    };
  }

  async status(token: string): Promise<RegistrationStatus> {
    const { claims, record } = await this.flow.open(token);
    const synced = await this.syncWithChain(record);
    return {
      ...(await this.flow.statusBase(claims, synced)),
      agentAddress: synced.agentAddress,
      mode: synced.mode,
      ...(synced.agentId ? { agentId: Number(synced.agentId) } : {}),
      ...(synced.credentials ? { credentials: synced.credentials } : {}),
    };
  }

  /**
   * The generated key, once: the first export that succeeds claims the session (on the store, so across
   * instances and restarts), and any later one, with any token of the session, is 409. Only the session token
   * carries the key; a watch token is refused.
   */
  async exportKey(token: string): Promise<ExportedKey> {
    const { claims, record } = await this.flow.open(token, ['session']);
    const mode = record.mode;
    if (MODE_RULES[mode].externalKey) {
      throw badRequest(`Export is not available for ${mode}: the agent key is held by the human's wallet provider and the service never had it`);
    }
    const secrets = claims.secrets ?? {};
    const privateKey = secrets.agentPrivateKey ?? secrets.ed25519PrivateKey;
    if (!privateKey) throw badRequest('This session registers a key you brought yourself: the service never had its private key');
    const synced = await this.syncWithChain(record);
    if (synced.stage !== 'completed')
      throw new ServiceError(409, `The key can be exported once the registration is completed; the session is ${synced.stage}`);
    if (!(await this.deps.sessions.claimExport(synced))) {
      throw new ServiceError(409, 'The key was already exported for this session: it is handed out once; use the copy you received');
    }
    return {
      privateKey,
      keyType: secrets.agentPrivateKey ? 'secp256k1' : 'ed25519',
      ...(secrets.ed25519PrivateKey ? { publicKey: synced.agentKey } : {}),
      agentAddress: synced.agentAddress,
      agentId: Number(synced.agentId),
      network: synced.network,
      mode,
    };
  }

  async challenge(request: { mode: string; network?: string; agentAddress?: string; humanAddress?: string }): Promise<Challenge> {
    const mode = resolveMode(request.mode);
    if (!MODE_RULES[mode].externalKey)
      throw badRequest('The ECDSA challenge is for the privy and smartwallet modes, whose agent key is held by a wallet provider');
    const agentAddress = parseAccountAddress(request.agentAddress, 'agentAddress', 'the wallet-held agent key');
    const humanAddress = parseHuman(request.humanAddress, mode) as Address;
    const gateway = this.deps.chains.get(resolveNetwork(request.network ?? 'mainnet'));
    return ecdsaChallenge({ mode, agentAddress, humanAddress }, { chainId: gateway.chainId, registry: gateway.registry });
  }

  async ed25519Challenge(request: { pubkey?: string; network?: string; humanAddress?: string }): Promise<Challenge> {
    if (request.pubkey === undefined) throw badRequest('pubkey is required: the 64-hex-character Ed25519 public key');
    const humanAddress =
      request.humanAddress === undefined ? undefined : parseAccountAddress(request.humanAddress, 'humanAddress', 'omit it for the ed25519 mode');
    const gateway = this.deps.chains.get(resolveNetwork(request.network ?? 'mainnet'));
    return ed25519Challenge(
      { pubkey: request.pubkey, ...(humanAddress ? { humanAddress } : {}) },
      { chainId: gateway.chainId, registry: gateway.registry },
    );
  }

  /** Moves a waiting session forward from what the chain says: registered -> completed; reverted -> failed. */
  protected async syncWithChain(record: RegistrationRecord): Promise<RegistrationRecord> {
    if (record.stage === 'completed') return record;
    const gateway = this.deps.chains.get(record.network);
    // the id and the agent in one round trip: this read is on the way of every completion the chain announces
    const { value: agent } = await gateway.lens.agentOfKey(record.agentKey);
    // not registered (yet): the reported transaction may still fail the session; a confirmed one is being indexed
    if (agent.agentId === 0n) return (await this.flow.followReport(record, 'The registration transaction reverted on chain')).record;
    const { agentId } = agent;
    const txHash =
      this.deps.registrationTransaction?.(record.network, agentId) ?? (await this.registrationTx(gateway, agent, record.callback?.txHash));
    return this.flow.complete(record, {
      agentId: agentId.toString(),
      ...(txHash ? { txHash } : {}),
      ...(agent.exists ? { credentials: publicCredentials(agent.credentials) } : {}),
    });
  }

  /**
   * The transaction that minted `agent` when the service has not seen its Registered log: the one the identity app
   * reported if it is that one, else from the logs of the block the registry says it was minted in.
   */
  private async registrationTx(gateway: NetworkGateway, agent: AgentView, reported?: Hex): Promise<Hex | undefined> {
    if (reported && (await gateway.registry.transaction(reported))?.registered.includes(agent.agentId)) return reported;
    return gateway.registry.registrationTransaction(agent.agentId, agent.registeredAtBlock);
  }
}
