import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config.js';

describe('.env.example', () => {
  const text = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
  const assignments = Object.fromEntries([...text.matchAll(/^([A-Z][A-Z0-9_]+)=(.*)$/gm)].map((m) => [m[1] as string, m[2] as string]));

  it('documents every variable the configuration reads, and no other', () => {
    expect(Object.keys(assignments).sort()).toEqual([...CONFIG_VARIABLES].sort());
  });

  it('is a valid configuration as it stands', () => {
    expect(() => loadConfig(assignments)).not.toThrow();
  });
});
