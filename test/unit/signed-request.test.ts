// Signed agent requests: the shared vectors reproduce byte for byte (canonical URL, body hash, message,
// signature, signer), Ed25519 signs and verifies over the same message, and the verifier's pure checks refuse
// what they must (missing headers, timestamps that are not plain integers or out of the window, tampering, every
// non-canonical encoding of a signature); the replay key names the signer and the message, not the signature.
import { readFileSync } from 'node:fs';
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex, type Hex, keccak256, recoverMessageAddress, toHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { nonCanonicalEcdsa } from '../../src/core/ecdsa-signature-form.js';
import { recoverPersonalSigner } from '../../src/core/ecrecover.js';
import { ed25519AgentAddress } from '../../src/core/ed25519-key.js';
import {
  AGENT_HEADERS,
  bodyHash,
  canonicalUrl,
  type HeaderBag,
  recoverRequestSigner,
  requestMessage,
  signedHeaders,
  signedMessageKey,
} from '../../src/core/signed-request.js';
import { hasSharedFile, sharedPath, unlessShared } from '../support/shared.js';
import { ed25519PlusL, MALLEATED_FORMS, malleate, resign, withSignature } from '../support/signature-forms.js';

const VECTORS = 'data/vectors/request-signing-vectors.json';

interface Vector {
  timestamp: string;
  method: string;
  url: string;
  body: string | null;
  body_hash: Hex;
  message: Hex;
  signature: Hex;
  recovered_address: string;
  agent_key: Hex;
}

describe.skipIf(!hasSharedFile(VECTORS))(unlessShared(VECTORS, 'request-signing vectors'), () => {
  const file = hasSharedFile(VECTORS)
    ? (JSON.parse(readFileSync(sharedPath(VECTORS), 'utf8')) as { private_key: Hex; vectors: Vector[] })
    : undefined;

  it('reproduces every body hash, message and signature, and recovers the signer', async () => {
    const account = privateKeyToAccount(file!.private_key);
    expect(file!.vectors.length).toBeGreaterThan(0);
    for (const v of file!.vectors) {
      const content = { timestamp: v.timestamp, method: v.method, url: v.url, body: v.body };
      expect(bodyHash(v.body), v.url).toBe(v.body_hash);
      expect(requestMessage(content), `${v.method} ${v.url}`).toBe(v.message);
      const headers = await signedHeaders({ type: 'secp256k1', account }, content);
      expect(headers[AGENT_HEADERS.signature]).toBe(v.signature);
      expect(nonCanonicalEcdsa(v.signature), 'the vectors are in the one accepted form: low s, v 27/28').toBeUndefined();
      const check = await recoverRequestSigner(headers, content, Number(v.timestamp));
      expect(check).toMatchObject({
        ok: true,
        message: v.message,
        signer: { keyType: 'secp256k1', agentAddress: v.recovered_address, agentKey: v.agent_key },
      });
    }
  });
});

describe('canonicalUrl', () => {
  it('keeps the path and query of a full URL, not its origin or fragment', () => {
    expect(canonicalUrl('https://api.example.com/search?q=test&page=2#top')).toBe('/search?q=test&page=2');
    expect(canonicalUrl('http://api.example.com')).toBe('/');
    expect(canonicalUrl('/api/demo/verify?network=testnet')).toBe('/api/demo/verify?network=testnet');
    expect(canonicalUrl('?a=1')).toBe('/?a=1');
    expect(canonicalUrl('api/demo')).toBe('/api/demo');
    expect(canonicalUrl('')).toBe('');
  });

  it('signs a full URL and its path alike', () => {
    const base = { timestamp: '1', method: 'post', body: '{}' };
    expect(requestMessage({ ...base, url: 'https://svc.example/api/demo/verify?x=1' })).toBe(
      requestMessage({ ...base, url: '/api/demo/verify?x=1' }),
    );
  });
});

describe('recoverRequestSigner', () => {
  const account = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
  const seed = ed25519.utils.randomSecretKey();
  const request = { method: 'POST', url: '/api/demo/verify', body: '{"hello":"agents"}' };
  const now = 1_800_000_000_000;
  const sign = (signer: Parameters<typeof signedHeaders>[0], timestamp = String(now)) => signedHeaders(signer, { ...request, timestamp });

  it('an Ed25519 agent signs the same message and is named by its raw key and derived address', async () => {
    const headers = await sign({ type: 'ed25519', seed });
    const key = bytesToHex(ed25519.getPublicKey(seed));
    expect(headers[AGENT_HEADERS.keyType]).toBe('ed25519');
    expect(headers[AGENT_HEADERS.key]).toBe(key);
    expect(await recoverRequestSigner(headers, request, now)).toMatchObject({
      ok: true,
      signer: { keyType: 'ed25519', agentKey: key, agentAddress: ed25519AgentAddress(key) },
    });
  });

  it('refuses missing headers, timestamps that are not plain integers, and timestamps out of the window', async () => {
    const headers = await sign({ type: 'secp256k1', account });
    const without = (name: string): HeaderBag => Object.fromEntries(Object.entries(headers).filter(([key]) => key !== name));
    expect(await recoverRequestSigner(without(AGENT_HEADERS.signature), request, now)).toEqual({
      ok: false,
      error: 'Missing agent authentication headers',
    });
    expect(await recoverRequestSigner(without(AGENT_HEADERS.timestamp), request, now)).toEqual({
      ok: false,
      error: 'Missing agent authentication headers',
    });
    for (const timestamp of [new Date(now).toISOString(), `${now}.5`, '-1', ' 1', '']) {
      expect(await recoverRequestSigner({ ...headers, [AGENT_HEADERS.timestamp]: timestamp }, request, now), timestamp).toMatchObject({
        ok: false,
        error: expect.stringMatching(/^Timestamp/),
      });
    }
    expect((await recoverRequestSigner(await sign({ type: 'secp256k1', account }, String(now - 300_001)), request, now)).ok).toBe(false);
    expect((await recoverRequestSigner(await sign({ type: 'secp256k1', account }, String(now + 300_001)), request, now)).ok).toBe(false);
    expect((await recoverRequestSigner(await sign({ type: 'secp256k1', account }, String(now - 300_000)), request, now)).ok).toBe(true);
  });

  it('a changed body, path or method names another signer (ECDSA) or none (Ed25519)', async () => {
    const ecdsa = await sign({ type: 'secp256k1', account });
    const ed = await sign({ type: 'ed25519', seed });
    for (const changed of [
      { ...request, body: '{"hello":"humans"}' },
      { ...request, url: '/api/demo/census' },
      { ...request, method: 'GET' },
    ]) {
      // without the (informational) address header, another signer; with it, the mismatch named
      const recovered = await recoverRequestSigner({ ...ecdsa, [AGENT_HEADERS.address]: undefined }, changed, now);
      expect(recovered.ok && recovered.signer.agentAddress).not.toBe(account.address);
      const named = await recoverRequestSigner(ecdsa, changed, now);
      expect(named.ok).toBe(false);
      expect(!named.ok && named.error).toMatch(
        new RegExp(`^The signature is not ${account.address}'s signature of this request: it does not sign this method`),
      );
      const ed25519 = await recoverRequestSigner(ed, changed, now);
      expect(!ed25519.ok && ed25519.error).toMatch(/^Invalid Ed25519 signature: it does not sign this method, path and query, body and timestamp/);
    }
    expect(await recoverRequestSigner({ ...ed, [AGENT_HEADERS.key]: undefined }, request, now)).toEqual({
      ok: false,
      error: 'Missing agent key for Ed25519 verification',
    });
    expect(await recoverRequestSigner({ ...ecdsa, [AGENT_HEADERS.signature]: '0x1234' }, request, now)).toEqual({
      ok: false,
      error: 'Invalid signature',
    });
  });
});

describe('recoverPersonalSigner (libsecp256k1)', () => {
  it('names the same signer as viem, and no one for malformed signatures', async () => {
    for (let i = 0; i < 20; i++) {
      const account = privateKeyToAccount(generatePrivateKey());
      const message = keccak256(toHex(`message ${i}`));
      const signature = await account.signMessage({ message: { raw: message } });
      expect(recoverPersonalSigner(message, signature)).toBe(account.address);
      expect(await recoverMessageAddress({ message: { raw: message }, signature })).toBe(account.address);
    }
    const message = keccak256('0x01');
    expect(recoverPersonalSigner(message, `0x${'00'.repeat(65)}`)).toBeUndefined();
    expect(recoverPersonalSigner(message, `0x${'11'.repeat(64)}05`)).toBeUndefined();
    expect(recoverPersonalSigner(message, '0x1234')).toBeUndefined();
  });
});

describe('canonical signatures', () => {
  const key = generatePrivateKey();
  const account = privateKeyToAccount(key);
  const request = { method: 'POST', url: '/api/demo/verify', body: '{}' };
  const now = 1_800_000_000_000;

  it('every malleated ECDSA form recovers the same signer, and each is refused with what to send instead', async () => {
    for (let i = 0; i < 8; i++) {
      const headers = await signedHeaders({ type: 'secp256k1', account }, { ...request, timestamp: String(now - i) });
      const message = requestMessage({ ...request, timestamp: String(now - i) });
      for (const form of MALLEATED_FORMS) {
        const forged = malleate(headers[AGENT_HEADERS.signature] as Hex, form);
        // the attack is real: recovery alone names the agent for this text
        expect(recoverPersonalSigner(message, forged), form).toBe(account.address);
        const expected = {
          'v as 0/1': /^Non-canonical signature: v is [01] \(send 27 or 28: the recovery id \+ 27\); personal_sign/,
          'high s (v flipped)': /^Non-canonical signature: s is above n\/2 \(send the low-s form: n - s, with the other v\); personal_sign/,
          'high s (v flipped, as 0/1)': /^Non-canonical signature: v is [01] .* and s is above n\/2 /,
        }[form];
        for (const recover of [undefined, recoverPersonalSigner]) {
          const check = await recoverRequestSigner(withSignature(headers, forged), request, now, recover);
          expect(check.ok, form).toBe(false);
          expect(!check.ok && check.error, form).toMatch(expected);
        }
      }
      expect(await recoverRequestSigner(headers, request, now, recoverPersonalSigner)).toMatchObject({ ok: true });
    }
  });

  it('v other than 27/28 is refused by name', async () => {
    const headers = await signedHeaders({ type: 'secp256k1', account }, { ...request, timestamp: String(now) });
    const signature = headers[AGENT_HEADERS.signature] as Hex;
    const check = await recoverRequestSigner(withSignature(headers, `${signature.slice(0, 130)}25` as Hex), request, now);
    expect(check).toEqual({ ok: false, error: 'Invalid signature: v is 37; it must be 27 or 28' });
  });

  it('a non-canonical Ed25519 S (S + L, equal to S for a verifier without the range check) is refused', async () => {
    const seed = ed25519.utils.randomSecretKey();
    const headers = await signedHeaders({ type: 'ed25519', seed }, { ...request, timestamp: String(now) });
    const forged = ed25519PlusL(headers[AGENT_HEADERS.signature] as Hex);
    expect(forged).not.toBe(headers[AGENT_HEADERS.signature]);
    // [S + L]B = [S]B: only the range check on S tells the two apart
    const refused = await recoverRequestSigner(withSignature(headers, forged), request, now);
    expect(!refused.ok && refused.error).toMatch(/^Invalid Ed25519 signature: /);
  });

  it('an Ed25519 small-order key, or a key in a non-canonical encoding, signs nothing', async () => {
    const headers = await signedHeaders({ type: 'ed25519', seed: ed25519.utils.randomSecretKey() }, { ...request, timestamp: String(now) });
    // R the identity and S = 0 satisfy [S]B = R + [h]A for the identity A whatever the message: a forgery for all
    const identity = `0x01${'00'.repeat(31)}`;
    const forgery = `0x01${'00'.repeat(63)}` as Hex;
    // y = p + 1: the identity again, in an encoding no honest key has
    const nonCanonical = `0x${'ee'}${'ff'.repeat(30)}7f`;
    for (const key of [identity, nonCanonical]) {
      const check = await recoverRequestSigner({ ...withSignature(headers, forgery), [AGENT_HEADERS.key]: key }, request, now);
      expect(check.ok, key).toBe(false);
      expect(!check.ok && check.error, key).toMatch(/^Invalid Ed25519 signature: /);
    }
  });

  it('the replay key is the signer and the message: two signatures of one message share it, another message does not', async () => {
    const headers = await signedHeaders({ type: 'secp256k1', account }, { ...request, timestamp: String(now) });
    const message = requestMessage({ ...request, timestamp: String(now) });
    const other = resign(key, message);
    expect(other).not.toBe(headers[AGENT_HEADERS.signature]);
    const first = await recoverRequestSigner(headers, request, now);
    const second = await recoverRequestSigner(withSignature(headers, other), request, now, recoverPersonalSigner);
    if (!first.ok || !second.ok) throw new Error('both signatures verify');
    expect(signedMessageKey(second)).toBe(signedMessageKey(first));
    expect(signedMessageKey(first)).toBe(`${first.signer.agentKey}:${message}`);
    const later = await recoverRequestSigner(
      await signedHeaders({ type: 'secp256k1', account }, { ...request, timestamp: String(now + 1) }),
      request,
      now,
    );
    expect(later.ok && signedMessageKey(later)).not.toBe(signedMessageKey(first));
  });
});
