// An ERC-4337 bundler for EntryPoint v0.7 on a chain we run ourselves: the eight ERC-7769 methods the
// account-abstraction proxy allows. An operation is validated by simulation (the EntryPoint's own
// simulateValidation) before it is accepted, then included by the executor in a handleOps transaction; on a local
// chain that is mined at once. Receipts come from the EntryPoint's logs, so they survive a restart; the operations
// sent through this instance are also remembered (a bounded number) to answer before they are mined. A receipt is
// given only once its block is in the chain's state file (makeDurable), so no answer names an inclusion that a
// restart of the chain takes back.
// Not done here, as a public mempool would need: ERC-7562 opcode and storage rules, reputation, stake checks,
// replacement by fee. The operations come through our own service, to our own chain.
import { type Address, type Hash, isAddressEqual, isHash, numberToHex, type RpcStateOverride } from 'viem';
import type { ChainClient, ChainWallet } from '../../chain/clients.js';
import { createBundleSubmitter } from './bundle-submitter.js';
import { NO_AGGREGATOR, SIGNATURE_FAILED, simulateValidation, type ValidationData } from './entry-point-simulation.js';
import { estimateUserOperationGas, preVerificationGas } from './gas-estimation.js';
import { AaRpcError, chainIdOnce, invalidParams, RpcErrorCode, type RpcMethod, type RpcService } from './json-rpc.js';
import { parseDraftUserOperation, parseUserOperation, toRpcUserOperation, type UserOperationV07, userOperationHash } from './user-operation.js';
import {
  findUserOperationTransaction,
  type RpcUserOperationByHash,
  readUserOperationFromTransaction,
  readUserOperationReceipt,
} from './user-operation-lookup.js';

export interface LocalBundlerOptions {
  client: ChainClient;
  /** The executor: sends handleOps and pays its gas, paid back by the operations through the beneficiary. */
  wallet: ChainWallet;
  entryPoint: Address;
  /** Receives what the operations pay (default: the executor). */
  beneficiary?: Address;
  /** Where the search for operations this instance does not remember starts (default: block 0). */
  fromBlock?: bigint;
  /** Operations remembered after sending (default 1024; older ones are still found on chain). */
  maxTrackedOperations?: number;
  /** Operations per handleOps transaction at most (default 8). */
  maxBundleSize?: number;
  /**
   * Resolves once `block` survives a restart of the chain (its state file holds it): an operation is reported
   * included (receipt, block) only then. Default: at once, for a chain that keeps what it mined.
   */
  makeDurable?: (block: bigint) => Promise<void>;
}

export interface LocalBundler extends RpcService {
  readonly entryPoint: Address;
}

/** An operation whose validity ends sooner than this after the latest block is refused: it could expire unmined. */
const MIN_VALIDITY_SECONDS = 30;

interface Tracked {
  userOperation: UserOperationV07;
  transactionHash?: Hash;
}

function hashParam(params: readonly unknown[]): Hash {
  const [hash] = params;
  if (typeof hash !== 'string' || !isHash(hash)) throw invalidParams('Invalid params: expected a user operation hash (32 bytes hex)');
  return hash;
}

/** Refuses what the EntryPoint would refuse in handleOps but simulateValidation only reports. */
function checkValidationData(account: ValidationData, paymaster: ValidationData, now: number): void {
  const inRange = (data: ValidationData): boolean => data.validAfter <= now && data.validUntil >= now + MIN_VALIDITY_SECONDS;
  if (isAddressEqual(account.aggregator, SIGNATURE_FAILED)) throw new AaRpcError(RpcErrorCode.signature, 'AA24 signature error');
  if (!isAddressEqual(account.aggregator, NO_AGGREGATOR)) {
    throw new AaRpcError(RpcErrorCode.unsupportedAggregator, `signature aggregator ${account.aggregator} is not supported`);
  }
  if (!inRange(account)) throw new AaRpcError(RpcErrorCode.outOfTimeRange, 'AA22 expired or not due');
  if (!isAddressEqual(paymaster.aggregator, NO_AGGREGATOR)) throw new AaRpcError(RpcErrorCode.signature, 'AA34 signature error');
  if (!inRange(paymaster)) throw new AaRpcError(RpcErrorCode.outOfTimeRange, 'AA32 paymaster expired or not due');
}

export function createLocalBundler(options: LocalBundlerOptions): LocalBundler {
  const { client, wallet, entryPoint } = options;
  const beneficiary = options.beneficiary ?? wallet.account.address;
  const fromBlock = options.fromBlock ?? 0n;
  const maxTracked = options.maxTrackedOperations ?? 1024;
  const makeDurable = options.makeDurable ?? (() => Promise.resolve());
  const submitter = createBundleSubmitter({ client, wallet, entryPoint, beneficiary, maxBundleSize: options.maxBundleSize ?? 8 });
  const tracked = new Map<Hash, Tracked>();
  const getChainId = chainIdOnce(client);

  function track(hash: Hash, entry: Tracked): void {
    tracked.set(hash, entry);
    for (const oldest of tracked.keys()) {
      if (tracked.size <= maxTracked) break;
      tracked.delete(oldest);
    }
  }

  function checkEntryPoint(value: unknown): void {
    if (typeof value !== 'string' || !isAddressEqual(value as Address, entryPoint)) {
      throw invalidParams(`Unsupported entry point ${String(value)}: this bundler serves ${entryPoint}`);
    }
  }

  async function validateForInclusion(op: UserOperationV07): Promise<void> {
    if (op.maxPriorityFeePerGas > op.maxFeePerGas) throw invalidParams('maxPriorityFeePerGas is above maxFeePerGas');
    const required = preVerificationGas(op, beneficiary);
    if (op.preVerificationGas < required) {
      throw invalidParams(`preVerificationGas ${op.preVerificationGas} is below the ${required} this operation needs`);
    }
    const [block, validation] = await Promise.all([client.getBlock({ blockTag: 'latest' }), simulateValidation(client, entryPoint, op)]);
    if (block.baseFeePerGas !== null && op.maxFeePerGas < block.baseFeePerGas) {
      throw invalidParams(`maxFeePerGas ${op.maxFeePerGas} is below the base fee ${block.baseFeePerGas}`);
    }
    checkValidationData(validation.account, validation.paymaster, Number(block.timestamp));
  }

  async function transactionOf(hash: Hash): Promise<Hash | undefined> {
    const entry = tracked.get(hash);
    if (entry) return entry.transactionHash;
    return findUserOperationTransaction(client, entryPoint, hash, fromBlock);
  }

  const methods: Record<string, RpcMethod> = {
    eth_chainId: async () => numberToHex(await getChainId()),

    eth_supportedEntryPoints: async () => [entryPoint],

    eth_estimateUserOperationGas: async ([op, entryPointParam, stateOverride]) => {
      checkEntryPoint(entryPointParam);
      if (stateOverride !== undefined && (typeof stateOverride !== 'object' || stateOverride === null || Array.isArray(stateOverride))) {
        throw invalidParams('Invalid params: the state override must be an object keyed by address');
      }
      const gas = await estimateUserOperationGas(
        { client, entryPoint, chainId: await getChainId(), beneficiary },
        parseDraftUserOperation(op),
        stateOverride as RpcStateOverride | undefined,
      );
      return {
        preVerificationGas: numberToHex(gas.preVerificationGas),
        verificationGasLimit: numberToHex(gas.verificationGasLimit),
        callGasLimit: numberToHex(gas.callGasLimit),
        ...(gas.paymasterVerificationGasLimit !== undefined ? { paymasterVerificationGasLimit: numberToHex(gas.paymasterVerificationGasLimit) } : {}),
        ...(gas.paymasterPostOpGasLimit !== undefined ? { paymasterPostOpGasLimit: numberToHex(gas.paymasterPostOpGasLimit) } : {}),
      };
    },

    eth_sendUserOperation: async ([value, entryPointParam]) => {
      checkEntryPoint(entryPointParam);
      const op = parseUserOperation(value);
      const hash = userOperationHash(op, entryPoint, await getChainId());
      if (tracked.has(hash)) throw invalidParams(`User operation ${hash} was already sent`);
      await validateForInclusion(op);
      const entry: Tracked = { userOperation: op };
      track(hash, entry);
      try {
        entry.transactionHash = await submitter.submit(op);
      } catch (error) {
        tracked.delete(hash);
        throw error;
      }
      return hash;
    },

    eth_getUserOperationReceipt: async (params) => {
      const hash = hashParam(params);
      const transactionHash = await transactionOf(hash);
      const receipt = transactionHash ? await readUserOperationReceipt(client, entryPoint, hash, transactionHash) : null;
      if (receipt) await makeDurable(BigInt(receipt.receipt.blockNumber));
      return receipt;
    },

    eth_getUserOperationByHash: async (params): Promise<RpcUserOperationByHash | null> => {
      const hash = hashParam(params);
      const entry = tracked.get(hash);
      if (entry && !entry.transactionHash) {
        return { userOperation: toRpcUserOperation(entry.userOperation), entryPoint, blockNumber: null, blockHash: null, transactionHash: null };
      }
      const transactionHash = entry?.transactionHash ?? (await findUserOperationTransaction(client, entryPoint, hash, fromBlock));
      if (!transactionHash) return null;
      const found = await readUserOperationFromTransaction(client, entryPoint, await getChainId(), hash, transactionHash);
      if (found?.blockNumber) await makeDurable(BigInt(found.blockNumber));
      return found;
    },

    eth_gasPrice: () => client.request({ method: 'eth_gasPrice' }),

    eth_maxPriorityFeePerGas: () => client.request({ method: 'eth_maxPriorityFeePerGas' }),
  };

  return { entryPoint, methods };
}
