// The card signer over the service's real signing keys (kept in an in-memory store, as instances sharing a store keep
// them): a card gets one signature by the current key that the A2A SDK's verifier accepts; what is signed once per
// key is made again after a rotation; and a change of the key, made here or by another instance, is announced once.
import { type AgentCard, verifyAgentCardSignature } from '@a2a-js/sdk';
import { compactVerify, createLocalJWKSet, decodeProtectedHeader } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CardSigner } from '../../src/services/card-signer.js';
import { ServiceSigningKeys } from '../../src/services/signing-keys.js';
import { MemoryStore } from '../../src/store/memory-store.js';

const JWKS_URL = 'https://registry.example/.well-known/jwks.json';
const signers: CardSigner[] = [];

function setUp(watchMs?: number) {
  const store = new MemoryStore();
  const keys = new ServiceSigningKeys({ store, source: { kind: 'store' }, refreshMs: 0 });
  const signer = new CardSigner({ keys, jwksUrl: JWKS_URL, ...(watchMs !== undefined ? { watchMs } : {}) });
  signers.push(signer);
  return { store, keys, signer };
}

afterEach(() => {
  for (const signer of signers.splice(0)) signer.stop();
});

const card = {
  name: 'Agent #7',
  description: 'A test agent',
  version: '1.0.0',
  capabilities: { extensions: [{ uri: 'https://registry.example/extensions/proof-of-human/v1', params: { isVerified: true } }] },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [],
  signatures: [{ protected: 'e30', signature: 'stale' }],
};

describe('CardSigner', () => {
  it('signs a card once with the current key (kid, alg, typ JOSE, jku), replacing any signature it had', async () => {
    const { keys, signer } = setUp();
    const { value, kid } = await signer.signCard(card);
    const current = await keys.current();
    expect(kid).toBe(current.kid);
    expect(signer.kid).toBe(current.kid);
    expect(value.signatures).toHaveLength(1);
    expect(Object.keys(value.signatures[0] ?? {})).toEqual(['protected', 'signature']);
    expect(decodeProtectedHeader(value.signatures[0] as { protected: string })).toEqual({ alg: 'EdDSA', kid, typ: 'JOSE', jku: JWKS_URL });
    const verify = verifyAgentCardSignature(async (wanted) => {
      expect(wanted).toBe(kid);
      return current.publicJwk;
    });
    await expect(verify(value as unknown as AgentCard)).resolves.toBeUndefined();
    // the card it was given is left as it was
    expect(card.signatures).toEqual([{ protected: 'e30', signature: 'stale' }]);
  });

  it('signs a document as a compact JWS that carries it', async () => {
    const { keys, signer } = setUp();
    const { value } = await signer.signCompact('{"a":1}', 'application/json');
    const { payload, protectedHeader } = await compactVerify(value, createLocalJWKSet(await keys.jwks()));
    expect(new TextDecoder().decode(payload)).toBe('{"a":1}');
    expect(protectedHeader).toEqual({ alg: 'EdDSA', kid: (await keys.current()).kid, jku: JWKS_URL, cty: 'application/json' });
  });

  it('what is signed once per key is made again after a rotation, and the change is announced once', async () => {
    const { keys, signer } = setUp();
    const changes = vi.fn();
    signer.onKeyChange(changes);
    let made = 0;
    const signed = signer.perKey(() => {
      made++;
      return signer.signCompact(`document ${made}`, 'text/plain');
    });
    const first = await signed();
    expect(await signed()).toBe(first);
    expect(made).toBe(1);
    // the first key seen replaces nothing
    expect(changes).not.toHaveBeenCalled();

    const rotated = await keys.rotate();
    const second = await signed();
    expect(made).toBe(2);
    expect(decodeProtectedHeader(second).kid).toBe(rotated.kid);
    expect(signer.kid).toBe(rotated.kid);
    expect(changes).toHaveBeenCalledTimes(1);
    expect(await signed()).toBe(second);
  });

  it('a rotation by another instance sharing the store is announced without anything being signed', async () => {
    const { store, signer } = setUp(10);
    const changes = vi.fn();
    signer.onKeyChange(changes);
    await signer.signCard(card);
    const other = new ServiceSigningKeys({ store, source: { kind: 'store' }, refreshMs: 0 });
    const rotated = await other.rotate();
    await vi.waitFor(() => expect(changes).toHaveBeenCalledTimes(1), { timeout: 5_000 });
    expect(signer.kid).toBe(rotated.kid);
  });
});
