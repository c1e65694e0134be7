// The ERC-4337 stack on a real anvil: EntryPoint v0.7 at its canonical address, PasskeyAccount (WebAuthn P-256,
// ERC-7821, ERC-7739) made by PasskeyAccountFactory, and SponsorPaymaster paying for UserOperations its signer
// approved. UserOperations go straight to EntryPoint.handleOps from a funded EOA, as a bundler sends them.
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  concat,
  decodeErrorResult,
  encodeFunctionData,
  type Hex,
  hashMessage,
  hashTypedData,
  isErc6492Signature,
  keccak256,
  numberToHex,
  pad,
  parseEther,
  stringToHex,
} from 'viem';
import { entryPoint07Abi, entryPoint07Address, getUserOperationHash, toPackedUserOperation } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import {
  encodeWebAuthnSignature,
  type PasskeySmartAccount,
  passkeyAccountSignableHash,
  toPasskeySmartAccount,
} from '../../src/aa/passkey-account.js';
import { createChainClient, createChainWallet } from '../../src/chain/clients.js';
import { passkeyAccountAbi, passkeyAccountFactoryAbi, sponsorPaymasterAbi } from '../../src/contracts/artifacts/index.js';
import { type AccountAbstractionAddresses, accountAbstractionAddresses, deployAccountAbstraction } from '../../src/devnet/aa/deploy-aa.js';
import { ENTRY_POINT_V07 } from '../../src/devnet/aa/entry-point.js';
import { fund } from '../../src/devnet/embedded.js';
import { encodePaymasterData, handleOps, softwarePasskey, sponsoredUserOperation, sponsorPaymasterHash } from '../support/aa.js';
import { deployTestSystem, LOCAL, type LocalChainWallet, type TestSystem } from '../support/chain.js';

const ERC1271_MAGIC = '0x1626ba7e';
const ERC1271_REFUSED = '0xffffffff';

/** The custom error a contract call reverted with: name and arguments (EntryPoint's FailedOp and the like). */
async function revertOf(promise: Promise<unknown>): Promise<{ errorName: string; args: readonly unknown[] }> {
  try {
    await promise;
  } catch (error) {
    const reverted = error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : undefined;
    if (reverted instanceof ContractFunctionRevertedError && reverted.data) {
      return { errorName: reverted.data.errorName, args: reverted.data.args ?? [] };
    }
    throw error;
  }
  throw new Error('expected a revert');
}

describe('ERC-4337 stack: EntryPoint v0.7, passkey accounts, sponsor paymaster', () => {
  let system: TestSystem;
  let aa: AccountAbstractionAddresses;
  let bundler: LocalChainWallet;
  const paymasterSigner = privateKeyToAccount(generatePrivateKey());
  const passkey = softwarePasskey();
  let account: PasskeySmartAccount;

  beforeAll(async () => {
    system = await deployTestSystem();
    bundler = await system.newWallet();
    aa = await deployAccountAbstraction({ client: system.client, wallet: system.operator, paymasterSigner: paymasterSigner.address });
    account = await toPasskeySmartAccount({ client: system.client, owner: passkey, factory: aa.accountFactory });
  });

  const depositOf = (paymaster: Address): Promise<bigint> =>
    system.client.readContract({ address: paymaster, abi: sponsorPaymasterAbi, functionName: 'getDeposit' });

  it('puts EntryPoint v0.7 at its canonical address and the factory at the same address on both chains', async () => {
    expect(aa.entryPoint).toBe(ENTRY_POINT_V07);
    expect(aa.entryPoint).toBe(entryPoint07Address);
    expect(await system.client.getCode({ address: ENTRY_POINT_V07 })).toMatch(/^0x[0-9a-f]{1000,}/);
    expect(aa).toEqual(accountAbstractionAddresses(system.operator.account.address, paymasterSigner.address));

    const rpcUrl = inject('rpc').mainnet;
    const mainnet = createChainClient('mainnet', { rpcUrl, ...LOCAL });
    const mainnetOperator = privateKeyToAccount(generatePrivateKey());
    await fund(mainnet, mainnetOperator.address);
    const onMainnet = await deployAccountAbstraction({
      client: mainnet,
      wallet: createChainWallet('mainnet', mainnetOperator, { rpcUrl, ...LOCAL }),
      paymasterSigner: paymasterSigner.address,
    });
    expect(onMainnet.entryPoint).toBe(aa.entryPoint);
    expect(onMainnet.accountFactory).toBe(aa.accountFactory);

    // the clones' implementation cannot be taken over: initialised at construction with a key nobody holds
    const implementation = await system.client.readContract({
      address: aa.accountFactory,
      abi: passkeyAccountFactoryAbi,
      functionName: 'accountImplementation',
    });
    const signer = await system.client.readContract({ address: implementation, abi: passkeyAccountAbi, functionName: 'signer' });
    expect(signer[0]).toBe('0x2183bcd1781d8602f410326c72095e06d44ad8fca2e2cc3d20fa851e27cce2bc');
    const takeover = system.client.simulateContract({
      address: implementation,
      abi: passkeyAccountAbi,
      functionName: 'initialize',
      args: [pad('0x01'), pad('0x02')],
      account: bundler.account,
    });
    expect((await revertOf(takeover)).errorName).toBe('InvalidInitialization');
  });

  it('is idempotent and tops the paymaster deposit up when it runs low', async () => {
    expect(await depositOf(aa.paymaster)).toBe(parseEther('100'));
    const operator = system.operator.account.address;
    const sent = await system.client.getTransactionCount({ address: operator });
    const again = await deployAccountAbstraction({ client: system.client, wallet: system.operator, paymasterSigner: paymasterSigner.address });
    expect(again).toEqual(aa);
    expect(await system.client.getTransactionCount({ address: operator })).toBe(sent);

    const withdrawal = await system.operator.writeContract({
      address: aa.paymaster,
      abi: sponsorPaymasterAbi,
      functionName: 'withdrawTo',
      args: [operator, parseEther('95')],
    });
    await system.client.waitForTransactionReceipt({ hash: withdrawal });
    expect(await depositOf(aa.paymaster)).toBe(parseEther('5'));
    await deployAccountAbstraction({ client: system.client, wallet: system.operator, paymasterSigner: paymasterSigner.address });
    expect(await depositOf(aa.paymaster)).toBe(parseEther('100'));

    // only the owner moves the deposit or the signer
    const foreign = system.client.simulateContract({
      address: aa.paymaster,
      abi: sponsorPaymasterAbi,
      functionName: 'withdrawTo',
      args: [bundler.account.address, 1n],
      account: bundler.account,
    });
    expect((await revertOf(foreign)).errorName).toBe('OwnableUnauthorizedAccount');
    expect(await system.client.readContract({ address: aa.paymaster, abi: sponsorPaymasterAbi, functionName: 'verifyingSigner' })).toBe(
      paymasterSigner.address,
    );
  });

  it("signs the paymaster's approval over the hash its getHash computes", async () => {
    const op = await sponsoredUserOperation(system.client, account, [{ to: bundler.account.address }], {
      paymaster: aa.paymaster,
      signer: paymasterSigner,
      validUntil: 2_000_000_000,
      validAfter: 1_000,
    });
    const onChain = await system.client.readContract({
      address: aa.paymaster,
      abi: sponsorPaymasterAbi,
      functionName: 'getHash',
      args: [toPackedUserOperation(op), 2_000_000_000, 1_000],
    });
    expect(sponsorPaymasterHash(op, { chainId: system.client.chain.id, paymaster: aa.paymaster, validUntil: 2_000_000_000, validAfter: 1_000 })).toBe(
      onChain,
    );
  });

  it('deploys a passkey account with its first UserOperation and runs its batched calls, paid by the paymaster', async () => {
    expect(await account.isDeployed()).toBe(false);
    const recipients = [privateKeyToAccount(generatePrivateKey()).address, privateKeyToAccount(generatePrivateKey()).address];
    await fund(system.client, account.address, parseEther('1'));
    const depositBefore = await depositOf(aa.paymaster);

    const op = await sponsoredUserOperation(
      system.client,
      account,
      recipients.map((to) => ({ to, value: parseEther('0.25') })),
      { paymaster: aa.paymaster, signer: paymasterSigner },
    );
    expect(op.factory).toBe(aa.accountFactory);
    const handled = await handleOps(system.client, bundler, [op]);
    console.info(
      `first UserOperation (deploys the account, 2 transfers): actualGasUsed ${handled.actualGasUsed}, handleOps gasUsed ${handled.receipt.gasUsed}`,
    );

    expect(handled.success).toBe(true);
    expect(handled.paymaster).toBe(aa.paymaster);
    expect(await system.client.getCode({ address: account.address })).toBeDefined();
    for (const to of recipients) expect(await system.client.getBalance({ address: to })).toBe(parseEther('0.25'));
    // the paymaster paid: the account spent only what it sent
    expect(await system.client.getBalance({ address: account.address })).toBe(parseEther('0.5'));
    expect(await depositOf(aa.paymaster)).toBeLessThan(depositBefore);
    const [x, y] = await system.client.readContract({ address: account.address, abi: passkeyAccountAbi, functionName: 'signer' });
    expect(concat([x, y])).toBe(passkey.publicKey);
  });

  it('runs a later UserOperation of the deployed account without a factory', async () => {
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    const op = await sponsoredUserOperation(system.client, account, [{ to: recipient, value: parseEther('0.1') }], {
      paymaster: aa.paymaster,
      signer: paymasterSigner,
    });
    expect(op.factory).toBeUndefined();
    expect(op.nonce).toBe(1n);
    const handled = await handleOps(system.client, bundler, [op]);
    console.info(`later UserOperation (1 transfer): actualGasUsed ${handled.actualGasUsed}, handleOps gasUsed ${handled.receipt.gasUsed}`);
    expect(handled.success).toBe(true);
    expect(await system.client.getBalance({ address: recipient })).toBe(parseEther('0.1'));
  });

  it('refuses a UserOperation that another passkey signed (AA24)', async () => {
    const op = await sponsoredUserOperation(system.client, account, [{ to: bundler.account.address }], {
      paymaster: aa.paymaster,
      signer: paymasterSigner,
    });
    const hash = getUserOperationHash({
      userOperation: op,
      chainId: system.client.chain.id,
      entryPointAddress: entryPoint07Address,
      entryPointVersion: '0.7',
    });
    op.signature = encodeWebAuthnSignature(await softwarePasskey().sign({ hash }));
    const { errorName, args } = await revertOf(handleOps(system.client, bundler, [op]));
    expect(errorName).toBe('FailedOp');
    expect(args).toEqual([0n, 'AA24 signature error']);
  });

  it('refuses a UserOperation whose paymaster approval another key signed (AA34)', async () => {
    const op = await sponsoredUserOperation(system.client, account, [{ to: bundler.account.address }], {
      paymaster: aa.paymaster,
      signer: privateKeyToAccount(generatePrivateKey()),
    });
    const { errorName, args } = await revertOf(handleOps(system.client, bundler, [op]));
    expect(errorName).toBe('FailedOp');
    expect(args).toEqual([0n, 'AA34 signature error']);
  });

  it('refuses a UserOperation whose approval has expired (AA32)', async () => {
    const { timestamp } = await system.client.getBlock();
    const op = await sponsoredUserOperation(system.client, account, [{ to: bundler.account.address }], {
      paymaster: aa.paymaster,
      signer: paymasterSigner,
      validUntil: Number(timestamp) - 1,
    });
    const { errorName, args } = await revertOf(handleOps(system.client, bundler, [op]));
    expect(errorName).toBe('FailedOp');
    expect(args).toEqual([0n, 'AA32 paymaster expired or not due']);
  });

  it('reverts on malformed paymasterData, and only fails validation for a well-formed dummy signature', async () => {
    const malformed = await sponsoredUserOperation(system.client, account, [{ to: bundler.account.address }], {
      paymaster: aa.paymaster,
      signer: paymasterSigner,
      paymasterData: encodePaymasterData(0, 0, '0x'),
    });
    const { errorName, args } = await revertOf(handleOps(system.client, bundler, [malformed]));
    expect(errorName).toBe('FailedOpWithRevert');
    expect(args.slice(0, 2)).toEqual([0n, 'AA33 reverted']);
    expect(decodeErrorResult({ abi: sponsorPaymasterAbi, data: args[2] as Hex })).toMatchObject({
      errorName: 'InvalidPaymasterDataLength',
      args: [64n],
    });

    // what a gas estimation sends: the stub's dummy signature reaches validation and fails it, without a revert
    for (const dummy of [`0x${'ff'.repeat(65)}`, `0x${'00'.repeat(64)}1c`] as const) {
      const stub = await sponsoredUserOperation(system.client, account, [{ to: bundler.account.address }], {
        paymaster: aa.paymaster,
        signer: paymasterSigner,
        paymasterData: encodePaymasterData(2_000_000_000, 0, dummy),
      });
      const { result } = await system.client.simulateContract({
        address: aa.paymaster,
        abi: sponsorPaymasterAbi,
        functionName: 'validatePaymasterUserOp',
        args: [toPackedUserOperation(stub), keccak256('0x'), 0n],
        account: entryPoint07Address,
      });
      const validationData = result[1];
      expect(validationData & 1n).toBe(1n); // signature failure
      expect(validationData >> 160n).toBe(2_000_000_000n); // validUntil
    }
  });

  it('accepts an ERC-1271 passkey signature of a hash (ERC-7739 envelope) and refuses others', async () => {
    expect(await account.isDeployed()).toBe(true);
    const hash = keccak256(stringToHex('an agent says hello'));
    const signature = await account.sign({ hash });
    const check = (h: Hex, s: Hex): Promise<Hex> =>
      system.client.readContract({ address: account.address, abi: passkeyAccountAbi, functionName: 'isValidSignature', args: [h, s] });

    expect(await check(hash, signature)).toBe(ERC1271_MAGIC);
    expect(await check(keccak256(stringToHex('another message')), signature)).toBe(ERC1271_REFUSED);
    // the bare assertion over the hash: without the envelope it could be replayed on any account of this passkey
    expect(await check(hash, encodeWebAuthnSignature(await passkey.sign({ hash })))).toBe(ERC1271_REFUSED);
    // the same passkey's signature for its other account (another salt) does not count here
    const sibling = await toPasskeySmartAccount({ client: system.client, owner: passkey, factory: aa.accountFactory, salt: 1n });
    expect(sibling.address).not.toBe(account.address);
    const forSibling = passkeyAccountSignableHash(hash, sibling.address, system.client.chain.id);
    expect(await check(hash, encodeWebAuthnSignature(await passkey.sign({ hash: forSibling })))).toBe(ERC1271_REFUSED);

    // viem's verifiers over the deployed account: messages and typed data
    const message = 'sign in to the agent identity registry';
    expect(await system.client.verifyMessage({ address: account.address, message, signature: await account.signMessage({ message }) })).toBe(true);
    expect(await check(hashMessage(message), await account.signMessage({ message }))).toBe(ERC1271_MAGIC);
    const typedData = {
      domain: { name: 'Agent Registry', version: '1', chainId: system.client.chain.id, verifyingContract: system.deployment.contracts.registry },
      types: {
        Claim: [
          { name: 'agent', type: 'address' },
          { name: 'nonce', type: 'uint256' },
        ],
      },
      primaryType: 'Claim',
      message: { agent: bundler.account.address, nonce: 7n },
    } as const;
    const typedSignature = await account.signTypedData(typedData);
    expect(await system.client.verifyTypedData({ address: account.address, ...typedData, signature: typedSignature })).toBe(true);
    expect(await check(hashTypedData(typedData), typedSignature)).toBe(ERC1271_MAGIC);
    expect(await check(hashTypedData({ ...typedData, message: { ...typedData.message, nonce: 8n } }), typedSignature)).toBe(ERC1271_REFUSED);
  });

  it('signs for a counterfactual account with ERC-6492, which viem verifyHash and verifyMessage accept', async () => {
    const fresh = await toPasskeySmartAccount({ client: system.client, owner: softwarePasskey(), factory: aa.accountFactory, salt: 42n });
    expect(await fresh.isDeployed()).toBe(false);

    const hash = keccak256(stringToHex('counterfactual'));
    const signature = await fresh.sign({ hash });
    expect(isErc6492Signature(signature)).toBe(true);
    expect(await system.client.verifyHash({ address: fresh.address, hash, signature })).toBe(true);
    expect(await system.client.verifyHash({ address: fresh.address, hash: keccak256('0x01'), signature })).toBe(false);

    const message = { raw: numberToHex(12345, { size: 32 }) } as const;
    const messageSignature = await fresh.signMessage({ message });
    expect(await system.client.verifyMessage({ address: fresh.address, message, signature: messageSignature })).toBe(true);
    expect(await system.client.verifyMessage({ address: fresh.address, message: 'something else', signature: messageSignature })).toBe(false);
    // verification simulated the deployment; nothing was deployed
    expect(await fresh.isDeployed()).toBe(false);
    // the signature carries the factory call that creates the account
    const { factoryData } = await fresh.getFactoryArgs();
    expect(signature).toContain((factoryData as Hex).slice(2));
  });

  it('fails validation with its stub signature without reverting (gas estimation)', async () => {
    const op = await sponsoredUserOperation(system.client, account, [{ to: bundler.account.address }], {
      paymaster: aa.paymaster,
      signer: paymasterSigner,
    });
    op.signature = await account.getStubSignature();
    const userOpHash = getUserOperationHash({
      userOperation: op,
      chainId: system.client.chain.id,
      entryPointAddress: entryPoint07Address,
      entryPointVersion: '0.7',
    });
    const { result } = await system.client.simulateContract({
      address: account.address,
      abi: passkeyAccountAbi,
      functionName: 'validateUserOp',
      args: [toPackedUserOperation(op), userOpHash, 0n],
      account: entryPoint07Address,
    });
    expect(result).toBe(1n); // SIG_VALIDATION_FAILED
  });

  it('takes ERC-721 and ERC-1155 safe transfers', async () => {
    const supports = (id: Hex): Promise<boolean> =>
      system.client.readContract({ address: account.address, abi: passkeyAccountAbi, functionName: 'supportsInterface', args: [id] });
    expect(await supports('0x4e2312e0')).toBe(true); // IERC1155Receiver
    const { result } = await system.client.simulateContract({
      address: account.address,
      abi: passkeyAccountAbi,
      functionName: 'onERC721Received',
      args: [bundler.account.address, bundler.account.address, 1n, '0x'],
      account: bundler.account,
    });
    expect(result).toBe('0x150b7a02');
  });

  it('decodes its own calldata and reads its nonce from the EntryPoint', async () => {
    const calls = [
      { to: bundler.account.address, value: 1n, data: '0x' as Hex },
      { to: aa.paymaster, value: 0n, data: encodeFunctionData({ abi: sponsorPaymasterAbi, functionName: 'deposit' }) },
    ];
    expect(await account.decodeCalls?.(await account.encodeCalls(calls))).toEqual(calls);
    const nonce = await system.client.readContract({
      address: entryPoint07Address,
      abi: entryPoint07Abi,
      functionName: 'getNonce',
      args: [account.address, 0n],
    });
    expect(await account.getNonce()).toBe(nonce);
  });
});
