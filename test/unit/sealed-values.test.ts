import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SealedValues } from '../../src/store/sealed-values.js';

describe('SealedValues', () => {
  const secret = randomBytes(32);
  const sealed = new SealedValues(secret, 'test');
  const value = { url: 'https://hooks.example/a2a', credentials: 'Bearer-secret-123' };

  it('opens what it sealed under the same key, and the sealed text shows nothing of the value', () => {
    const text = sealed.seal('a2a:push:t1', value);
    expect(text).not.toContain('hooks.example');
    expect(text).not.toContain('secret-123');
    expect(sealed.open('a2a:push:t1', text)).toEqual(value);
    // a fresh IV every time
    expect(sealed.seal('a2a:push:t1', value)).not.toBe(text);
  });

  it('refuses a value moved to another store key, altered, or sealed with another secret or purpose', () => {
    const text = sealed.seal('a2a:push:t1', value);
    expect(() => sealed.open('a2a:push:t2', text)).toThrow();
    const parts = text.split('.');
    const body = Buffer.from(parts[2]!, 'base64url');
    body[0] = body[0]! ^ 1;
    expect(() => sealed.open('a2a:push:t1', [parts[0], parts[1], body.toString('base64url'), parts[3]].join('.'))).toThrow();
    expect(() => new SealedValues(randomBytes(32), 'test').open('a2a:push:t1', text)).toThrow();
    expect(() => new SealedValues(secret, 'other').open('a2a:push:t1', text)).toThrow();
    expect(() => sealed.open('a2a:push:t1', 'not sealed')).toThrow(/Not a sealed value/);
  });

  it('needs a secret of at least 32 bytes', () => {
    expect(() => new SealedValues(randomBytes(16), 'test')).toThrow(/32 bytes/);
  });
});
