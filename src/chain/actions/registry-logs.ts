// What one registry log means, decoded from its topics and data: which agent it touches, whether its human's
// agent count changed (the nullifier), and, for ownership and guardianship, who the new owner or guardian is.
// The one place that reads registry log topics: the query cache invalidates from it and the owner/guardian
// index is built from it.
import { type Address, encodeEventTopics, getAddress, type Hex, hexToBigInt, slice } from 'viem';
import { agentRegistryAbi } from '../../contracts/artifacts/index.js';

type RegistryEventName = Extract<(typeof agentRegistryAbi)[number], { type: 'event' }>['name'];

const topicOf = (eventName: RegistryEventName): Hex =>
  (encodeEventTopics({ abi: agentRegistryAbi, eventName } as Parameters<typeof encodeEventTopics>[0])[0] as Hex).toLowerCase() as Hex;

/** Events whose first indexed parameter is the agent id. */
const AGENT_EVENTS = new Set<Hex>(
  (['Registered', 'URIUpdated', 'MetadataSet', 'HumanProofRefreshed', 'GuardianSet', 'AgentMetadataUpdated', 'AgentCredentialsStored'] as const).map(
    topicOf,
  ),
);
/** ERC-721 events whose third indexed parameter is the token (agent) id. */
const TOKEN_EVENTS = new Set<Hex>((['Transfer', 'Approval'] as const).map(topicOf));
/** Agent events that change the agent count of the nullifier in their data's first word. */
const NULLIFIER_EVENTS = new Set<Hex>((['AgentRegisteredWithHumanProof', 'HumanProofRevoked'] as const).map(topicOf));
/** Events that change nothing a public query answers. */
const IGNORED_EVENTS = new Set<Hex>(
  (
    [
      'NullifierIdentified',
      'MaxAgentsPerHumanUpdated',
      'MaxProofAgeUpdated',
      'ApprovalForAll',
      'RoleAdminChanged',
      'RoleGranted',
      'RoleRevoked',
      'Ed25519VerifierUpdated',
      'EIP712DomainChanged',
    ] as const
  ).map(topicOf),
);
/**
 * What a backfill asks for (RegistryEventFollower's backfillTopics): ownership, guardians and nullifier lists (the
 * stored index), and proof refreshes and provider changes (a credential's status). Registered, metadata, approvals
 * and the credentials' storage, half of a registration's logs and of their bytes, only drop cached answers.
 */
export const BACKFILL_TOPICS: readonly Hex[] = (
  [
    'Transfer',
    'GuardianSet',
    'AgentRegisteredWithHumanProof',
    'HumanProofRevoked',
    'HumanProofRefreshed',
    'ProofProviderAdded',
    'ProofProviderRemoved',
  ] as const
).map(topicOf);
const REGISTERED = topicOf('Registered');
const TRANSFER = topicOf('Transfer');
const REVOKED = topicOf('HumanProofRevoked');
const GUARDIAN_SET = topicOf('GuardianSet');

/** What one registry log changes. */
export type RegistryLogEffect =
  | {
      kind: 'agent';
      agentId: bigint;
      /** Registrations and revocations: the nullifier whose agent count changed. */
      nullifier?: bigint;
      /** With a nullifier: the agent left its nullifier's list (revoked, and burned) rather than joined it. */
      revoked?: boolean;
      /** ERC-721 Transfer: the new owner (the zero address for a burn). */
      owner?: Address;
      /** GuardianSet: the new guardian. */
      guardian?: Address;
    }
  | { kind: 'none' }
  /** Provider changes, contract upgrades and anything unknown: everything of the network may have changed. */
  | { kind: 'all' };

/** The parts of a log the decoder reads. */
export interface RegistryLogLike {
  topics: readonly Hex[];
  data: Hex;
}

/**
 * `checksummed: false` leaves owner and guardian in lower case: for readers that only ask whether there is one (the
 * checksum is a keccak256 per address, the bulk of a backfill's decoding).
 */
export function decodeRegistryLog(log: RegistryLogLike, { checksummed = true }: { checksummed?: boolean } = {}): RegistryLogEffect {
  // a topic is 32 bytes: an address is its last 20 (0x and 24 hex digits of padding before it)
  const addressOfTopic = (topic: Hex): Address => {
    const address = `0x${topic.slice(26).toLowerCase()}` as Address;
    return checksummed ? getAddress(address) : address;
  };
  // read by index: this runs for every log of a backfill
  const { topics } = log;
  const topic = topics[0]?.toLowerCase() as Hex | undefined;
  if (topic === undefined) return { kind: 'all' };
  if (IGNORED_EVENTS.has(topic)) return { kind: 'none' };
  if (AGENT_EVENTS.has(topic) && topics[1]) {
    const agentId = hexToBigInt(topics[1]);
    return topic === GUARDIAN_SET && topics[2] ? { kind: 'agent', agentId, guardian: addressOfTopic(topics[2]) } : { kind: 'agent', agentId };
  }
  if (TOKEN_EVENTS.has(topic) && topics[3]) {
    const agentId = hexToBigInt(topics[3]);
    return topic === TRANSFER && topics[2] ? { kind: 'agent', agentId, owner: addressOfTopic(topics[2]) } : { kind: 'agent', agentId };
  }
  if (NULLIFIER_EVENTS.has(topic) && topics[1] && log.data.length >= 66) {
    return { kind: 'agent', agentId: hexToBigInt(topics[1]), nullifier: hexToBigInt(slice(log.data, 0, 32)), revoked: topic === REVOKED };
  }
  return { kind: 'all' };
}

const decodedRanges = new WeakMap<readonly RegistryLogLike[], RegistryLogEffect[]>();

/**
 * decodeRegistryLog (addresses in lower case) of each log of a range: a range the follower delivers (a frozen array,
 * which no one can change) is decoded once for all of its readers (the index and the cache read the same array), and
 * forgotten with the array.
 */
export function decodedRange(logs: readonly RegistryLogLike[]): readonly RegistryLogEffect[] {
  if (!Object.isFrozen(logs)) return logs.map((log) => decodeRegistryLog(log, { checksummed: false }));
  let effects = decodedRanges.get(logs);
  if (effects === undefined) {
    effects = logs.map((log) => decodeRegistryLog(log, { checksummed: false }));
    decodedRanges.set(logs, effects);
  }
  return effects;
}

/** The agent a Registered log minted, or undefined for any other log. */
export function registeredAgentId(log: RegistryLogLike): bigint | undefined {
  const [topic0, agentTopic] = log.topics;
  return topic0?.toLowerCase() === REGISTERED && agentTopic ? hexToBigInt(agentTopic) : undefined;
}
