// The proxy's duplicate-key scan: a repeated key anywhere (decoded, so escapes do not hide it), with where it is;
// strings that merely look like keys, and the same key in sibling objects, are not repeats.
import { describe, expect, it } from 'vitest';
import { findDuplicateKey } from '../../src/aa/json-duplicate-keys.js';

describe('findDuplicateKey', () => {
  it.each([
    ['{"method":"eth_chainId","jsonrpc":"2.0","method":"pm_sponsorUserOperation"}', { key: 'method', path: '' }],
    ['{"method":"a","\\u006dethod":"b"}', { key: 'method', path: '' }],
    ['{"params":[{"sender":"0x1","nonce":"0x0","sender":"0x2"}]}', { key: 'sender', path: 'params[0]' }],
    ['{"params":[1,{"a":{"b":1,"b":2}}]}', { key: 'b', path: 'params[1].a' }],
    ['{ "a" : 1 ,\n "a" : 2 }', { key: 'a', path: '' }],
    ['[{"x":1},{"y":2,"y":3}]', { key: 'y', path: '[1]' }],
  ])('%s', (text, expected) => {
    expect(findDuplicateKey(text)).toEqual(expected);
  });

  it.each([
    '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
    '{"a":{"x":1},"b":{"x":1}}',
    '{"a":"a","b":["a","a"],"c":"\\"a\\":"}',
    '{"a\\"b":1,"a":2,"b":3}',
    '{"":1,"\\\\":2}',
    '[]',
    '"a"',
    '{}',
  ])('%s has none', (text) => {
    JSON.parse(text); // only valid JSON is scanned
    expect(findDuplicateKey(text)).toBeUndefined();
  });
});
