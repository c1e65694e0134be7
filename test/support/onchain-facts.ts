// Values copied verbatim from onchain-facts, for the tests that check our code against the document.
import type { Hex } from 'viem';

/** Config ids as onchain-facts 1.6 prints them (computed there from the deployed registry's configs), index 0..5. */
export const DOCUMENTED_CONFIG_IDS: readonly Hex[] = [
  '0x7b6436b0c98f62380866d9432c2af0ee08ce16a171bda6951aecd95ee1307d61',
  '0xc52f992ebee4435b00b65d2c74b12435e96359d1ccf408041528414e6ea687bc',
  '0xd38655ad3441438e768552b40f8e068ff26a04343093483b3872a3bacfc50173',
  '0x76dde44ad08950385c0a76f3f372f863fc83e28a1a0e0ac47ecfeee6cbaf50a7',
  '0x32332b93ed35ffa75a313b4b2f3e096490739747c872307590d30cf7e936483a',
  '0x6ff4d8ce3da79957bae4f09de498214b7e6125c1983112a4be856a6d78e3f272',
];
