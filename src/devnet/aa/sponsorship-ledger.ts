// The local paymaster's per-sender approvals on the store port, so its sponsorship limit survives a restart and
// holds across instances that share a store. One key per chain and sender, updated atomically; the entry expires
// with its newest approval's window.
import type { Address } from 'viem';
import type { KeyValueStore } from '../../store/key-value-store.js';
import type { SponsorshipLedger } from './paymaster-rpc.js';

export function storeSponsorshipLedger(store: KeyValueStore, chainId: number, windowMs: number): SponsorshipLedger {
  const key = (sender: Address) => `aa:sponsored:${chainId}:${sender.toLowerCase()}`;
  return {
    async approvals(sender, since) {
      return ((await store.get<number[]>(key(sender))) ?? []).filter((at) => at >= since);
    },
    async record(sender, at) {
      await store.update<number[]>(key(sender), (current) => [...(current ?? []).filter((time) => time > at - windowMs), at], windowMs);
    },
  };
}
