// Celo and Celo Sepolia as viem chains. Defined here, as viem defines them (a test compares the two), rather than
// imported from 'viem/chains': that entry point loads every chain viem knows, about 740 modules, which cost each
// start some 180 ms for the two we use. Celo's own chain config (formatters, serializers, fees) still comes from viem.
import { defineChain } from 'viem';
import { chainConfig } from 'viem/celo';

const MULTICALL3 = '0xcA11bde05977b3631167028862bE2a173976CA11';
/** Sepolia, where Celo Sepolia settles (the OP-stack contracts below live there). */
const SEPOLIA = 11_155_111;

export const celo = defineChain({
  ...chainConfig,
  id: 42_220,
  name: 'Celo',
  nativeCurrency: { decimals: 18, name: 'CELO', symbol: 'CELO' },
  rpcUrls: { default: { http: ['https://forno.celo.org'] } },
  blockExplorers: { default: { name: 'Celo Explorer', url: 'https://celoscan.io', apiUrl: 'https://api.celoscan.io/api' } },
  contracts: { multicall3: { address: MULTICALL3, blockCreated: 13_112_599 } },
  testnet: false,
});

export const celoSepolia = defineChain({
  ...chainConfig,
  id: 11_142_220,
  name: 'Celo Sepolia Testnet',
  nativeCurrency: { decimals: 18, name: 'CELO', symbol: 'S-CELO' },
  rpcUrls: { default: { http: ['https://forno.celo-sepolia.celo-testnet.org'] } },
  blockExplorers: {
    default: { name: 'Celo Sepolia Explorer', url: 'https://celo-sepolia.blockscout.com/', apiUrl: 'https://celo-sepolia.blockscout.com/api' },
  },
  contracts: {
    ...chainConfig.contracts,
    multicall3: { address: MULTICALL3, blockCreated: 1 },
    portal: { [SEPOLIA]: { address: '0x44ae3d41a335a7d05eb533029917aad35662dcc2', blockCreated: 8_825_790 } },
    disputeGameFactory: { [SEPOLIA]: { address: '0x57c45d82d1a995f1e135b8d7edc0a6bb5211cfaa', blockCreated: 8_825_790 } },
    l1StandardBridge: { [SEPOLIA]: { address: '0xec18a3c30131a0db4246e785355fbc16e2eaf408', blockCreated: 8_825_790 } },
  },
  testnet: true,
});
