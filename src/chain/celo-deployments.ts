import type { Address } from 'viem';
import type { NetworkName } from '../core/networks.js';

/** Addresses of the registry deployed on Celo: the defaults when a network is pointed at a real RPC. */
export interface ContractAddresses {
  registry: Address;
  proofProvider: Address;
  hub: Address;
  demoVerifier: Address;
  /** The Ed25519 meta-transaction demo (AgentDemoVerifierEd25519); null where none is deployed (Celo). */
  demoVerifierEd25519: Address | null;
  multicall: Address;
}

/** Canonical Multicall3 address, deployed on both Celo networks. */
const MULTICALL3: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';

export const CELO_DEPLOYMENTS: Record<NetworkName, ContractAddresses & { registryDeployBlock: bigint }> = {
  mainnet: {
    registry: '0xaC3DF9ABf80d0F5c020C06B04Cced27763355944',
    proofProvider: '0x4b036aFD959B457A208F676cf44Ea3ef73Ea3E3d',
    hub: '0xe57F4773bd9c9d8b6Cd70431117d353298B9f5BF',
    demoVerifier: '0xD8ec054FD869A762bC977AC328385142303c7def',
    // the Ed25519 demo of the Celo deployment was never deployed (its network config holds an empty "TODO")
    demoVerifierEd25519: null,
    multicall: MULTICALL3,
    registryDeployBlock: 59_965_405n,
  },
  testnet: {
    registry: '0x043DaCac8b0771DD5b444bCC88f2f8BBDBEdd379',
    proofProvider: '0x5E61c3051Bf4115F90AacEAE6212bc419f8aBB6c',
    hub: '0x16ECBA51e18a4a7e61fdC417f0d47AFEeDfbed74',
    demoVerifier: '0xc31BAe8f2d7FCd19f737876892f05d9bDB294241',
    demoVerifierEd25519: null,
    multicall: MULTICALL3,
    registryDeployBlock: 18_577_934n,
  },
};
