import { describe, expect, it } from 'vitest';
import { closesConversation, type InputPart, parseIntent, requestFields } from '../../src/a2a/intents.js';

const text = (t: string): InputPart => ({ kind: 'text', text: t });
const data = (d: Record<string, unknown>): InputPart => ({ kind: 'data', data: d });

const ok = (parts: InputPart[]) => {
  const parsed = parseIntent(parts);
  if (!parsed.ok) throw new Error(`expected a request, got: ${parsed.message}`);
  return parsed.request;
};

describe('parseIntent', () => {
  it('reads a data part, mainnet by default', () => {
    const r = ok([data({ intent: 'verify', agentId: 5 })]);
    expect(r).toMatchObject({ intent: 'verify', agentId: 5n, network: 'mainnet' });
  });

  it('uses testnet for network "testnet" or chainId 11142220 (number or text), mainnet for "mainnet" or 42220', () => {
    expect(ok([data({ intent: 'lookup', agentId: '3', network: 'testnet' })]).network).toBe('testnet');
    expect(ok([data({ intent: 'lookup', agentId: 3, chainId: 11142220 })]).network).toBe('testnet');
    expect(ok([data({ intent: 'lookup', agentId: 3, chainId: '11142220' })]).network).toBe('testnet');
    expect(ok([data({ intent: 'lookup', agentId: 3, chainId: 42220 })]).network).toBe('mainnet');
    expect(ok([data({ intent: 'lookup', agentId: 3, network: 'mainnet' })]).network).toBe('mainnet');
  });

  it('reads JSON written inside a text part', () => {
    const r = ok([text('please: {"intent": "freshness", "agentId": 7, "chainId": 11142220}')]);
    expect(r).toMatchObject({ intent: 'freshness', agentId: 7n, network: 'testnet' });
  });

  it('reads plain English with keywords', () => {
    expect(ok([text('verify agent 5 on testnet')])).toMatchObject({ intent: 'verify', agentId: 5n, network: 'testnet' });
    expect(ok([text('look up agent 3')])).toMatchObject({ intent: 'lookup', agentId: 3n, network: 'mainnet' });
    expect(ok([text('Is agent 42 backed by a human?')])).toMatchObject({ intent: 'verify', agentId: 42n });
    expect(ok([text('Is the proof of agent 7 still fresh?')])).toMatchObject({ intent: 'freshness', agentId: 7n });
    expect(ok([text('help')]).intent).toBe('help');
    // register needs a mode: the parser says so (the executor answers with this message)
    expect(parseIntent([text('Register a new agent on testnet')])).toMatchObject({ ok: false, intent: 'register', missing: ['mode'] });
    expect(ok([text('Register a new linked agent on testnet'), data({ mode: 'linked' })])).toMatchObject({
      intent: 'register',
      network: 'testnet',
      opening: { kind: 'register', request: { mode: 'linked', network: 'testnet' } },
    });
    expect(ok([text('deregister agent 4')])).toMatchObject({ intent: 'deregister', agentId: 4n });
  });

  it('takes the session token of a status request', () => {
    expect(ok([data({ intent: 'status', sessionToken: 'abc' })])).toMatchObject({ intent: 'status', sessionToken: 'abc' });
  });

  it('data parts win over text', () => {
    expect(ok([text('look up agent 3'), data({ intent: 'verify', agentId: 9 })])).toMatchObject({ intent: 'verify', agentId: 9n });
  });

  it('says what is missing', () => {
    const noId = parseIntent([data({ intent: 'verify' })]);
    expect(noId).toMatchObject({ ok: false, intent: 'verify', missing: ['agentId'] });
    expect(noId.ok ? '' : noId.message).toMatch(/agentId/);
    expect(parseIntent([text('verify the agent')])).toMatchObject({ ok: false, missing: ['agentId'] });
    expect(parseIntent([data({ intent: 'status' })])).toMatchObject({ ok: false, missing: ['sessionToken'] });
    expect(parseIntent([data({ intent: 'lookup', agentId: -1 })])).toMatchObject({ ok: false, missing: ['agentId'] });
    expect(parseIntent([text('good morning')])).toMatchObject({ ok: false, missing: ['intent'] });
    expect(parseIntent([])).toMatchObject({ ok: false, missing: ['intent'] });
    const unknown = parseIntent([data({ intent: 'dance' })]);
    expect(unknown.ok ? '' : unknown.message).toMatch(/Unknown intent "dance"/);
  });

  it('completes what earlier turns gathered: their intent and fields, overridden by what this turn sends', () => {
    const first = parseIntent([text('good morning')]);
    expect(first).toMatchObject({ ok: false, missing: ['intent'], gathered: { fields: {} } });
    const second = parseIntent([data({ intent: 'lookup', network: 'testnet', note: 'not a request field' })], first.ok ? undefined : first.gathered);
    expect(second).toMatchObject({
      ok: false,
      intent: 'lookup',
      missing: ['agentId'],
      gathered: { intent: 'lookup', fields: { network: 'testnet' } },
    });
    const before = second.ok ? undefined : second.gathered;
    // a bare number answers "which agent?"
    expect(ok2([text('7')], before)).toMatchObject({ intent: 'lookup', agentId: 7n, network: 'testnet' });
    // a field sent now overrides the earlier one; an intent named now replaces the earlier one
    expect(ok2([data({ agentId: 8, network: 'mainnet' })], before)).toMatchObject({ intent: 'lookup', agentId: 8n, network: 'mainnet' });
    expect(ok2([text('verify agent 9')], before)).toMatchObject({ intent: 'verify', agentId: 9n, network: 'testnet' });
    expect(parseIntent([data({ intent: 'dance' })], before)).toMatchObject({ ok: false, missing: ['intent'] });
  });

  it('reads a registration mode named in plain English, longest name first', () => {
    const mode = (t: string) =>
      (parseIntent([text(t)]) as { ok: boolean; request?: { opening?: { request: { mode: string } } } }).request?.opening?.request.mode;
    expect(mode('register a wallet-free agent')).toBe('wallet-free');
    expect(mode('register an ed25519-linked agent on testnet')).toBe('ed25519-linked');
    expect(mode('register an ed25519 agent')).toBe('ed25519');
    expect(mode('Register with Privy')).toBe('privy');
    expect(mode('register an unlinked agent')).toBeUndefined();
  });

  it('keeps only request fields, and no nulls, between turns', () => {
    expect(requestFields({ agentId: 3, network: null, key: 'value', nested: { a: 1 }, mode: 'linked' })).toEqual({ agentId: 3, mode: 'linked' });
    expect(parseIntent([data({ intent: 'lookup', agentId: null })])).toMatchObject({ ok: false, missing: ['agentId'], gathered: { fields: {} } });
  });
});

function ok2(parts: InputPart[], before: Parameters<typeof parseIntent>[1]) {
  const parsed = parseIntent(parts, before);
  if (!parsed.ok) throw new Error(`expected a request, got: ${parsed.message}`);
  return parsed.request;
}

describe('closesConversation', () => {
  it('is a message that only says the conversation is over', () => {
    for (const words of ['done', 'Complete', 'never mind', 'Nevermind.', "that's all", 'no thanks', 'No, thank you!', 'bye', ' cancel ']) {
      expect(closesConversation([text(words)]), words).toBe(true);
    }
  });

  it('is not a message that asks or answers anything, nor one with data', () => {
    for (const words of ['done: verify agent 5', 'is the registration complete?', 'help', '5', 'stop agent 5', 'TCK complete after history']) {
      expect(closesConversation([text(words)]), words).toBe(false);
    }
    expect(closesConversation([text('done'), data({ agentId: 5 })])).toBe(false);
    expect(closesConversation([])).toBe(false);
  });
});
