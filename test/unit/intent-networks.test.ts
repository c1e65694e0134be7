// The network an A2A request names, in a data part, JSON in text or words: only the interface's two networks, by
// name, alias or chain id; anything else is refused with a message naming the field, never read as mainnet; and a
// later turn that names a network replaces the one an earlier turn named.
import { describe, expect, it } from 'vitest';
import { type InputPart, parseIntent } from '../../src/a2a/intents.js';

const text = (t: string): InputPart => ({ kind: 'text', text: t });
const data = (d: Record<string, unknown>): InputPart => ({ kind: 'data', data: d });

describe('the network of an intent', () => {
  it.each([
    [{ chainId: 42220 }, 'mainnet'],
    [{ chainId: '11142220' }, 'testnet'],
    [{ network: 'Testnet' }, 'testnet'],
    [{ network: 'celo-sepolia' }, 'testnet'],
    [{ network: 'celo-mainnet', chainId: 42220 }, 'mainnet'],
    [{}, 'mainnet'],
  ])('%j is %s', (fields, network) => {
    const parsed = parseIntent([data({ intent: 'lookup', agentId: 1, ...fields })]);
    expect(parsed).toMatchObject({ ok: true, request: { network } });
  });

  it.each([
    ['chainId 1', { chainId: 1 }, /^Unsupported chainId 1: use network "mainnet" \(chain id 42220\) or "testnet" \(chain id 11142220\)$/],
    ['chainId "1"', { chainId: '1' }, /^Unsupported chainId "1"/],
    ['the retired testnet 44787', { chainId: 44787 }, /Unsupported chainId 44787/],
    ['an unknown network', { network: 'ethereum' }, /^Unsupported network "ethereum"/],
    ['a name and chain id that disagree', { network: 'testnet', chainId: 42220 }, /name different networks/],
  ])('%s in a data part is refused, not read as mainnet', (_name, fields, message) => {
    const parsed = parseIntent([data({ intent: 'verify', agentId: 5, ...fields })]);
    expect(parsed).toMatchObject({ ok: false, intent: 'verify', missing: [] });
    if (parsed.ok) return;
    expect(parsed.message).toMatch(message);
    // the refused network is not carried to the next turn; the rest is
    expect(parsed.gathered).toEqual({ intent: 'verify', fields: { agentId: 5 } });
  });

  it('is refused before a missing field is asked for', () => {
    const parsed = parseIntent([data({ intent: 'lookup', chainId: 1 })]);
    expect(parsed).toMatchObject({ ok: false, missing: [], message: expect.stringMatching(/Unsupported chainId 1/) });
  });

  it('in JSON inside a text part, and in words ("chain 1")', () => {
    expect(parseIntent([text('{"intent": "freshness", "agentId": 7, "chainId": 137}')])).toMatchObject({
      ok: false,
      message: expect.stringMatching(/Unsupported chainId 137/),
    });
    expect(parseIntent([text('verify agent 5 on chain 1')])).toMatchObject({ ok: false, message: expect.stringMatching(/Unsupported chainId "1"/) });
    expect(parseIntent([text('verify agent 5 on chain 42220')])).toMatchObject({ ok: true, request: { network: 'mainnet' } });
  });

  it('named in a later turn replaces the one named before, whichever field named it', () => {
    const before = { intent: 'lookup' as const, fields: { chainId: 11142220 } };
    expect(parseIntent([data({ agentId: 3, network: 'mainnet' })], before)).toMatchObject({ ok: true, request: { network: 'mainnet' } });
    expect(parseIntent([data({ agentId: 3 })], before)).toMatchObject({ ok: true, request: { network: 'testnet' } });
    // after a refusal, the next turn's network is taken
    const refused = parseIntent([data({ intent: 'lookup', agentId: 3, chainId: 1 })]);
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(parseIntent([text('testnet')], refused.gathered)).toMatchObject({
      ok: true,
      request: { intent: 'lookup', agentId: 3n, network: 'testnet' },
    });
  });
});
