// The service's own demo agent on an embedded test chain: a key generated once and kept in DATA_DIR (0600, like
// the local chains' dev accounts; it is the service's key, never a user's), registered wallet-free through the
// mock identity app (src/identity-app) with a mock passport of its own, and registered again if the chain no longer knows it.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { LocalAccount } from 'viem';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import type { ChainWallet } from '../chain/clients.js';
import type { NetworkGateway } from '../chain/gateway.js';
import { addressAgentKey } from '../core/agent-key.js';
import type { NetworkName } from '../core/networks.js';
import { walletFreeRegistrationData } from '../core/registration-data.js';
import { mockDocumentFor } from '../identity-app/document.js';
import { prove } from '../identity-app/prove.js';

export interface DemoAgentSetup {
  dataDir: string;
  network: NetworkName;
  gateway: NetworkGateway;
  /** A funded account that submits the proof (the relayer's role). */
  wallet: ChainWallet;
  /** The document attester the local hub trusts. */
  attester: LocalAccount;
}

function loadKey(path: string): `0x${string}` {
  if (existsSync(path)) return (JSON.parse(readFileSync(path, 'utf8')) as { privateKey: `0x${string}` }).privateKey;
  const privateKey = generatePrivateKey();
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify({ privateKey })}\n`, { mode: 0o600 });
  return privateKey;
}

/** The demo agent of an embedded test network, registered; `registeredNow` when this call registered it. */
export async function provisionDemoAgent(setup: DemoAgentSetup): Promise<{ account: PrivateKeyAccount; registeredNow: boolean }> {
  const account = privateKeyToAccount(loadKey(join(setup.dataDir, `demo-agent-${setup.network}.json`)));
  const { gateway } = setup;
  if ((await gateway.registry.agentIdOf(addressAgentKey(account.address))) !== 0n) return { account, registeredNow: false };
  const registry = gateway.contracts.registry;
  const userDefinedData = await walletFreeRegistrationData(account, null, {
    chainId: gateway.chainId,
    registry,
    nonce: await gateway.registry.registrationNonce(account.address),
    configIndex: 0,
  });
  const proof = await prove({
    client: gateway.client,
    wallet: setup.wallet,
    attester: setup.attester,
    request: {
      registry,
      chainId: gateway.chainId,
      scopeSeed: 'self-agent-id',
      userId: account.address,
      userDefinedData,
      disclosures: { minimumAge: 0, ofac: false },
    },
    document: mockDocumentFor(`demo-agent:${account.address}`),
  });
  if (proof.status !== 'submitted') throw new Error(`the demo agent could not be registered on ${setup.network}: ${proof.reason}`);
  // reported as registered (and kept in DATA_DIR) only once a restart of the chain cannot take it back
  await gateway.makeDurable(proof.blockNumber);
  return { account, registeredNow: true };
}
