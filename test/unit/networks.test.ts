import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/core/errors.js';
import { chainIdOf, resolveNetwork } from '../../src/core/networks.js';

describe('resolveNetwork', () => {
  it('maps names and chain ids, as numbers or text, both ways', () => {
    expect(resolveNetwork('mainnet')).toBe('mainnet');
    expect(resolveNetwork(42220)).toBe('mainnet');
    expect(resolveNetwork('42220')).toBe('mainnet');
    expect(resolveNetwork('testnet')).toBe('testnet');
    expect(resolveNetwork(11142220)).toBe('testnet');
    expect(resolveNetwork('11142220')).toBe('testnet');
    expect(chainIdOf('mainnet')).toBe(42220);
    expect(chainIdOf('testnet')).toBe(11142220);
  });

  it.each([44787, '44787', 'MAINNET', 'sepolia', '', 1, '42220.0', ' 42220'])('refuses %j with a 400', (value) => {
    expect(() => resolveNetwork(value)).toThrow(ServiceError);
    try {
      resolveNetwork(value);
    } catch (error) {
      expect((error as ServiceError).status).toBe(400);
      expect((error as ServiceError).message).toMatch(/mainnet.*42220.*testnet.*11142220/);
    }
  });
});
