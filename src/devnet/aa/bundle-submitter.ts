// Inclusion: accepted operations go to the chain in handleOps transactions from the executor, one transaction at a
// time (so the executor's nonce and the operations' order hold), each carrying the operations that arrived while
// the previous one was being mined (up to maxBundleSize). The bundle's gas is estimated first: an operation the
// EntryPoint now refuses (its FailedOp names the index) is taken out and its sender told why, the others go on.
import type { Address, Hash } from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import type { ChainClient, ChainWallet } from '../../chain/clients.js';
import { decodeEntryPointRefusal, revertDataOf } from './entry-point-simulation.js';
import { AaRpcError, RpcErrorCode, toJsonRpcError } from './json-rpc.js';
import { packUserOperation, type UserOperationV07 } from './user-operation.js';

export interface BundleSubmitterOptions {
  client: ChainClient;
  wallet: ChainWallet;
  entryPoint: Address;
  beneficiary: Address;
  maxBundleSize: number;
}

export interface BundleSubmitter {
  /** Resolves with the hash of the handleOps transaction that carries `op`, once sent. */
  submit(op: UserOperationV07): Promise<Hash>;
}

interface Queued {
  op: UserOperationV07;
  resolve(hash: Hash): void;
  reject(error: unknown): void;
}

/** Gas above the estimate: the estimate is the least that succeeded in the pending block (as for our other sends). */
const GAS_HEADROOM_DIVISOR = 5n;
const RECEIPT_TIMEOUT_MS = 60_000;

export function createBundleSubmitter(options: BundleSubmitterOptions): BundleSubmitter {
  const { client, wallet, entryPoint, beneficiary } = options;
  const queue: Queued[] = [];
  let running = false;

  async function send(bundle: Queued[]): Promise<void> {
    let members = bundle;
    while (members.length > 0) {
      const request = {
        address: entryPoint,
        abi: entryPoint07Abi,
        functionName: 'handleOps',
        args: [members.map((member) => packUserOperation(member.op)), beneficiary],
        account: wallet.account,
        chain: wallet.chain,
      } as const;
      let gas: bigint;
      try {
        gas = await client.estimateContractGas(request);
      } catch (error) {
        const data = revertDataOf(error);
        const refusal = data ? decodeEntryPointRefusal(data) : undefined;
        const refused = refusal ? members[refusal.opIndex] : undefined;
        if (!refusal || !refused) throw error;
        refused.reject(refusal.error);
        members = members.filter((member) => member !== refused);
        continue;
      }
      const hash = await wallet.writeContract({ ...request, gas: gas + gas / GAS_HEADROOM_DIVISOR });
      for (const member of members) member.resolve(hash);
      // the next bundle waits for this one: the executor's nonce and the accounts' state move in order
      await client.waitForTransactionReceipt({ hash, timeout: RECEIPT_TIMEOUT_MS }).catch(() => undefined);
      return;
    }
  }

  async function drain(): Promise<void> {
    if (running) return;
    running = true;
    await Promise.resolve(); // operations submitted in the same tick share the first bundle
    try {
      while (queue.length > 0) {
        const bundle = queue.splice(0, options.maxBundleSize);
        await send(bundle).catch((error: unknown) => {
          const reason = new AaRpcError(RpcErrorCode.internal, `the bundle could not be sent: ${toJsonRpcError(error).message}`);
          for (const member of bundle) member.reject(reason);
        });
      }
    } finally {
      running = false;
    }
  }

  return {
    submit(op) {
      return new Promise<Hash>((resolve, reject) => {
        queue.push({ op, resolve, reject });
        void drain();
      });
    },
  };
}
