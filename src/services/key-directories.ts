// The HTTP Message Signatures key directory of each registered Ed25519 agent (draft-meunier-webbotauth-httpsig-
// directory): its key as a JWKS, with the proof-of-human claims the registry holds for it, so that an edge verifier
// that speaks only Web Bot Auth finds both the key and the human backing at the URL the agent names in
// Signature-Agent. The draft has a directory answer signed by its keys; the service never holds an agent's key, so
// the agent signs its directory for the authority it is served at and publishes that signature here, kept on the
// store port (shared by instances, kept across restarts) until it expires.
import type { Hex } from 'viem';
import { type Ed25519PublicJwk, ed25519JwkThumbprint, ed25519PublicJwk } from '../core/agent-jwk.js';
import { agentKeyType } from '../core/agent-key.js';
import { ServiceError } from '../core/errors.js';
import { checkKeyDirectorySignature, type KeyDirectorySignature } from '../core/key-directory.js';
import type { NetworkName } from '../core/networks.js';
import type { Clock, KeyValueStore } from '../store/key-value-store.js';
import type { ProofOfHumanBlock } from './agent-card.js';
import type { AgentQueryService } from './agent-queries.js';

export interface KeyDirectoryDocument {
  keys: (Ed25519PublicJwk & { kid: string; use: 'sig' })[];
  /** What the keys sign (Web Bot Auth requests of one registered agent). */
  purpose: string;
  /** The registry's claims about the agent and its human, as its card carries them. */
  proofOfHuman: ProofOfHumanBlock;
}

/** A directory and, when the agent has published one for this authority, its signature. */
export interface KeyDirectoryAnswer {
  document: KeyDirectoryDocument;
  signature?: KeyDirectorySignature;
}

interface StoredSignature extends KeyDirectorySignature {
  created: number;
  expires: number;
}

const storeKey = (network: NetworkName, agentId: bigint, authority: string) => `key-directory:${network}:${agentId}:${authority.toLowerCase()}`;

export class KeyDirectories {
  constructor(
    private readonly queries: AgentQueryService,
    private readonly store: KeyValueStore,
    private readonly clock: Clock = Date.now,
  ) {}

  /** The directory of agent `agentId` as served at `authority`; 404 for an agent that has none. */
  async directory(network: NetworkName, agentId: bigint, authority: string): Promise<KeyDirectoryAnswer> {
    const key = await this.#ed25519Key(network, agentId);
    const [card, kid, stored] = await Promise.all([
      this.queries.card(network, agentId),
      ed25519JwkThumbprint(key),
      this.store.get<StoredSignature>(storeKey(network, agentId, authority)),
    ]);
    const live = stored !== undefined && stored.expires * 1000 > this.clock();
    return {
      document: {
        keys: [{ ...ed25519PublicJwk(key), kid, use: 'sig' }],
        purpose: `Web Bot Auth request signatures of agent ${agentId} on ${network}, registered with a proof of human`,
        proofOfHuman: card.proofOfHuman,
      },
      ...(live ? { signature: { signatureInput: stored.signatureInput, signature: stored.signature } } : {}),
    };
  }

  /**
   * Keeps the agent's signature of its directory at `authority` (the Host the publication was sent to), after
   * checking it with the agent's registered key; an older signature than the one kept is refused (409).
   */
  async publish(network: NetworkName, agentId: bigint, authority: string, signature: KeyDirectorySignature): Promise<{ expires: number }> {
    const key = await this.#ed25519Key(network, agentId);
    const nowMs = this.clock();
    const check = await checkKeyDirectorySignature(signature, { authority, publicKey: key, nowS: Math.floor(nowMs / 1000) });
    if (!check.ok) throw new ServiceError(check.status, check.error);
    const entry: StoredSignature = { ...signature, created: check.created, expires: check.expires };
    let kept = true;
    await this.store.update<StoredSignature>(
      storeKey(network, agentId, authority),
      (current) => {
        kept = current === undefined || current.expires * 1000 <= nowMs || current.created <= entry.created;
        return kept ? entry : current;
      },
      Math.max(1, check.expires * 1000 - nowMs),
    );
    if (!kept) throw new ServiceError(409, 'A newer directory signature is published already: sign with a later created time');
    return { expires: check.expires };
  }

  async #ed25519Key(network: NetworkName, agentId: bigint): Promise<Hex> {
    const view = await this.queries.agentById(network, agentId);
    if (!view) throw new ServiceError(404, `Agent ${agentId} is not registered on ${network}`);
    if (agentKeyType(view.agentKey) !== 'ed25519') {
      throw new ServiceError(404, `Agent ${agentId} has a secp256k1 key: its ERC-8128 keyid names its address, it has no key directory`);
    }
    return view.agentKey;
  }
}
