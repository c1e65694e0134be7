// npm run bench:gas: gas of the registry's main paths on a fresh local chain, as one JSON line. Each figure
// is the whole verifySelfProof transaction the relayer pays for: registry -> hub -> registry callback.
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createChainClient, createChainWallet } from '../src/chain/clients.js';
import { deployContracts } from '../src/chain/deploy.js';
import { startDevChain } from '../src/chain/devchain.js';
import { fund } from '../src/chain/embedded.js';
import { RegistryGateway } from '../src/chain/registry-gateway.js';
import { linkedRegistrationData, walletFreeRegistrationData } from '../src/core/registration-data.js';
import { advancedDeregisterUserData } from '../src/core/user-data.js';
import { prove, type ProofRequest } from '../src/identity-app/index.js';

const network = 'testnet';
const chain = await startDevChain({ chainId: 11142220 });
try {
  const options = { rpcUrl: chain.rpcUrl, pollingIntervalMs: 20 };
  const client = createChainClient(network, options);
  const newWallet = async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    await fund(client, account.address);
    return createChainWallet(network, account, options);
  };
  const operator = await newWallet();
  const relayer = await newWallet();
  const attester = privateKeyToAccount(generatePrivateKey());
  const { contracts, chainId } = await deployContracts({ client, wallet: operator, attester: attester.address });
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

  console.log(JSON.stringify({ kRegistration, wRegistration, deregistration }));
} finally {
  await chain.stop();
}
