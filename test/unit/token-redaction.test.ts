import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { REDACTED_TOKEN, redactTokens } from '../../src/core/token-redaction.js';
import { SessionTokens } from '../../src/sessions/session-token.js';

describe('redactTokens', () => {
  it("takes out the service's own session tokens (JWE, dir + A256GCM: an empty second segment) wherever they sit in text", async () => {
    const tokens = new SessionTokens(randomBytes(32));
    const token = await tokens.issue({
      sessionId: 's1',
      type: 'register',
      scope: 'session',
      expiresAt: Date.now() + 60_000,
      secrets: { agentPrivateKey: `0x${'1'.repeat(64)}` },
    });
    expect(token.split('.')).toHaveLength(5);
    for (const text of [token, `status token ${token}`, `status token=${token}.`, `{"sessionToken":"${token}"}`, `(${token}), and again ${token}`]) {
      const redacted = redactTokens(text);
      expect(redacted).not.toContain(token.split('.')[3]);
      expect(redacted).toContain(REDACTED_TOKEN);
    }
    expect(redactTokens(`status token ${token}.`)).toBe(`status token ${REDACTED_TOKEN}.`);
  });

  it('takes out JSON-headed compact tokens: a JWS, and the proxy tokens of two segments', () => {
    const jws = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhZ2VudCJ9.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg';
    const proxy = 'eyJleHAiOjE3MDAwMDAwMDB9.0123456789abcdefABCDEF_-0123456789abcdefABC';
    expect(redactTokens(`signed ${jws} here`)).toBe(`signed ${REDACTED_TOKEN} here`);
    expect(redactTokens(`x-aa-proxy-token: ${proxy}`)).toBe(`x-aa-proxy-token: ${REDACTED_TOKEN}`);
    // a detached-payload JWS (empty middle segment)
    expect(redactTokens('eyJhbGciOiJFZERTQSJ9..c2ln')).toBe(REDACTED_TOKEN);
  });

  it('leaves ordinary text alone: host names, versions, numbers, sentences', () => {
    for (const text of [
      'verify agent 5 on testnet',
      'see api.example.com or v1.2.3',
      'lookup agent 12. then verify agent 13.',
      'celo-sepolia.celo-testnet.org',
      'a.b',
      '',
    ]) {
      expect(redactTokens(text)).toBe(text);
    }
  });
});
