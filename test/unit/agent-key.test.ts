import { describe, expect, it } from 'vitest';
import { addressAgentKey, agentAddressOfKey, agentKeyType } from '../../src/core/agent-key.js';

describe('agent keys', () => {
  it('pads an ECDSA agent address to 32 bytes and reads it back checksummed', () => {
    const key = addressAgentKey('0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266');
    expect(key).toBe('0x000000000000000000000000f39fd6e51aad88f6f4ce6ab8827279cfffb92266');
    expect(agentKeyType(key)).toBe('secp256k1');
    expect(agentAddressOfKey(key)).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
  });

  it('derives the owner address of a raw Ed25519 key (RFC 8032 test 2 key, onchain-facts 1.8)', () => {
    const key = '0x3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c';
    expect(agentKeyType(key)).toBe('ed25519');
    expect(agentAddressOfKey(key).toLowerCase()).toBe('0x4ff1ba61d0a4d021d1e3dd7d77f3311e91e09d2c');
  });
});
