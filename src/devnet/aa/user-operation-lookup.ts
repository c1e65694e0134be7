// Included operations read back from the chain: the receipt from the UserOperationEvent (and
// UserOperationRevertReason) logs of the handleOps transaction, the operation itself from that transaction's
// calldata. Any operation the EntryPoint ran can be found this way, also one sent before a restart.
import {
  type Address,
  decodeEventLog,
  decodeFunctionData,
  type Hash,
  type Hex,
  isAddressEqual,
  numberToHex,
  type RpcLog,
  toEventSelector,
} from 'viem';
import { entryPoint07Abi, type RpcUserOperation, type RpcUserOperationReceipt } from 'viem/account-abstraction';
import type { ChainClient } from '../../chain/clients.js';
import { describeRevert } from './entry-point-simulation.js';
import { toRpcUserOperation, unpackUserOperation, userOperationHash } from './user-operation.js';

const USER_OPERATION_EVENT = toEventSelector('UserOperationEvent(bytes32,address,address,uint256,bool,uint256,uint256)');
const USER_OPERATION_REVERT_REASON = toEventSelector('UserOperationRevertReason(bytes32,address,uint256,bytes)');
const BEFORE_EXECUTION = toEventSelector('BeforeExecution()');

export interface RpcUserOperationByHash {
  userOperation: RpcUserOperation<'0.7'>;
  entryPoint: Address;
  blockNumber: Hex | null;
  blockHash: Hash | null;
  transactionHash: Hash | null;
}

/** The handleOps transaction that ran `userOpHash`, from its UserOperationEvent; undefined when none did. */
export async function findUserOperationTransaction(
  client: ChainClient,
  entryPoint: Address,
  userOpHash: Hash,
  fromBlock: bigint,
): Promise<Hash | undefined> {
  const logs = await client.request({
    method: 'eth_getLogs',
    params: [{ address: entryPoint, topics: [USER_OPERATION_EVENT, userOpHash], fromBlock: numberToHex(fromBlock), toBlock: 'latest' }],
  });
  return (logs as RpcLog[])[0]?.transactionHash ?? undefined;
}

const fromEntryPoint = (log: RpcLog, entryPoint: Address, topic: Hex): boolean => isAddressEqual(log.address, entryPoint) && log.topics[0] === topic;

/**
 * The ERC-7769 receipt of `userOpHash` in transaction `transactionHash` (null while it is not mined, or when the
 * transaction did not run it). `logs` are the logs of this operation's execution: those after the previous
 * operation's UserOperationEvent (or after BeforeExecution) up to its own.
 */
export async function readUserOperationReceipt(
  client: ChainClient,
  entryPoint: Address,
  userOpHash: Hash,
  transactionHash: Hash,
): Promise<RpcUserOperationReceipt<'0.7'> | null> {
  const receipt = await client.request({ method: 'eth_getTransactionReceipt', params: [transactionHash] });
  if (!receipt) return null;
  const logs = receipt.logs;
  let start = 0;
  const end = logs.findIndex((log, index) => {
    if (fromEntryPoint(log, entryPoint, BEFORE_EXECUTION)) start = index + 1;
    if (!fromEntryPoint(log, entryPoint, USER_OPERATION_EVENT)) return false;
    if (log.topics[1] === userOpHash) return true;
    start = index + 1;
    return false;
  });
  const eventLog = logs[end];
  if (!eventLog) return null;
  const { args: event } = decodeEventLog({
    abi: entryPoint07Abi,
    eventName: 'UserOperationEvent',
    data: eventLog.data,
    topics: eventLog.topics as [Hex, ...Hex[]],
  });
  const opLogs = logs.slice(start, end);
  const revertLog = opLogs.find((log) => fromEntryPoint(log, entryPoint, USER_OPERATION_REVERT_REASON) && log.topics[1] === userOpHash);
  const revert = revertLog
    ? decodeEventLog({
        abi: entryPoint07Abi,
        eventName: 'UserOperationRevertReason',
        data: revertLog.data,
        topics: revertLog.topics as [Hex, ...Hex[]],
      })
    : undefined;
  const reason = revert ? describeRevert(revert.args.revertReason) : undefined;
  return {
    userOpHash,
    entryPoint,
    sender: event.sender,
    nonce: numberToHex(event.nonce),
    paymaster: event.paymaster,
    actualGasCost: numberToHex(event.actualGasCost),
    actualGasUsed: numberToHex(event.actualGasUsed),
    success: event.success,
    ...(reason !== undefined ? { reason } : {}),
    logs: opLogs,
    receipt,
  } as RpcUserOperationReceipt<'0.7'>;
}

/** `userOpHash` read from the handleOps calldata of `transactionHash`, with where it was mined; null when not there. */
export async function readUserOperationFromTransaction(
  client: ChainClient,
  entryPoint: Address,
  chainId: number,
  userOpHash: Hash,
  transactionHash: Hash,
): Promise<RpcUserOperationByHash | null> {
  const transaction = await client.request({ method: 'eth_getTransactionByHash', params: [transactionHash] });
  if (!transaction) return null;
  let packed: readonly Parameters<typeof unpackUserOperation>[0][];
  try {
    const call = decodeFunctionData({ abi: entryPoint07Abi, data: transaction.input });
    if (call.functionName !== 'handleOps') return null;
    packed = call.args[0];
  } catch {
    return null; // handleOps called through another contract: not readable from this calldata
  }
  for (const candidate of packed) {
    const userOperation = unpackUserOperation(candidate);
    if (userOperationHash(userOperation, entryPoint, chainId) !== userOpHash) continue;
    return {
      userOperation: toRpcUserOperation(userOperation),
      entryPoint,
      blockNumber: transaction.blockNumber,
      blockHash: transaction.blockHash,
      transactionHash,
    };
  }
  return null;
}
