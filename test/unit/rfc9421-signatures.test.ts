// RFC 9421 request signatures with real keys: ERC-8128 (secp256k1, EIP-191 over the base; the ERC's example base
// reproduces) and Web Bot Auth (Ed25519) sign what their specifications define and verify; Cloudflare's web-bot-auth
// package, an outside implementation, verifies ours and signs requests ours accept; every refusal gives its status
// and a message saying what to fix; the replay key names the signer and the nonce. Signatures that break a rule are
// made with http-message-signatures directly, with the same keys, so that only the rule under test fails.
import { ed25519 } from '@noble/curves/ed25519.js';
import { httpbis, type SigningKey } from 'http-message-signatures';
import { type InnerList, parseDictionary } from 'structured-headers';
import { type Address, bytesToHex, type Hex, hexToBytes } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { signatureHeaders as cloudflareSign, verify as cloudflareVerify, jwkToKeyID } from 'web-bot-auth';
import { signerFromJWK, verifierFromJWK } from 'web-bot-auth/crypto';
import { ed25519JwkThumbprint, ed25519PublicJwk } from '../../src/core/agent-jwk.js';
import { addressAgentKey } from '../../src/core/agent-key.js';
import { contentDigest } from '../../src/core/content-digest.js';
import { recoverPersonalSigner } from '../../src/core/ecrecover.js';
import { ed25519AgentAddress } from '../../src/core/ed25519-key.js';
import { erc8128KeyId } from '../../src/core/rfc9421-profiles.js';
import { signRfc9421 } from '../../src/core/rfc9421-sign.js';
import { signatureBase } from '../../src/core/rfc9421-signature.js';
import { hasRfc9421Signature, type Rfc9421Check, type Rfc9421VerifyOptions, verifyRfc9421 } from '../../src/core/rfc9421-verify.js';
import { ed25519PlusL, MALLEATED_FORMS, malleate } from '../support/signature-forms.js';

const URL_ = 'https://svc.example/api/demo/verify?network=testnet';
const AUTHORITIES = ['svc.example'];
const BODY = '{"hello":"registry"}';
const CREATED = 1_800_000_000;
const NOW = CREATED * 1000 + 2_000;

const account = privateKeyToAccount(generatePrivateKey());
const secp = { type: 'secp256k1', account } as const;
const seed = ed25519.utils.randomSecretKey();
const edKey = bytesToHex(ed25519.getPublicKey(seed));
const ed = { type: 'ed25519', seed } as const;
const thumbprint = await ed25519JwkThumbprint(edKey);

/** Who asked the resolver what, and the registered key of our one Ed25519 agent. */
const resolved: [string, string | undefined][] = [];
const options = (overrides: Partial<Rfc9421VerifyOptions> = {}): Rfc9421VerifyOptions => ({
  authorities: AUTHORITIES,
  now: NOW,
  resolveEd25519Key: async (keyid, signatureAgent) => {
    resolved.push([keyid, signatureAgent]);
    return keyid === thumbprint ? edKey : undefined;
  },
  ...overrides,
});

const check = (headers: Record<string, string>, request: { method?: string; url?: string; body?: string | null } = {}, overrides = {}) =>
  verifyRfc9421(
    { method: request.method ?? 'POST', url: request.url ?? URL_, headers, body: request.body === undefined ? BODY : request.body },
    options(overrides),
  );

const refusal = (result: Rfc9421Check) => (result.ok ? { ok: true } : { status: result.status, error: result.error });

const erc8128Key = (signer = account, keyid = erc8128KeyId(42220, signer.address)): SigningKey => ({
  id: keyid,
  sign: async (data) => Buffer.from(hexToBytes(await signer.signMessage({ message: { raw: data } }))),
});
const ed25519Key = (id = thumbprint): SigningKey => ({ id, alg: 'ed25519', sign: async (data) => Buffer.from(ed25519.sign(data, seed)) });

/** A signature made through the library with chosen components and parameters (valid, but maybe against a rule). */
async function crafted(
  key: SigningKey,
  spec: {
    fields?: string[];
    params?: string[];
    values?: Record<string, string | number | Date>;
    headers?: Record<string, string>;
    label?: string;
    method?: string;
    url?: string;
  } = {},
): Promise<Record<string, string>> {
  const headers = spec.headers ?? { 'content-digest': contentDigest(BODY) };
  const signed = await httpbis.signMessage(
    {
      key,
      name: spec.label ?? 'sig1',
      fields: spec.fields ?? ['@method', '@authority', '@path', '@query', 'content-digest'],
      params: spec.params ?? ['created', 'expires', 'nonce', 'keyid', 'alg', 'tag'],
      paramValues: {
        created: new Date(CREATED * 1000),
        expires: new Date((CREATED + 300) * 1000),
        nonce: 'n-1',
        tag: 'web-bot-auth',
        ...spec.values,
      },
    },
    { method: spec.method ?? 'POST', url: spec.url ?? URL_, headers },
  );
  return { ...headers, 'signature-input': String(signed.headers['Signature-Input']), signature: String(signed.headers['Signature']) };
}

/** The signature of `label` as 0x-hex, and the headers with another signature in its place. */
const signatureHex = (headers: Record<string, string>, label: string): Hex =>
  bytesToHex(new Uint8Array((parseDictionary(headers['signature']!).get(label) as [ArrayBuffer, unknown])[0]));
const withSignature = (headers: Record<string, string>, label: string, signature: Hex): Record<string, string> => ({
  ...headers,
  signature: `${label}=:${Buffer.from(hexToBytes(signature)).toString('base64')}:`,
});

describe('ERC-8128 (secp256k1 agents)', () => {
  it('the signature base of the ERC’s own example (section 3.4.3) reproduces byte for byte', () => {
    // ethereum/ERCs ERCS/erc-8128.md at 0a15bd5ff00fdabc5bacbe3abe7bdf2d427286ea, RFC 8792 wrapping undone
    const digest = 'sha-256=:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad:';
    const params =
      '("@method" "@authority" "@path" "@query" "content-digest");created=1736940000;expires=1736940060;nonce="b64url_r4Nd0mN0nCEK0YQY4d4r7A";keyid="erc8128:1:0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045"';
    const input = parseDictionary(`eth=${params}`).get('eth') as InnerList;
    const request = { method: 'POST', url: new URL('https://api.example.com/foo?a=1&b=two'), headers: { 'content-digest': digest } };
    expect(signatureBase(request, input)).toBe(
      [
        '"@method": POST',
        '"@authority": api.example.com',
        '"@path": /foo',
        '"@query": ?a=1&b=two',
        `"content-digest": ${digest}`,
        `"@signature-params": ${params}`,
      ].join('\n'),
    );
  });

  it('signs as the ERC defines: label eth, keyid erc8128:<chainId>:<lowercase address>, no alg or tag, a digest of the body', async () => {
    const headers = await signRfc9421(secp, { method: 'post', url: URL_, body: BODY }, { created: CREATED, nonce: 'abc' });
    expect(headers).toEqual({
      'content-digest': contentDigest(BODY),
      'signature-input': `eth=("@method" "@authority" "@path" "@query" "content-digest");created=${CREATED};expires=${CREATED + 300};nonce="abc";keyid="erc8128:42220:${account.address.toLowerCase()}"`,
      signature: expect.stringMatching(/^eth=:[A-Za-z0-9+/]{87}=:$/),
    });
    expect(headers['content-digest']).toMatch(/^sha-256=:[A-Za-z0-9+/]{43}=:$/);
  });

  it('verifies: the recovered signer is the keyid’s address, with the chain, the window and the nonce', async () => {
    const headers = await signRfc9421(secp, { method: 'POST', url: URL_, body: BODY }, { created: CREATED, nonce: 'abc' });
    for (const recover of [undefined, recoverPersonalSigner]) {
      expect(await check(headers, {}, recover ? { recover } : {})).toEqual({
        ok: true,
        profile: 'erc8128',
        signer: { keyType: 'secp256k1', agentKey: addressAgentKey(account.address), agentAddress: account.address },
        keyid: `erc8128:42220:${account.address.toLowerCase()}`,
        chainId: 42220,
        nonce: 'abc',
        created: CREATED,
        expires: CREATED + 300,
        replayKey: `${addressAgentKey(account.address)}:nonce:abc`,
        ttlMs: (CREATED + 300) * 1000 - NOW + 1,
      });
    }
  });

  it('signs with a random nonce by default, and names another chain when told', async () => {
    const first = await signRfc9421(secp, { method: 'GET', url: URL_ }, { chainId: 11142220 });
    const second = await signRfc9421(secp, { method: 'GET', url: URL_ }, { chainId: 11142220 });
    const nonce = (headers: Record<string, string>) => /nonce="([^"]+)"/.exec(headers['signature-input']!)?.[1];
    expect(nonce(first)).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(nonce(first)).not.toBe(nonce(second));
    expect(first['content-digest']).toBeUndefined();
    const now = Date.now();
    expect(await verifyRfc9421({ method: 'GET', url: URL_, headers: first }, options({ now }))).toMatchObject({ ok: true, chainId: 11142220 });
    expect(refusal(await verifyRfc9421({ method: 'GET', url: URL_, headers: first }, options({ now, chainIds: [42220] })))).toEqual({
      status: 403,
      error: 'The keyid names chain 11142220: this service accepts chain ids 42220',
    });
  });

  it('refuses a signature whose keyid names another address than the one that signed', async () => {
    const other = privateKeyToAccount(generatePrivateKey());
    const headers = await crafted(erc8128Key(account, erc8128KeyId(42220, other.address)), { params: ['created', 'expires', 'nonce', 'keyid'] });
    expect(refusal(await check(headers))).toEqual({
      status: 403,
      error: `Invalid signature: it was not made by ${other.address.toLowerCase()} over this request`,
    });
  });

  it('refuses an alg parameter, which the ERC leaves out', async () => {
    const headers = await crafted(erc8128Key(), { params: ['created', 'expires', 'nonce', 'keyid', 'alg'], values: { alg: 'ecdsa-secp256k1' } });
    expect(refusal(await check(headers))).toEqual({
      status: 403,
      error: 'ERC-8128 signatures carry no alg parameter (the keyid names the scheme): leave it out',
    });
  });

  it.each(MALLEATED_FORMS)('refuses the %s form of a good signature: only the canonical ECDSA form is accepted', async (form) => {
    const headers = await signRfc9421(secp, { method: 'POST', url: URL_, body: BODY }, { created: CREATED });
    const result = await check(withSignature(headers, 'eth', malleate(signatureHex(headers, 'eth'), form)), {}, { recover: recoverPersonalSigner });
    expect(result).toMatchObject({ ok: false, status: 403, error: expect.stringMatching(/^Non-canonical signature: /) });
  });
});

describe('Web Bot Auth (Ed25519 agents)', () => {
  it('signs with alg ed25519, the JWK thumbprint as keyid, tag web-bot-auth and a covered Signature-Agent member', async () => {
    const headers = await signRfc9421(
      ed,
      { method: 'POST', url: URL_, body: BODY },
      { created: CREATED, nonce: 'abc', signatureAgent: 'https://svc.example/agents/7' },
    );
    expect(headers).toEqual({
      'content-digest': contentDigest(BODY),
      'signature-agent': 'sig1="https://svc.example/agents/7"',
      'signature-input': `sig1=("@method" "@authority" "@path" "@query" "content-digest" "signature-agent";key="sig1");created=${CREATED};expires=${CREATED + 300};nonce="abc";keyid="${thumbprint}";alg="ed25519";tag="web-bot-auth"`,
      signature: expect.stringMatching(/^sig1=:[A-Za-z0-9+/]{86}==:$/),
    });
    expect(thumbprint).toBe(
      await jwkToKeyID(
        ed25519PublicJwk(edKey),
        async (b) => crypto.subtle.digest('SHA-256', b),
        (u) => Buffer.from(u).toString('base64url'),
      ),
    );
  });

  it('verifies with the key the resolver returns for the thumbprint and the covered Signature-Agent', async () => {
    const headers = await signRfc9421(
      ed,
      { method: 'POST', url: URL_, body: BODY },
      { created: CREATED, nonce: 'abc', signatureAgent: 'https://svc.example/agents/7' },
    );
    resolved.length = 0;
    expect(await check(headers)).toEqual({
      ok: true,
      profile: 'web-bot-auth',
      signer: { keyType: 'ed25519', agentKey: edKey, agentAddress: ed25519AgentAddress(edKey) },
      keyid: thumbprint,
      nonce: 'abc',
      created: CREATED,
      expires: CREATED + 300,
      signatureAgent: 'https://svc.example/agents/7',
      replayKey: `${edKey}:nonce:abc`,
      ttlMs: (CREATED + 300) * 1000 - NOW + 1,
    });
    expect(resolved).toEqual([[thumbprint, 'https://svc.example/agents/7']]);
  });

  it('refuses an unknown agent, a signature that does not verify, and the S + L twin of a good one (strict RFC 8032)', async () => {
    const headers = await signRfc9421(ed, { method: 'POST', url: URL_, body: BODY }, { created: CREATED });
    const stranger = await crafted(ed25519Key('A'.repeat(43)));
    expect(refusal(await check(stranger))).toEqual({
      status: 403,
      error: `Unknown agent: no registered Ed25519 agent has the key with thumbprint ${'A'.repeat(43)}`,
    });
    expect(refusal(await check(headers, { method: 'PUT' }))).toEqual({
      status: 403,
      error: 'Invalid signature: it does not verify with the agent key over this request',
    });
    const twin = withSignature(headers, 'sig1', ed25519PlusL(signatureHex(headers, 'sig1')));
    expect(refusal(await check(twin))).toEqual({ status: 403, error: 'Invalid signature: it does not verify with the agent key over this request' });
    expect(refusal(await check(await crafted(ed25519Key(), { values: { alg: 'rsa-pss-sha512' } })))).toEqual({
      status: 403,
      error: 'alg "rsa-pss-sha512" is not accepted: Web Bot Auth agents sign with alg="ed25519"',
    });
  });
});

describe('Cloudflare’s web-bot-auth as an outside implementation', () => {
  const privateJwk = { ...ed25519PublicJwk(edKey), d: Buffer.from(seed).toString('base64url') };
  // web-bot-auth 0.1.3 (http-message-sig 0.2.0) derives @query as "" for a URL without a query, where RFC 9421
  // section 2.2.7 says "?", and reads a covered signature-agent as the whole field even with ;key=: the requests
  // here have a query, and it signs Signature-Agent in the forms it knows.
  const components = ['@method', '@authority', '@path', '@query', 'content-digest', 'signature-agent'];

  it.each([
    ['the draft’s earlier string form', '"https://svc.example/agents/7"'],
    ['a dictionary, the whole field covered', 'sig1="https://svc.example/agents/7"'],
  ])('a request it signs with Signature-Agent as %s verifies with ours', async (_form, agentField) => {
    const created = new Date();
    const request = new Request(URL_, {
      method: 'POST',
      body: BODY,
      headers: { 'content-digest': contentDigest(BODY), 'signature-agent': agentField },
    });
    const signed = await cloudflareSign(request, await signerFromJWK(privateJwk), {
      created,
      expires: new Date(created.getTime() + 300_000),
      components,
    });
    resolved.length = 0;
    const result = await verifyRfc9421(
      {
        method: 'POST',
        url: URL_,
        body: BODY,
        headers: {
          'content-digest': contentDigest(BODY),
          'signature-agent': agentField,
          'signature-input': signed['Signature-Input'],
          signature: signed.Signature,
        },
      },
      options({ now: Date.now() }),
    );
    expect(result).toMatchObject({
      ok: true,
      profile: 'web-bot-auth',
      keyid: thumbprint,
      signer: { agentKey: edKey },
      signatureAgent: 'https://svc.example/agents/7',
    });
    expect(resolved).toEqual([[thumbprint, 'https://svc.example/agents/7']]);
  });

  it('a request we sign verifies with its verify, and a changed one does not', async () => {
    const headers = await signRfc9421(ed, { method: 'POST', url: URL_, body: BODY });
    const verifier = await verifierFromJWK(ed25519PublicJwk(edKey));
    await expect(cloudflareVerify(new Request(URL_, { method: 'POST', body: BODY, headers }), verifier)).resolves.toBeUndefined();
    await expect(cloudflareVerify(new Request(URL_, { method: 'PUT', body: BODY, headers }), verifier)).rejects.toThrow();
  });
});

/** A good Web Bot Auth signature of the POST, for the refusals that change one thing of it. */
const good = await signRfc9421(ed, { method: 'POST', url: URL_, body: BODY }, { created: CREATED, nonce: 'n-1' });

describe('refusals', () => {
  const edFields = (fields: string[]) => crafted(ed25519Key(), { fields });

  it.each<[string, () => Promise<Record<string, string>>, 400 | 401 | 403, string]>([
    ['no signature at all', async () => ({}), 401, 'Missing RFC 9421 signature: send Signature-Input and Signature'],
    [
      'a Signature without its Signature-Input',
      async () => ({ signature: good['signature']! }),
      400,
      'Signature-Input is missing: RFC 9421 signatures send both fields',
    ],
    [
      'a Signature-Input that is not a structured dictionary',
      async () => ({ ...good, 'signature-input': 'sig1=("@method"' }),
      400,
      'Signature-Input is not a structured dictionary (RFC 9651): ',
    ],
    [
      'labels that do not pair',
      async () => ({ ...good, signature: good['signature']!.replace('sig1=', 'sig2=') }),
      400,
      'Signature sig2 has no Signature-Input',
    ],
    [
      'a Signature that is not a byte sequence',
      async () => ({ ...good, signature: 'sig1="abc"' }),
      400,
      'Signature sig1 must be a byte sequence (:base64:)',
    ],
    ['no keyid', async () => crafted(ed25519Key(), { params: ['created', 'expires', 'nonce', 'tag'] }), 400, 'Signature-Input sig1 has no keyid'],
    [
      'a component listed twice',
      async () => ({ ...good, 'signature-input': good['signature-input']!.replace('("@method"', '("@method" "@method"') }),
      400,
      'Signature-Input sig1 lists "@method" twice',
    ],
    [
      'a keyid of no profile we know',
      async () => crafted(ed25519Key('my-key'), { params: ['created', 'expires', 'nonce', 'keyid'] }),
      403,
      'Unknown keyid form: sign as ERC-8128',
    ],
    [
      'a malformed ERC-8128 keyid',
      async () => crafted(erc8128Key(account, 'erc8128:1:0x12'), { params: ['created', 'expires', 'nonce', 'keyid'] }),
      403,
      'Unknown keyid form "erc8128:1:0x12"',
    ],
    [
      'a Web Bot Auth keyid that is not a thumbprint',
      async () => crafted(ed25519Key('short')),
      403,
      'Unknown keyid form: a Web Bot Auth keyid is the base64url SHA-256 JWK thumbprint',
    ],
    [
      'no @authority',
      () => edFields(['@method', '@path', '@query', 'content-digest']),
      403,
      'The signature does not cover @authority: sign @method, @authority',
    ],
    ['no @method or @path', () => edFields(['@authority', '@query', 'content-digest']), 403, 'The signature does not cover @method, @path: '],
    [
      'no @query for a URL with a query',
      () => edFields(['@method', '@authority', '@path', 'content-digest']),
      403,
      'The signature does not cover @query: ',
    ],
    [
      'no content-digest for a body',
      () => edFields(['@method', '@authority', '@path', '@query']),
      403,
      'The signature does not cover content-digest: ',
    ],
    [
      'a Signature-Agent it does not cover',
      async () => ({ ...good, 'signature-agent': 'sig1="https://svc.example/agents/7"' }),
      403,
      'The signature does not cover signature-agent: ',
    ],
    ['no nonce', () => crafted(ed25519Key(), { params: ['created', 'expires', 'keyid', 'alg', 'tag'] }), 403, 'The signature has no nonce: '],
    [
      'no created or expires',
      () => crafted(ed25519Key(), { params: ['nonce', 'keyid', 'alg', 'tag'] }),
      403,
      'The signature has no created, expires: ',
    ],
    [
      'a window over 5 minutes',
      () => crafted(ed25519Key(), { values: { expires: new Date((CREATED + 301) * 1000) } }),
      403,
      'The signature window (expires - created) is 301 s: it must be at most 5 minutes',
    ],
    [
      'expires before created',
      () => crafted(ed25519Key(), { values: { expires: new Date((CREATED - 1) * 1000) } }),
      403,
      'expires must be after created',
    ],
    [
      'created in the future, beyond the skew',
      () => crafted(ed25519Key(), { values: { created: new Date((CREATED + 40) * 1000), expires: new Date((CREATED + 100) * 1000) } }),
      403,
      `created is in the future (${CREATED + 40}): check the signer's clock`,
    ],
    [
      'an expired signature (a stale created)',
      () => crafted(ed25519Key(), { values: { created: new Date((CREATED - 400) * 1000), expires: new Date((CREATED - 100) * 1000) } }),
      403,
      `The signature expired at ${CREATED - 100} (unix seconds): sign the request again`,
    ],
    [
      'a covered field the request lacks',
      () =>
        crafted(ed25519Key(), {
          fields: ['@method', '@authority', '@path', '@query', 'content-digest', 'x-extra'],
          headers: { 'content-digest': contentDigest(BODY), 'x-extra': '1' },
        }).then(({ 'x-extra': _, ...rest }) => rest),
      403,
      'The signature covers the x-extra field, which the request does not carry',
    ],
  ])('%s: %i', async (_case, make, status, error) => {
    const result = await check(await make());
    expect(result.ok).toBe(false);
    expect(refusal(result)).toEqual({ status, error: expect.stringContaining(error) });
  });

  it('a signature made for another host is refused, whether the Host is ours or theirs', async () => {
    const elsewhere = 'https://other.example/api/demo/verify?network=testnet';
    const headers = await signRfc9421(ed, { method: 'POST', url: elsewhere, body: BODY }, { created: CREATED });
    // replayed to us with their Host: the base matches, the authority is not ours
    expect(refusal(await check(headers, { url: elsewhere }))).toEqual({
      status: 403,
      error: 'Signed for another host (other.example): this service answers at svc.example',
    });
    // replayed to us with our Host: the signed @authority differs
    expect(refusal(await check(headers))).toEqual({
      status: 403,
      error: 'Invalid signature: it does not verify with the agent key over this request',
    });
    // a port is part of the authority
    expect(refusal(await check(good, { url: 'https://svc.example:8443/api/demo/verify?network=testnet' }))).toMatchObject({
      error: 'Signed for another host (svc.example:8443): this service answers at svc.example',
    });
  });

  it('a changed body is refused by its digest, and a changed body with its new digest by the signature', async () => {
    expect(refusal(await check(good, { body: '{"hello":"other"}' }))).toEqual({
      status: 403,
      error: 'Content-Digest sha-256 does not match the body: the body was changed, or the digest was not taken over its exact bytes',
    });
    const redigested = { ...good, 'content-digest': contentDigest('{"hello":"other"}') };
    expect(refusal(await check(redigested, { body: '{"hello":"other"}' }))).toEqual({
      status: 403,
      error: 'Invalid signature: it does not verify with the agent key over this request',
    });
    expect(refusal(await check({ ...good, 'content-digest': 'md5=:AAAA:' }))).toMatchObject({ status: 403 });
    expect(refusal(await check({ ...good, 'content-digest': 'sha-256=abc' }))).toEqual({
      status: 403,
      error: 'Content-Digest sha-256 is not a byte sequence: send sha-256=:<base64>:',
    });
  });
});

describe('replay keys and the choice among several signatures', () => {
  it('a replayed request yields the same replayKey; one signer’s nonce is one key, whatever the keyid’s chain', async () => {
    const headers = await signRfc9421(secp, { method: 'POST', url: URL_, body: BODY }, { created: CREATED, nonce: 'once' });
    const first = await check(headers);
    const again = await check(headers);
    const otherChain = await check(
      await signRfc9421(secp, { method: 'GET', url: URL_ }, { created: CREATED + 1, nonce: 'once', chainId: 11142220 }),
      {
        method: 'GET',
        body: null,
      },
    );
    const otherNonce = await check(await signRfc9421(secp, { method: 'POST', url: URL_, body: BODY }, { created: CREATED, nonce: 'twice' }));
    const keys = [first, again, otherChain, otherNonce].map((result) => (result.ok ? result.replayKey : result.error));
    expect(keys[0]).toBe(`${addressAgentKey(account.address as Address)}:nonce:once`);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).toBe(keys[0]);
    expect(keys[3]).not.toBe(keys[0]);
  });

  it('checks the first signature of a profile we know, skipping others, and refuses a request with none', async () => {
    const foreign = await crafted(ed25519Key('partner-key'), { label: 'partner', params: ['created', 'expires', 'nonce', 'keyid'] });
    const ours = await signRfc9421(secp, { method: 'POST', url: URL_, body: BODY }, { created: CREATED });
    const both = {
      'content-digest': ours['content-digest']!,
      'signature-input': `${foreign['signature-input']}, ${ours['signature-input']}`,
      signature: `${foreign['signature']}, ${ours['signature']}`,
    };
    expect(await check(both)).toMatchObject({ ok: true, profile: 'erc8128' });
    const edFirst = await signRfc9421(ed, { method: 'POST', url: URL_, body: BODY }, { created: CREATED });
    const two = {
      ...both,
      'signature-input': `${edFirst['signature-input']}, ${ours['signature-input']}`,
      signature: `${edFirst['signature']}, ${ours['signature']}`,
    };
    expect(await check(two)).toMatchObject({ ok: true, profile: 'web-bot-auth' });
    expect(refusal(await check(foreign))).toMatchObject({ status: 403, error: expect.stringMatching(/^Unknown keyid form/) });
  });

  it('hasRfc9421Signature looks for Signature-Input', () => {
    expect(hasRfc9421Signature({ 'signature-input': 'sig1=()' })).toBe(true);
    expect(hasRfc9421Signature({ 'x-svc-agent-signature': '0x' })).toBe(false);
  });
});
