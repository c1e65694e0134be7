// What the local paymaster pays for: the product's own uses of an account, nothing else.
// - Deployment only through our factories (PasskeyAccountFactory, the canonical SimpleAccountFactory v0.7), their
//   createAccount: any other initCode could run anything (a loop that burns the gas limit) on the deposit.
// - Accounts of those two kinds only, recognised by their code: a passkey account is an ERC-1167 clone of the passkey
//   factory's implementation, a SimpleAccount the ERC-1967 proxy the factory deploys, pointing at SimpleAccount v0.7.
//   Another account's callData cannot be read (its execute may do anything), so it is refused.
// - Calls to the registry's agent-management actions by the account they concern (guardianRevoke by the agent's
//   guardian: the smartwallet mode; selfDeregister and updateAgentMetadata by the agent's owner), without value; and
//   any call to a target the operator allows (AA_SPONSOR_ALLOWED_TARGETS). A call that would revert for want of
//   authority is refused up front: the paymaster would pay for the revert.
// - No calls at all only when the operation deploys the account.
import { type Address, concat, decodeFunctionData, getContractAddress, type Hex, isAddressEqual, keccak256, sliceHex } from 'viem';
import type { ChainClient } from '../../chain/clients.js';
import { agentRegistryAbi } from '../../contracts/artifacts/AgentRegistry.js';
import { passkeyAccountFactoryAbi } from '../../contracts/artifacts/PasskeyAccountFactory.js';
import { type AccountCall, type AccountKind, decodeAccountCalls } from './account-calls.js';
import { SIMPLE_ACCOUNT_V07, simpleAccountFactoryAbi } from './simple-account-factory.js';
import { sponsorshipRefused } from './sponsorship-refusal.js';
import type { DraftUserOperation } from './user-operation.js';

export interface SponsoredCallRules {
  /** This chain's agent registry. */
  registry: Address;
  /** PasskeyAccountFactory. */
  passkeyFactory: Address;
  /** The canonical SimpleAccountFactory v0.7. */
  simpleAccountFactory: Address;
  /** Targets any call may go to, with any value (the operator's AA_SPONSOR_ALLOWED_TARGETS). */
  allowedTargets?: readonly Address[];
}

/** The registry functions sponsored, and who may call them: the agent's guardian, or the owner of its NFT. */
const REGISTRY_ACTIONS = { guardianRevoke: 'guardian', selfDeregister: 'owner', updateAgentMetadata: 'owner' } as const;
type RegistryAction = keyof typeof REGISTRY_ACTIONS;
const isRegistryAction = (name: string): name is RegistryAction => Object.hasOwn(REGISTRY_ACTIONS, name);

/**
 * keccak256 of the code every SimpleAccountFactory v0.7 account has: OpenZeppelin 5.0's ERC1967Proxy as built into
 * the published factory (no immutables, so one code for all; test/chain/aa-sponsorship-policy.test.ts reads it
 * back from a freshly deployed account).
 */
export const SIMPLE_ACCOUNT_PROXY_CODE_HASH: Hex = '0x0cf33e42b59cd30ce43a3d95a9c4de2589047c5e0968708337764f9776097210';
const ERC1967_IMPLEMENTATION_SLOT: Hex = '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc';

/** The runtime code of an ERC-1167 clone of `implementation` (what OpenZeppelin's Clones deploys). */
const erc1167Code = (implementation: Address): Hex =>
  concat(['0x363d3d373d3d3d363d73', implementation, '0x5af43d82803e903d91602b57fd5bf3']).toLowerCase() as Hex;

const refuseCalls = (message: string) => sponsorshipRefused('allowed calls', message);

export type SponsoredCallCheck = (op: DraftUserOperation) => Promise<void>;

export function sponsoredCallCheck(client: ChainClient, rules: SponsoredCallRules): SponsoredCallCheck {
  // the factory's constructor creates the implementation, the factory's first CREATE (a contract's nonce starts at 1)
  const passkeyClone = erc1167Code(getContractAddress({ opcode: 'CREATE', from: rules.passkeyFactory, nonce: 1n }));
  const allowed = rules.allowedTargets ?? [];
  const factories = `PasskeyAccountFactory ${rules.passkeyFactory}, SimpleAccountFactory v0.7 ${rules.simpleAccountFactory}`;

  /** The kind of account the operation's factory deploys, its createAccount checked. */
  function deployedKind(factory: Address, factoryData: Hex): AccountKind {
    const kind = isAddressEqual(factory, rules.passkeyFactory)
      ? 'passkey'
      : isAddressEqual(factory, rules.simpleAccountFactory)
        ? 'simple'
        : undefined;
    if (!kind) throw sponsorshipRefused('factory', `the operation's factory ${factory} is not one of this paymaster's (${factories})`);
    const abi = kind === 'passkey' ? passkeyAccountFactoryAbi : simpleAccountFactoryAbi;
    let functionName: string | undefined;
    try {
      functionName = decodeFunctionData({ abi, data: factoryData }).functionName;
    } catch {}
    if (functionName !== 'createAccount') throw sponsorshipRefused('factory', `factoryData is not a createAccount call of ${factory}`);
    return kind;
  }

  /** The kind of a deployed account, from its code. */
  async function existingKind(sender: Address): Promise<AccountKind> {
    const code = (await client.getCode({ address: sender }))?.toLowerCase();
    if (!code || code === '0x') {
      throw sponsorshipRefused('account kind', `${sender} has no code and the operation deploys no account (factory and factoryData)`);
    }
    if (code === passkeyClone) return 'passkey';
    if (keccak256(code as Hex) === SIMPLE_ACCOUNT_PROXY_CODE_HASH) {
      const slot = await client.getStorageAt({ address: sender, slot: ERC1967_IMPLEMENTATION_SLOT });
      if (slot && isAddressEqual(sliceHex(slot, 12), SIMPLE_ACCOUNT_V07)) return 'simple';
    }
    throw sponsorshipRefused(
      'account kind',
      `${sender} is not an account of this paymaster's factories (a passkey account or a SimpleAccount v0.7): its callData cannot be checked`,
    );
  }

  /** A registry call: one of the agent-management actions, without value, by the account it concerns. */
  async function checkRegistryCall(sender: Address, call: AccountCall, position: string): Promise<void> {
    let decoded: { functionName: string; args?: readonly unknown[] } | undefined;
    try {
      decoded = decodeFunctionData({ abi: agentRegistryAbi, data: call.data });
    } catch {}
    const name = decoded?.functionName ?? call.data.slice(0, 10);
    if (!decoded || !isRegistryAction(name)) {
      throw refuseCalls(`${position} calls registry function ${name}, not one of ${Object.keys(REGISTRY_ACTIONS).join(', ')}`);
    }
    if (call.value !== 0n) throw refuseCalls(`${position} sends value with ${name}, which takes none`);
    const agentId = decoded.args?.[0] as bigint;
    const role = REGISTRY_ACTIONS[name];
    const holder = await client
      .readContract({
        address: rules.registry,
        abi: agentRegistryAbi,
        functionName: role === 'guardian' ? 'agentGuardian' : 'ownerOf',
        args: [agentId],
      })
      .catch(() => undefined); // ownerOf reverts for an agent that does not exist
    if (!holder || !isAddressEqual(holder, sender)) {
      throw refuseCalls(`${position} calls ${name}(${agentId}) from ${sender}, which is not agent ${agentId}'s ${role}`);
    }
  }

  return async (op) => {
    const kind = op.factory ? deployedKind(op.factory, op.factoryData ?? '0x') : await existingKind(op.sender);
    const calls = decodeAccountCalls(kind, op.callData);
    if (!calls) {
      const expected = kind === 'passkey' ? 'ERC-7821 execute in batch mode' : 'execute or executeBatch';
      throw refuseCalls(`the callData is not a ${kind} account's ${expected}, canonically encoded`);
    }
    if (calls.length === 0 && !op.factory) throw refuseCalls('the operation neither deploys the account nor calls anything');
    await Promise.all(
      calls.map(async (call, i) => {
        if (allowed.some((target) => isAddressEqual(target, call.to))) return;
        const position = `call ${i + 1} of ${calls.length}`;
        if (isAddressEqual(call.to, rules.registry)) return checkRegistryCall(op.sender, call, position);
        throw refuseCalls(`${position} goes to ${call.to}, neither the registry nor a target the operator allows`);
      }),
    );
  };
}
