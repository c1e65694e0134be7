// The registry decodes the hex fields of userData 32 characters at a time (lib/HexParser.sol). An X action
// for an agent that was never registered parses the address and then reverts AgentNotRegistered(key), so the
// revert shows exactly what was decoded, without registering anything.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { addressAgentKey } from '../../src/core/agent-key.js';
import { newAccount, submitProof } from '../support/agents.js';
import { deployTestSystem, type TestSystem } from '../support/chain.js';
import { expectReverted } from '../support/registry.js';

/** Random upper/lower case for every letter: the decoder must accept both. */
const mixedCase = (hex: string): string => [...hex].map((c) => (Math.random() < 0.5 ? c.toUpperCase() : c.toLowerCase())).join('');

describe('hex fields of userData', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
  });

  it('decodes 40 characters (a full word and a partial one) in any case, byte for byte', async () => {
    for (let i = 0; i < 12; i++) {
      const agent = `0x${randomBytes(20).toString('hex')}` as const;
      const result = await submitProof(system, { userId: newAccount().address, userDefinedData: `X0${mixedCase(agent.slice(2))}` });
      expectReverted(result, 'AgentNotRegistered', [addressAgentKey(agent)]);
    }
  });

  it.each([
    ['NUL', '\u0000'],
    ['control 0x10 (looks like "0" once its case bit is set)', '\u0010'],
    ['"/" just below "0"', '/'],
    ['":" just above "9"', ':'],
    ['"@" just below "A"', '@'],
    ['"G" just above "F"', 'G'],
    ['"`" just below "a"', '`'],
    ['"g" just above "f"', 'g'],
    ['"P" (same low nibble as "0", letter bit set)', 'P'],
    ['"p"', 'p'],
    ['DEL', '\u007f'],
    ['a non-ASCII character (two UTF-8 bytes)', 'é'],
  ])('refuses %s at the start, inside and at the end of either word', async (_name, bad) => {
    const valid = randomBytes(20).toString('hex');
    for (const position of [0, 15, 31, 32, 39]) {
      const field = valid.slice(0, position) + bad + valid.slice(position + 1);
      const result = await submitProof(system, { userId: newAccount().address, userDefinedData: `X0${field}` });
      expect(result.status === 'reverted' ? result.error.name : 'submitted', `${JSON.stringify(bad)} at ${position}`).toBe('InvalidUserData');
    }
  });
});
