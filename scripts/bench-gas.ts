// npm run bench:gas: gas of the registry's main paths on a fresh local chain, as one JSON line. Each registration
// figure is the whole verifySelfProof transaction the relayer pays for: registry -> hub -> registry callback.
// ed25519Verification is one Ed25519Verifier.verify of a 32-byte message (the registration challenge), as the
// execution gas of a transaction calling it: its gasUsed minus the 21000 base and the calldata's cost.
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex, encodeFunctionData, hexToBytes } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { RegistryGateway } from '../src/chain/registry-gateway.js';
import { agentRegistryAbi, ed25519VerifierAbi } from '../src/contracts/artifacts/index.js';
import { ed25519ChallengeHash } from '../src/core/challenge.js';
import { ed25519ExtKpub } from '../src/core/ed25519-key.js';
import { linkedRegistrationData, walletFreeRegistrationData } from '../src/core/registration-data.js';
import { advancedDeregisterUserData, ed25519RegisterUserData } from '../src/core/user-data.js';
import { type ProofRequest, prove } from '../src/identity-app/index.js';
import { startLocalSystem } from './local-system.js';

const system = await startLocalSystem();
const { chain } = system;
try {
  const { client, attester } = system;
  const relayer = await system.newWallet();
  const { contracts, chainId } = system.deployment;
  const registry = new RegistryGateway(client, contracts.registry);

  const gasOf = async (userId: `0x${string}`, userDefinedData: string): Promise<number> => {
    const request: ProofRequest = {
      registry: contracts.registry,
      chainId,
      scopeSeed: 'self-agent-id',
      userId,
      userDefinedData,
      disclosures: { minimumAge: 0, ofac: false },
    };
    const result = await prove({ client, wallet: relayer, attester, request });
    if (result.status !== 'submitted') throw new Error(`${userDefinedData.slice(0, 1)} reverted: ${result.reason}`);
    const receipt = await client.getTransactionReceipt({ hash: result.txHash });
    return Number(receipt.gasUsed);
  };

  const human = privateKeyToAccount(generatePrivateKey()).address;
  const linkedAgent = privateKeyToAccount(generatePrivateKey());
  const context = { chainId, registry: contracts.registry, configIndex: 0 } as const;
  const kRegistration = await gasOf(
    human,
    await linkedRegistrationData(linkedAgent, human, { ...context, nonce: await registry.registrationNonce(linkedAgent.address) }),
  );

  const freeAgent = privateKeyToAccount(generatePrivateKey());
  const wRegistration = await gasOf(
    freeAgent.address,
    await walletFreeRegistrationData(freeAgent, null, { ...context, nonce: await registry.registrationNonce(freeAgent.address) }),
  );

  const deregistration = await gasOf(human, advancedDeregisterUserData({ configIndex: 0, agent: linkedAgent.address }));

  // E: an Ed25519 agent linked to a human, with the human as guardian
  const secret = ed25519.utils.randomSecretKey();
  const pubkey = bytesToHex(ed25519.getPublicKey(secret));
  const ed25519Human = privateKeyToAccount(generatePrivateKey()).address;
  const nonce = await client.readContract({ address: contracts.registry, abi: agentRegistryAbi, functionName: 'ed25519Nonce', args: [pubkey] });
  const challenge = ed25519ChallengeHash({ human: ed25519Human, chainId, registry: contracts.registry, nonce });
  const eRegistration = await gasOf(
    ed25519Human,
    ed25519RegisterUserData({
      configIndex: 0,
      pubkey,
      signature: ed25519.sign(hexToBytes(challenge), secret),
      extKpub: ed25519ExtKpub(pubkey),
      guardian: ed25519Human,
    }),
  );

  const verifier = await client.readContract({ address: contracts.registry, abi: agentRegistryAbi, functionName: 'ed25519Verifier' });
  const message = hexToBytes(challenge);
  const signature = ed25519.sign(message, secret);
  const data = encodeFunctionData({
    abi: ed25519VerifierAbi,
    functionName: 'verify',
    args: [pubkey, bytesToHex(signature.slice(0, 32)), bytesToHex(signature.slice(32)), bytesToHex(message)],
  });
  const verified = await client.call({ to: verifier, data });
  if (verified.data !== `0x${'0'.repeat(63)}1`) throw new Error('Ed25519Verifier.verify did not accept the signature');
  const receipt = await client.waitForTransactionReceipt({ hash: await relayer.sendTransaction({ to: verifier, data }) });
  const calldataGas = hexToBytes(data).reduce((sum, byte) => sum + (byte === 0 ? 4 : 16), 0);
  const ed25519Verification = Number(receipt.gasUsed) - 21_000 - calldataGas;

  console.log(JSON.stringify({ kRegistration, wRegistration, deregistration, eRegistration, ed25519Verification }));
} finally {
  await chain.stop();
}
