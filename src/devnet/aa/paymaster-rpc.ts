// An ERC-7677 paymaster service for our SponsorPaymaster (a verifying paymaster) on a chain we run ourselves:
// pm_getPaymasterStubData, pm_getPaymasterData, the older pm_sponsorUserOperation, and eth_chainId.
//
// paymasterAndData = paymaster (20) ‖ paymasterVerificationGasLimit (16) ‖ paymasterPostOpGasLimit (16)
//                  ‖ abi.encode(uint48 validUntil, uint48 validAfter) (64) ‖ signature (65),
// the signature being the service signer's EIP-191 signature of the paymaster's getHash(userOp, validUntil,
// validAfter), read from the contract itself so the two can never disagree about what is signed.
//
// Sponsorship policy (each refusal is a JSON-RPC error, code -32001, whose message names the rule):
// - Only operations for the configured EntryPoint (v0.7) on this chain; others are refused as invalid params.
// - allowed calls, factory, account kind: only what the product needs (sponsored-calls.ts): accounts of our two
//   factories, deployed by them or already deployed, calling the registry's agent-management actions or a target
//   the operator allows, or nothing while being deployed.
// - An approval is valid for a few minutes: validUntil is the latest block's time plus validitySeconds (default
//   300), validAfter is 0. The EntryPoint refuses the operation after that (AA32), so a stale approval cannot be
//   replayed later.
// - sender limit: each sender gets at most maxOperationsPerSender approvals (default 10) in a rolling windowSeconds
//   (default one hour). An approval counts when the paymaster signs (pm_getPaymasterData, pm_sponsorUserOperation),
//   whether or not the operation is then sent; stub data does not count, but a sender already at its limit is
//   refused there, before the wallet spends an estimation on it.
// - operation cap: the gas the paymaster may be charged for one operation is capped: the sum of its gas limits at
//   most maxGasPerOperation (default 5,000,000; a passkey account's deployment takes about 1.7M), and that sum times
//   maxFeePerGas at most maxCostPerOperation (default 0.05 of the native token).
// - token budget, client budget, global budget: senders cost nothing to make, so the sender limit alone bounds
//   nothing; what is signed is charged, in gas and in wei, to the budgets of the proxy token and of the client
//   address the proxy vouches for (aa/sponsoree-header.ts) and to the paymaster's own, per rolling hour
//   (sponsorship-budget.ts). Like the sender limit, a signature counts whether or not the operation is sent.
import {
  type Address,
  concat,
  encodeAbiParameters,
  formatEther,
  type Hex,
  hexToNumber,
  isAddressEqual,
  isHex,
  type LocalAccount,
  numberToHex,
  parseEther,
} from 'viem';
import { DIRECT_CLIENT } from '../../aa/sponsoree-header.js';
import type { ChainClient } from '../../chain/clients.js';
import { sponsorPaymasterAbi } from '../../contracts/artifacts/index.js';
import { estimateUserOperationGas } from './gas-estimation.js';
import { chainIdOnce, invalidParams, type RpcContext, type RpcMethod, type RpcService } from './json-rpc.js';
import { type SponsoredCallRules, sponsoredCallCheck } from './sponsored-calls.js';
import {
  type BudgetLedger,
  createMemoryBudgetLedger,
  DEFAULT_BUDGETS,
  type SponsoredCost,
  type SponsorshipBudgetLimits,
  sponsorshipBudgets,
} from './sponsorship-budget.js';
import { sponsorshipRefused } from './sponsorship-refusal.js';
import { type DraftUserOperation, packUserOperation, parseDraftUserOperation, totalGasLimit, type UserOperationV07 } from './user-operation.js';

/** Records of approvals per sender, for the per-sender limit: in memory by default, or on a shared store. */
export interface SponsorshipLedger {
  /** Approvals recorded for `sender` at or after `since` (unix ms), oldest first. */
  approvals(sender: Address, since: number): Promise<number[]>;
  /** Records an approval for `sender` at `at` (unix ms). */
  record(sender: Address, at: number): Promise<void>;
}

/** The in-memory ledger: approvals older than `windowMs` are dropped, and at most `maxSenders` senders are kept. */
export function createMemorySponsorshipLedger(windowMs: number, maxSenders = 10_000): SponsorshipLedger {
  const bySender = new Map<Address, number[]>();
  return {
    async approvals(sender, since) {
      return (bySender.get(sender) ?? []).filter((at) => at >= since);
    },
    async record(sender, at) {
      const kept = (bySender.get(sender) ?? []).filter((time) => time > at - windowMs);
      bySender.delete(sender); // re-inserted last: the map's order is the senders' recency
      bySender.set(sender, [...kept, at]);
      for (const oldest of bySender.keys()) {
        if (bySender.size <= maxSenders) break;
        bySender.delete(oldest);
      }
    },
  };
}

export interface SponsorshipPolicy {
  validitySeconds?: number;
  maxOperationsPerSender?: number;
  windowSeconds?: number;
  maxGasPerOperation?: bigint;
  /** In wei. */
  maxCostPerOperation?: bigint;
  /** Where approvals are counted (default: in memory, per process). */
  ledger?: SponsorshipLedger;
  /** Gas and wei per rolling hour per proxy token, per client and in all (default DEFAULT_BUDGETS). */
  budgets?: Partial<SponsorshipBudgetLimits>;
  /** Where the budgets are counted (default: in memory, per process). */
  budgetLedger?: BudgetLedger;
  /** Named to wallets as the sponsor (ERC-7677 `sponsor.name`). */
  sponsorName?: string;
}

export interface LocalPaymasterOptions {
  client: ChainClient;
  /** The SponsorPaymaster contract. */
  paymaster: Address;
  /** The paymaster's verifying signer. */
  signer: LocalAccount;
  entryPoint: Address;
  /** What the sponsored operations may call (the registry, our factories, the operator's targets). */
  calls: SponsoredCallRules;
  policy?: SponsorshipPolicy;
}

export interface LocalPaymaster extends RpcService {
  readonly paymaster: Address;
}

/**
 * The paymaster's gas limits. Verification: getHash over the operation plus one ECDSA recovery, about 30K gas with
 * the calldata copies; 100K leaves room for long callData and initCode. PostOp: none, the paymaster asks for none.
 */
const PAYMASTER_VERIFICATION_GAS = 100_000n;
const PAYMASTER_POST_OP_GAS = 0n;
/** A well-formed signature of no one: the stub recovers to some address, so validation fails (AA34) without reverting. */
const STUB_SIGNATURE: Hex =
  '0xfffffffffffffffffffffffffffffff0000000000000000000000000000000007aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1c';

const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);

const validityData = (validUntil: number, validAfter: number): Hex =>
  encodeAbiParameters([{ type: 'uint48' }, { type: 'uint48' }], [validUntil, validAfter]);

export function createLocalPaymaster(options: LocalPaymasterOptions): LocalPaymaster {
  const { client, paymaster, signer, entryPoint } = options;
  const policy = options.policy ?? {};
  const validitySeconds = policy.validitySeconds ?? 300;
  const maxPerSender = policy.maxOperationsPerSender ?? 10;
  const windowMs = (policy.windowSeconds ?? 3600) * 1000;
  const maxGas = policy.maxGasPerOperation ?? 5_000_000n;
  const maxCost = policy.maxCostPerOperation ?? parseEther('0.05');
  const ledger = policy.ledger ?? createMemorySponsorshipLedger(windowMs);
  const budgets = sponsorshipBudgets(policy.budgetLedger ?? createMemoryBudgetLedger(), { ...DEFAULT_BUDGETS, ...policy.budgets });
  const checkCalls = sponsoredCallCheck(client, options.calls);
  const getChainId = chainIdOnce(client);

  async function checkTarget(entryPointParam: unknown, chainIdParam?: unknown): Promise<void> {
    if (typeof entryPointParam !== 'string' || !isAddressEqual(entryPointParam as Address, entryPoint)) {
      throw invalidParams(`Unsupported entry point ${String(entryPointParam)}: this paymaster serves ${entryPoint}`);
    }
    if (chainIdParam === undefined) return;
    const ours = await getChainId();
    if (typeof chainIdParam !== 'string' || !isHex(chainIdParam) || hexToNumber(chainIdParam) !== ours) {
      throw invalidParams(`Unsupported chain ${String(chainIdParam)}: this paymaster serves chain ${numberToHex(ours)}`);
    }
  }

  /** Refuses a sender at its limit, naming when its oldest counted approval leaves the window. */
  async function checkSenderLimit(sender: Address): Promise<void> {
    const now = Date.now();
    const recent = await ledger.approvals(sender, now - windowMs);
    if (recent.length < maxPerSender) return;
    const retryIn = Math.max(1, Math.ceil(((recent[0] ?? now) + windowMs - now) / 1000));
    throw sponsorshipRefused(
      'sender limit',
      `${sender} already had ${recent.length} sponsored operations in the last ${windowMs / 1000} s (the limit); try again in ${retryIn} s`,
    );
  }

  function checkGasCap(op: UserOperationV07): void {
    const gas = totalGasLimit(op);
    if (gas > maxGas)
      throw sponsorshipRefused('operation cap', `the operation's gas limits add up to ${gas}, over the ${maxGas} this paymaster pays per operation`);
    const cost = gas * op.maxFeePerGas;
    if (cost > maxCost) {
      throw sponsorshipRefused(
        'operation cap',
        `the operation may cost ${formatEther(cost)}, over the ${formatEther(maxCost)} this paymaster pays per operation`,
      );
    }
  }

  function withFees(draft: DraftUserOperation): UserOperationV07 {
    if (draft.maxFeePerGas === undefined || draft.maxPriorityFeePerGas === undefined) {
      throw invalidParams('Invalid user operation: maxFeePerGas and maxPriorityFeePerGas are part of what the paymaster signs');
    }
    return draft as UserOperationV07;
  }

  /** The operation with our paymaster and its gas limits (the caller's when it already carries them). */
  const sponsored = (op: UserOperationV07, paymasterData: Hex): UserOperationV07 => ({
    ...op,
    paymaster,
    paymasterVerificationGasLimit: op.paymasterVerificationGasLimit || PAYMASTER_VERIFICATION_GAS,
    paymasterPostOpGasLimit: op.paymasterPostOpGasLimit ?? PAYMASTER_POST_OP_GAS,
    paymasterData,
  });

  async function validUntil(): Promise<number> {
    const block = await client.getBlock({ blockTag: 'latest' });
    return Number(block.timestamp) + validitySeconds;
  }

  /** The most the EntryPoint may take from the deposit for `op`. */
  const costOf = (op: UserOperationV07): SponsoredCost => ({ gas: totalGasLimit(op), wei: totalGasLimit(op) * op.maxFeePerGas });

  /**
   * Approves `op` (its gas limits final, its calls checked): checks the caps and the sender limit, charges the
   * budgets of whoever asks, counts the approval, signs. Returns paymasterData.
   */
  async function approve(op: UserOperationV07, context: RpcContext): Promise<Hex> {
    checkGasCap(op);
    await checkSenderLimit(op.sender);
    const until = await validUntil();
    const unsigned = { ...op, paymasterData: concat([validityData(until, 0), STUB_SIGNATURE]) };
    const hash = await client.readContract({
      address: paymaster,
      abi: sponsorPaymasterAbi,
      functionName: 'getHash',
      args: [packUserOperation(unsigned), until, 0],
    });
    await budgets.charge(context.sponsoree ?? { client: DIRECT_CLIENT }, op.sender, costOf(op), Date.now());
    await ledger.record(op.sender, Date.now());
    const signature = await signer.signMessage({ message: { raw: hash } });
    return concat([validityData(until, 0), signature]);
  }

  const paymasterFields = (op: UserOperationV07, paymasterData: Hex) => ({
    paymaster,
    paymasterData,
    paymasterVerificationGasLimit: numberToHex(op.paymasterVerificationGasLimit ?? 0n),
    paymasterPostOpGasLimit: numberToHex(op.paymasterPostOpGasLimit ?? 0n),
  });

  const methods: Record<string, RpcMethod> = {
    eth_chainId: async () => numberToHex(await getChainId()),

    pm_getPaymasterStubData: async ([userOp, entryPointParam, chainIdParam]) => {
      await checkTarget(entryPointParam, chainIdParam);
      const draft = parseDraftUserOperation(userOp);
      await checkCalls(draft);
      await checkSenderLimit(draft.sender);
      const stubData = concat([validityData(await validUntil(), 0), STUB_SIGNATURE]);
      const op = sponsored({ ...draft, maxFeePerGas: 0n, maxPriorityFeePerGas: 0n }, stubData);
      return {
        ...paymasterFields(op, stubData),
        isFinal: false,
        ...(policy.sponsorName ? { sponsor: { name: policy.sponsorName } } : {}),
      };
    },

    pm_getPaymasterData: async ([userOp, entryPointParam, chainIdParam], context = {}) => {
      await checkTarget(entryPointParam, chainIdParam);
      const op = sponsored(withFees(parseDraftUserOperation(userOp)), '0x');
      await checkCalls(op);
      return paymasterFields(op, await approve(op, context));
    },

    pm_sponsorUserOperation: async ([userOp, entryPointParam], context = {}) => {
      await checkTarget(entryPointParam);
      const draft = withFees(parseDraftUserOperation(userOp));
      await checkCalls(draft);
      await checkSenderLimit(draft.sender);
      const stub = sponsored(draft, concat([validityData(await validUntil(), 0), STUB_SIGNATURE]));
      const gas = await estimateUserOperationGas({ client, entryPoint, chainId: await getChainId(), beneficiary: paymaster }, stub);
      // a limit the operation already carries stays when it is higher: estimation runs on the account's stub
      // signature, and an account whose real signature costs more to check knows it (a passkey's P-256 check)
      const op: UserOperationV07 = {
        ...stub,
        callGasLimit: max(gas.callGasLimit, draft.callGasLimit),
        verificationGasLimit: max(gas.verificationGasLimit, draft.verificationGasLimit),
        preVerificationGas: max(gas.preVerificationGas, draft.preVerificationGas),
        paymasterVerificationGasLimit: max(gas.paymasterVerificationGasLimit ?? 0n, draft.paymasterVerificationGasLimit ?? 0n),
      };
      const paymasterData = await approve(op, context);
      return {
        ...paymasterFields(op, paymasterData),
        preVerificationGas: numberToHex(op.preVerificationGas),
        verificationGasLimit: numberToHex(op.verificationGasLimit),
        callGasLimit: numberToHex(op.callGasLimit),
      };
    },
  };

  return { paymaster, methods };
}
