import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/core/errors.js';
import { chainIdOf, requestedNetwork, resolveNetwork } from '../../src/core/networks.js';

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

describe('requestedNetwork (a request naming its network by name and/or chain id)', () => {
  it('reads names and aliases in any case, and chain ids as numbers or decimal text', () => {
    expect(requestedNetwork('testnet', undefined)).toBe('testnet');
    expect(requestedNetwork(' Testnet ', undefined)).toBe('testnet');
    expect(requestedNetwork('MAINNET', undefined)).toBe('mainnet');
    expect(requestedNetwork('celo-sepolia', undefined)).toBe('testnet');
    expect(requestedNetwork('celo-mainnet', undefined)).toBe('mainnet');
    expect(requestedNetwork(undefined, 11142220)).toBe('testnet');
    expect(requestedNetwork(undefined, ' 42220 ')).toBe('mainnet');
    expect(requestedNetwork('testnet', '11142220')).toBe('testnet');
  });

  it('names no network when both are absent or null', () => {
    expect(requestedNetwork(undefined, undefined)).toBeUndefined();
    expect(requestedNetwork(null, null)).toBeUndefined();
  });

  it.each([
    ['chainId 1 (Ethereum)', undefined, 1, /^Unsupported chainId 1: use network "mainnet" \(chain id 42220\) or "testnet" \(chain id 11142220\)$/],
    ['the retired testnet 44787', undefined, 44787, /Unsupported chainId 44787/],
    ['a hex chain id', undefined, '0xa4ec', /Unsupported chainId "0xa4ec"/],
    ['a fraction', undefined, 42220.5, /Unsupported chainId 42220.5/],
    ['chainId true', undefined, true, /Unsupported chainId true/],
    ['an unknown name', 'goerli', undefined, /^Unsupported network "goerli": use network "mainnet"/],
    ['an empty name', '', undefined, /Unsupported network ""/],
    ['a name that is a number', 42220, undefined, /Unsupported network 42220/],
    ['a name and a chain id that disagree', 'testnet', 42220, /network "testnet" and chainId 42220 name different networks/],
    ['a good name beside a bad chain id', 'mainnet', 1, /Unsupported chainId 1/],
  ])('refuses %s with a 400, never taking mainnet', (_name, network, chainId, message) => {
    try {
      requestedNetwork(network, chainId);
      expect.unreachable('refused');
    } catch (error) {
      expect(error).toBeInstanceOf(ServiceError);
      expect((error as ServiceError).status).toBe(400);
      expect((error as ServiceError).message).toMatch(message);
    }
  });
});
