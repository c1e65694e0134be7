// The scan page's words, in one place for the server-rendered page and its live updates: what each kind of session
// is called, what the human is asked to disclose, and the state of a session at each stage.
import type { AgentView } from '../../chain/agent-lens.js';
import { explainRefusal } from '../../core/chain-refusals.js';
import type { RequestedDisclosures } from '../../core/disclosures.js';
import { agentCardPath } from '../../core/endpoints.js';
import { chainIdOf, NETWORKS, type NetworkName } from '../../core/networks.js';
import { MODE_RULES, type RegistrationMode } from '../../core/registration-modes.js';
import type { SessionType } from '../../core/session-types.js';
import type { WatchedSession } from '../../sessions/scan-page.js';
import type { WatchEnd } from '../../sessions/session-watch.js';
import type { AnySessionStatus } from '../../sessions/sessions.js';
import type { ScanPageState } from '../schemas/scan-page.js';

/** How the page names each kind of session. */
export const KIND_WORDS: Readonly<Record<SessionType, { title: string; action: string; done: string; again: string }>> = {
  register: { title: 'Register your agent', action: 'Registration', done: 'Registered', again: 'Open a new registration session' },
  deregister: { title: 'Remove your agent', action: 'Deregistration', done: 'Removed', again: 'Open a new deregistration session' },
  refresh: { title: "Refresh your agent's proof", action: 'Proof refresh', done: 'Refreshed', again: 'Open a new refresh session' },
  identify: { title: 'Find your agents', action: 'Identification', done: 'Identified', again: 'Open a new identify session' },
};

export const networkWords = (network: NetworkName): string =>
  network === 'mainnet'
    ? `${NETWORKS.mainnet.label} (mainnet, chain ${NETWORKS.mainnet.chainId}): prove with your real passport or ID card`
    : `${NETWORKS.testnet.label} (testnet, chain ${NETWORKS.testnet.chainId}): the identity app proves with a mock document, no real passport needed`;

export const modeWords = (mode: RegistrationMode): string => `${MODE_RULES[mode].label} (${mode})`;

/** What the human is asked to disclose, one line each; an empty list when nothing beyond the proof itself. */
export function disclosureWords(d: RequestedDisclosures): string[] {
  return [
    ...(d.minimumAge > 0 ? [`That you are at least ${d.minimumAge} years old`] : []),
    ...(d.ofac ? ['That you are not on the OFAC sanctions lists'] : []),
    ...(d.nationality ? ['Your nationality'] : []),
    ...(d.name ? ['Your name'] : []),
  ];
}

/** The info endpoint of an agent, a path of this service. */
export const agentInfoPath = (network: NetworkName, agentId: number): string => `/api/agent/info/${chainIdOf(network)}/${agentId}`;

const numberOf = (status: AnySessionStatus, field: 'agentId'): number | undefined => {
  const value = (status as { agentId?: unknown })[field];
  return typeof value === 'number' ? value : undefined;
};

function completed(kind: SessionType, network: NetworkName, status: AnySessionStatus): Pick<ScanPageState, 'headline' | 'links' | 'agentIds'> {
  const agentId = numberOf(status, 'agentId');
  const info = (id: number) => ({ href: agentInfoPath(network, id), label: `Agent ${id}: its record (info endpoint)` });
  const card = (id: number) => ({ href: agentCardPath(chainIdOf(network), id), label: `Agent ${id}: its agent card` });
  switch (kind) {
    case 'register':
      return { headline: `Your agent is registered: agent ID ${agentId}.`, links: agentId ? [info(agentId), card(agentId)] : [] };
    case 'refresh':
      return { headline: `The proof of agent ${agentId} is refreshed.`, links: agentId ? [info(agentId)] : [] };
    case 'deregister':
      return { headline: `Agent ${agentId} is removed: its NFT is burned.`, links: [] };
    case 'identify': {
      const agentIds = 'agentIds' in status && Array.isArray(status.agentIds) ? status.agentIds : [];
      const count = agentIds.length === 1 ? 'one agent' : `${agentIds.length} agents`;
      return { headline: `You are identified: you have ${count} on this network.`, links: agentIds.map(info), agentIds };
    }
  }
}

const HEADLINES: Readonly<Record<'qr-ready' | 'proof-received', string>> = {
  'qr-ready': 'Waiting for you to scan the QR code with the identity app.',
  'proof-received': 'Proof received: waiting for the chain to confirm it.',
};

/** The state of a session as its status reads now. */
export function stateOf(kind: SessionType, network: NetworkName, status: AnySessionStatus): ScanPageState {
  const agentId = numberOf(status, 'agentId');
  const common = {
    kind,
    stage: status.stage,
    network,
    instructions: status.humanInstructions,
    ...(agentId !== undefined ? { agentId } : {}),
    ...(status.txHash ? { txHash: status.txHash } : {}),
    expiresAt: status.expiresAt,
  };
  switch (status.stage) {
    case 'completed':
      return { ...common, final: true, ...completed(kind, network, status) };
    case 'failed': {
      const error = status.error ?? 'the session failed';
      const words = explainRefusal(error);
      // the contract's own words stay beside the explanation, for whoever helps the human
      const instructions = words ? [...common.instructions, `The chain's reason: ${error}`] : common.instructions;
      return { ...common, instructions, final: true, headline: `${KIND_WORDS[kind].action} failed: ${words ?? error}`, error, links: [] };
    }
    default:
      return { ...common, final: false, headline: HEADLINES[status.stage], links: [] };
  }
}

export const openedState = (session: WatchedSession): ScanPageState => stateOf(session.kind, session.network, session.status);

const day = (unixSeconds: bigint): string => new Date(Number(unixSeconds) * 1000).toISOString().slice(0, 10);

/**
 * A completed registration or refresh, told as its agent stands now (`now`: its public state, undefined once burned):
 * a page opened after a deregistration says so and links nowhere, rather than "registered" with links that answer 404.
 */
export function agentNowState(state: ScanPageState, now: AgentView | undefined): ScanPageState {
  const { agentId } = state;
  if (state.stage !== 'completed' || agentId === undefined || (state.kind !== 'register' && state.kind !== 'refresh')) return state;
  if (now === undefined) {
    return {
      ...state,
      headline: `Agent ${agentId} was ${state.kind === 'register' ? 'registered' : 'refreshed'} by this session, and has since been removed (deregistered).`,
      links: [],
      agentStatus: 'deregistered',
    };
  }
  if (!now.isProofFresh) {
    return { ...state, headline: `${state.headline} Its proof of human has since expired: refresh it.`, agentStatus: 'proof-expired' };
  }
  return { ...state, headline: `${state.headline} Its proof of human is valid until ${day(now.proofExpiresAt)}.`, agentStatus: 'registered' };
}

/** The state a watch ended in, or undefined when it was stopped (the service shuts down: the page reconnects). */
export function endState(last: ScanPageState, end: WatchEnd): ScanPageState | undefined {
  switch (end.outcome) {
    case 'completed':
    case 'failed':
      return stateOf(last.kind, last.network, end.status);
    case 'expired':
      return {
        ...last,
        stage: 'expired',
        final: true,
        headline: `This session expired before it finished. ${KIND_WORDS[last.kind].again} to try again.`,
        instructions: [],
        links: [],
        error: end.error,
      };
    case 'refused':
      return {
        ...last,
        stage: 'failed',
        final: true,
        headline: `This session can no longer be followed: ${end.error}`,
        instructions: [],
        links: [],
        error: end.error,
      };
    case 'stopped':
      return undefined;
  }
}
