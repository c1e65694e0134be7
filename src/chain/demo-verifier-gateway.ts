// The demo verifier contracts (AgentDemoVerifier for ECDSA agents, AgentDemoVerifierEd25519 for Ed25519 agents) as
// a relayer uses them: read the agent's meta-transaction nonce and the counters, simulate metaVerifyAgent (a
// refusal is named, not thrown), and send it from the relayer's wallet. Both share metaVerifyAgent(bytes32,
// uint256,uint256,bytes), nonces, the counters and the errors; only how the signature is checked differs.
import { type Address, BaseError, ContractFunctionRevertedError, type Hex } from 'viem';
import { agentDemoVerifierAbi, agentDemoVerifierEd25519Abi } from '../contracts/artifacts/index.js';
import { sendAndWait } from './actions/send-transaction.js';
import type { ChainClient, ChainWallet } from './clients.js';

/** Why the contract refuses a meta-transaction. */
export type MetaVerifyRefusal = 'NotVerifiedAgent' | 'MetaTxExpired' | 'MetaTxInvalidNonce' | 'MetaTxInvalidSignature' | { other: string };

export interface MetaVerify {
  agentKey: Hex;
  nonce: bigint;
  deadline: bigint;
  signature: Hex;
}

const KNOWN = new Set(['NotVerifiedAgent', 'MetaTxExpired', 'MetaTxInvalidNonce', 'MetaTxInvalidSignature']);

export class DemoVerifierGateway {
  #queue: Promise<unknown> = Promise.resolve();
  constructor(
    private readonly client: ChainClient,
    readonly address: Address,
    /** Who pays for relayed transactions; without one the contract can only be read. */
    private readonly relayer?: ChainWallet,
    /** Which of the two contracts: how the agent signs (EIP-712, or Ed25519 over messageHash). */
    readonly keyType: 'secp256k1' | 'ed25519' = 'secp256k1',
  ) {}

  /** The same contract, relayed by `relayer`. */
  withRelayer(relayer: ChainWallet): DemoVerifierGateway {
    return new DemoVerifierGateway(this.client, this.address, relayer, this.keyType);
  }

  get relaying(): boolean {
    return this.relayer !== undefined;
  }

  #relayer(): ChainWallet {
    if (!this.relayer) throw new Error(`No relayer for the demo verifier at ${this.address}`);
    return this.relayer;
  }

  private get contract() {
    // the functions called here have the same signatures in both ABIs; the ECDSA one types the calls
    const abi = (this.keyType === 'ed25519' ? agentDemoVerifierEd25519Abi : agentDemoVerifierAbi) as typeof agentDemoVerifierAbi;
    return { address: this.address, abi } as const;
  }

  /** The agent's next meta-transaction nonce. */
  nonceOf(agentKey: Hex): Promise<bigint> {
    return this.client.readContract({ ...this.contract, functionName: 'nonces', args: [agentKey] });
  }

  /** Verifications recorded for the agent, and in all. */
  async counts(agentKey: Hex): Promise<{ verificationCount: bigint; totalVerifications: bigint }> {
    const [verificationCount, totalVerifications] = await Promise.all([
      this.client.readContract({ ...this.contract, functionName: 'verificationCount', args: [agentKey] }),
      this.client.readContract({ ...this.contract, functionName: 'totalVerifications' }),
    ]);
    return { verificationCount, totalVerifications };
  }

  /** Undefined when the relayer's call would succeed; else why the contract refuses it. */
  async refusalOf(call: MetaVerify): Promise<MetaVerifyRefusal | undefined> {
    try {
      await this.client.simulateContract({
        ...this.contract,
        account: this.#relayer().account,
        functionName: 'metaVerifyAgent',
        args: [call.agentKey, call.nonce, call.deadline, call.signature],
      });
      return undefined;
    } catch (error) {
      const reverted = error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : null;
      if (!(reverted instanceof ContractFunctionRevertedError)) throw error; // not a refusal: the RPC failed
      const name = reverted.data?.errorName;
      return name && KNOWN.has(name) ? (name as MetaVerifyRefusal) : { other: reverted.shortMessage.slice(0, 200) };
    }
  }

  /** Sends metaVerifyAgent from the relayer and waits for it to be mined; one at a time (the relayer's nonces). */
  send(call: MetaVerify): Promise<{ txHash: Hex; blockNumber: bigint; gasUsed: bigint }> {
    const sent = this.#queue.then(() => this.#send(call));
    this.#queue = sent.catch(() => undefined);
    return sent;
  }

  async #send(call: MetaVerify): Promise<{ txHash: Hex; blockNumber: bigint; gasUsed: bigint }> {
    const receipt = await sendAndWait(this.client, this.#relayer(), {
      ...this.contract,
      functionName: 'metaVerifyAgent',
      args: [call.agentKey, call.nonce, call.deadline, call.signature],
    });
    return { txHash: receipt.transactionHash, blockNumber: receipt.blockNumber, gasUsed: receipt.gasUsed };
  }
}
