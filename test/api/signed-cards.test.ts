// Signed cards over real HTTP, on real chains, with the service's real keys: the per-agent cards and the service's
// A2A card (v1.0 and v0.3) verify with @a2a-js/sdk's verifyAgentCardSignature against the JWKS the listening service
// serves (fetched from the signature's jku); a card changed in transit does not; the ERC-8004 registration file's
// JWS carries the served bytes; and after a rotation, answers kept in the response cache are signed again with the
// new key while the old key stays listed. Served as main.ts serves it: the response cache in front of express.
import type { RequestListener } from 'node:http';
import { type AgentCard, verifyAgentCardSignature } from '@a2a-js/sdk';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { compactVerify, createRemoteJWKSet, decodeProtectedHeader, type JWK } from 'jose';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ResponseCache } from '../../src/http/response-cache.js';
import type { ServiceSigningKey } from '../../src/services/signing-keys.js';
import { type RegisteredAgent, registerLinked } from '../support/agents.js';
import type { TestSystem } from '../support/chain.js';
import { eventually, type QueryTestApp, queryTestApp } from '../support/queries.js';
import { deployTestNetworks } from '../support/registration-flow.js';
import { mined, registryAs, setMaxAgentsPerHuman } from '../support/registry.js';
import { exchange, headerOf, listen } from '../support/response-cache.js';

const TESTNET = 11142220;
const EXTENSION_PATH = '/extensions/proof-of-human/v1';

type Json = Record<string, unknown>;
type Card = Json & { signatures: { protected: string; signature: string }[] };

let system: TestSystem;
let q: QueryTestApp;
let base: string;
let cache: ResponseCache;
let close: () => Promise<void>;
/** Owner-set metadata on chain, with an extension of the owner's. */
let agent: RegisteredAgent;

beforeAll(async () => {
  const networks = await deployTestNetworks();
  system = networks.testnet;
  await setMaxAgentsPerHuman(system, 0n);
  // the server listens first: the cards name its URL (the A2A endpoint, jku, the extension URI)
  let front: RequestListener = (_req, res) => res.end();
  const served = await listen((req, res) => front(req, res));
  base = served.base;
  q = await queryTestApp(networks, { publicUrl: base, a2a: true });
  cache = new ResponseCache({ maxEntries: 100, metrics: q.metrics, logger: pino({ level: 'silent' }) });
  const unsubscribe = q.services.queries.onChange((key) => cache.drop(key));
  front = cache.front(q.app);
  close = async () => {
    unsubscribe();
    served.server.closeAllConnections();
    await new Promise((resolve) => served.server.close(resolve));
  };

  const wallet = await system.newWallet();
  agent = await registerLinked(system, { human: wallet.account.address });
  await mined(
    system,
    registryAs(system, wallet).write.updateAgentMetadata([
      agent.agentId,
      JSON.stringify({
        name: 'Research assistant',
        url: 'https://assistant.example/a2a',
        capabilities: { streaming: true, extensions: [{ uri: 'https://assistant.example/ext/citations', params: { style: 'apa' } }] },
      }),
    ]),
  );
  await q.services.queries.syncNow();
}, 60_000);

afterAll(async () => {
  await close?.();
  q?.services.cardSigner.stop();
  await q?.stop();
});

const cardPath = () => `/api/cards/${TESTNET}/${agent.agentId}`;

async function getJson<T = Card>(path: string, headers: Record<string, string> = {}): Promise<T> {
  const res = await exchange(base, path, { headers });
  expect(res.status, path).toBe(200);
  return JSON.parse(res.body.toString('utf8')) as T;
}

/** The served JWKS, fetched over HTTP. */
const jwks = (): Promise<{ keys: (JWK & { kid: string })[] }> => getJson('/.well-known/jwks.json');

/** The SDK's verifier with keys fetched from the signature's jku, which must be this service's JWKS. */
const verifyCard = (card: unknown): Promise<void> =>
  verifyAgentCardSignature(async (kid, jku) => {
    expect(jku).toBe(`${base}/.well-known/jwks.json`);
    const { keys } = (await (await fetch(jku as string)).json()) as { keys: (JWK & { kid: string })[] };
    const jwk = keys.find((key) => key.kid === kid);
    if (!jwk) throw new Error(`kid ${kid} is not in the JWKS`);
    return jwk;
  })(card as AgentCard);

const kidOf = (card: Card): string => {
  expect(card.signatures).toHaveLength(1);
  return decodeProtectedHeader(card.signatures[0] as { protected: string }).kid as string;
};

const extensionOf = (card: Card): Json =>
  ((card['capabilities'] as { extensions: Json[] }).extensions.find((e) => e['uri'] === `${base}${EXTENSION_PATH}`) ?? {}) as Json;

/** The service's card: v0.3 without the header, v1.0 with it. */
const SERVICE_CARDS = {
  'v0.3': () => getJson('/.well-known/agent-card.json'),
  'v1.0': () => getJson('/.well-known/agent-card.json', { 'A2A-Version': '1.0' }),
  'v0.3 at the A2A endpoint': () => getJson('/api/a2a'),
};

describe('signed cards', () => {
  it("the agent's card verifies with the SDK against the served JWKS, and carries the proof of human as a signed extension", async () => {
    const card = await getJson(cardPath());
    const current = await q.services.signingKeys.current();
    expect(decodeProtectedHeader(card.signatures[0] as { protected: string })).toEqual({
      alg: current.alg,
      kid: current.kid,
      typ: 'JOSE',
      jku: `${base}/.well-known/jwks.json`,
    });
    await expect(verifyCard(card)).resolves.toBeUndefined();

    // the owner's extension, then the registry's, whose params are the claims the top-level block repeats
    const extensions = (card['capabilities'] as { extensions: Json[] }).extensions;
    expect(extensions.map((e) => e['uri'])).toEqual(['https://assistant.example/ext/citations', `${base}${EXTENSION_PATH}`]);
    expect(extensionOf(card)).toEqual({
      uri: `${base}${EXTENSION_PATH}`,
      description: expect.any(String),
      required: false,
      params: card['proofOfHuman'],
    });
    expect(extensionOf(card)['params']).toMatchObject({
      agentId: Number(agent.agentId),
      chainId: TESTNET,
      registry: system.deployment.contracts.registry,
      agentAddress: agent.agent.address,
      isVerified: true,
      verificationStrength: 100,
    });
    expect(card['supportedInterfaces']).toEqual([{ url: 'https://assistant.example/a2a', protocolBinding: 'JSONRPC', protocolVersion: '0.3' }]);
  });

  it.each(Object.entries(SERVICE_CARDS))("the service's A2A card (%s) verifies with the SDK against the served JWKS", async (_name, read) => {
    const card = await read();
    expect(kidOf(card)).toBe((await q.services.signingKeys.current()).kid);
    await expect(verifyCard(card)).resolves.toBeUndefined();
  });

  it('a card changed in transit does not verify: a field, the proof-of-human params, an endpoint, a foreign signature', async () => {
    const card = await getJson(cardPath());
    const changed = (change: (copy: Card) => void): Card => {
      const copy = structuredClone(card);
      change(copy);
      return copy;
    };
    const params = (copy: Card) => extensionOf(copy)['params'] as Json;
    const tampered: Record<string, Card> = {
      name: changed((c) => {
        c['name'] = 'Trusted bank';
      }),
      'isVerified of the params': changed((c) => {
        (params(c) as { isVerified: boolean }).isVerified = false;
      }),
      'strength of the params': changed((c) => {
        params(c)['verificationStrength'] = 40;
      }),
      'a credential of the params': changed((c) => {
        (params(c)['credentials'] as Json)['olderThan'] = 21;
      }),
      'the extension removed': changed((c) => {
        const capabilities = c['capabilities'] as { extensions: Json[] };
        capabilities.extensions = capabilities.extensions.filter((e) => e['uri'] !== `${base}${EXTENSION_PATH}`);
      }),
      'the signed endpoint': changed((c) => {
        c['supportedInterfaces'] = [{ url: 'https://attacker.example/a2a', protocolBinding: 'JSONRPC', protocolVersion: '0.3' }];
      }),
      'a skill added': changed((c) => {
        c['skills'] = [{ id: 'pay', name: 'Pay', description: 'Sends money', tags: [] }];
      }),
      'the signature of another card': { ...card, signatures: (await getJson('/.well-known/agent-card.json', { 'A2A-Version': '1.0' })).signatures },
    };
    // the SDK logs each signature that fails (console.debug) before it throws
    const debug = vi.spyOn(console, 'debug').mockImplementation(() => undefined);
    try {
      for (const [what, copy] of Object.entries(tampered)) {
        await expect(verifyCard(copy), what).rejects.toThrow('No valid signatures found on agent card.');
      }
    } finally {
      debug.mockRestore();
    }
    // what the signature does not cover (fields outside the v1.0 schema): why the extension is the authoritative copy
    const uncovered = changed((c) => {
      (c['proofOfHuman'] as { isVerified: boolean }).isVerified = false;
      c['url'] = 'https://attacker.example/a2a';
    });
    await expect(verifyCard(uncovered)).resolves.toBeUndefined();
  });

  it('the ERC-8004 registration file is signed: a compact JWS that carries the served bytes', async () => {
    const file = await exchange(base, '/.well-known/agent-registration.json');
    const res = await exchange(base, '/.well-known/agent-registration.json.jws');
    expect(res.status).toBe(200);
    expect(res.headers.find(([name]) => name.toLowerCase() === 'content-type')?.[1]).toBe('application/jose; charset=utf-8');
    const jws = res.body.toString('utf8');
    const header = decodeProtectedHeader(jws);
    expect(header).toEqual({
      alg: (await q.services.signingKeys.current()).alg,
      kid: (await q.services.signingKeys.current()).kid,
      jku: `${base}/.well-known/jwks.json`,
      cty: 'application/json',
    });
    const { payload } = await compactVerify(jws, createRemoteJWKSet(new URL(header.jku as string)));
    expect(Buffer.from(payload).equals(file.body)).toBe(true);
    // a file changed in transit does not match the signed bytes; the payload carried in the JWS is the file as signed
    const [protectedPart, , signature] = jws.split('.');
    const changedFile = Buffer.from(file.body.toString('utf8').replace('"active":true', '"active":false')).toString('base64url');
    await expect(compactVerify(`${protectedPart}.${changedFile}.${signature}`, createRemoteJWKSet(new URL(header.jku as string)))).rejects.toThrow(
      /signature verification failed/,
    );
  });

  it("the extension's URI describes it: the JSON Schema its params validate against, and the JWKS", async () => {
    const card = await getJson(cardPath());
    const uri = extensionOf(card)['uri'] as string;
    const described = await getJson<{ uri: string; jwksUri: string; paramsSchema: object }>(uri.slice(base.length));
    expect(described).toMatchObject({ uri, name: 'Proof of human', jwksUri: `${base}/.well-known/jwks.json` });
    const validate = new Ajv2020({ strict: false }).compile(described.paramsSchema);
    expect(validate(extensionOf(card)['params']) ? [] : validate.errors).toEqual([]);
    expect(validate({ ...(extensionOf(card)['params'] as Json), verificationStrength: 'high' })).toBe(false);
  });

  it('the OpenAPI document describes the signatures and the extension', async () => {
    const document = await getJson<{ components: { schemas: Record<string, { properties?: Record<string, Json> }> } }>('/openapi.json');
    const { schemas } = document.components;
    const card = schemas['AgentCard']?.properties ?? {};
    expect(JSON.stringify(card['signatures'])).toContain('#/components/schemas/AgentCardSignature');
    expect(JSON.stringify(card['capabilities'])).toContain('#/components/schemas/ProofOfHumanExtension');
    expect(schemas['ProofOfHumanExtension']?.properties?.['params']).toBeDefined();
    expect(Object.keys(schemas['AgentCardSignature']?.properties ?? {})).toEqual(['protected', 'signature']);
  });

  it("the service's card says when it was signed (Last-Modified), and If-Modified-Since is answered with it", async () => {
    for (const headers of [{}, { 'A2A-Version': '1.0' }] as Record<string, string>[]) {
      const first = await exchange(base, '/.well-known/agent-card.json', { headers });
      const lastModified = headerOf(first, 'Last-Modified');
      expect(lastModified).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
      const signedAt = Date.parse(lastModified as string);
      expect(signedAt).toBeLessThanOrEqual(Date.now());
      // unchanged since that date: 304 without a body; changed since an earlier one: the card
      const unchanged = await exchange(base, '/.well-known/agent-card.json', {
        headers: { ...headers, 'If-Modified-Since': lastModified as string },
      });
      expect(unchanged.status).toBe(304);
      expect(unchanged.body.length).toBe(0);
      const earlier = new Date(signedAt - 60_000).toUTCString();
      const changed = await exchange(base, '/.well-known/agent-card.json', { headers: { ...headers, 'If-Modified-Since': earlier } });
      expect(changed.status).toBe(200);
      expect(headerOf(changed, 'Last-Modified')).toBe(lastModified);
    }
  });

  it('a rotation: kept cards are signed again with the new key, which the JWKS lists beside the old one', async () => {
    const paths = [cardPath(), '/.well-known/agent-card.json', '/.well-known/agent-registration.json.jws'];
    // every answer is held by the response cache before the rotation
    for (const path of paths) {
      await exchange(base, path);
      expect(cache.has(path), path).toBe(true);
    }
    const before = await getJson(cardPath());
    const old: ServiceSigningKey = await q.services.signingKeys.current();
    const rotated = await q.services.signingKeys.rotate({ retireAfterMs: 3_600_000 });

    // the signer sees the new key at its next look, and the kept answers go
    const { value: after } = await eventually(
      () => getJson(cardPath()),
      (card) => kidOf(card) === rotated.kid,
      10_000,
    );
    expect(kidOf(after)).toBe(rotated.kid);
    await expect(verifyCard(after)).resolves.toBeUndefined();
    for (const [name, read] of Object.entries(SERVICE_CARDS)) {
      const card = await read();
      expect(kidOf(card), name).toBe(rotated.kid);
      await expect(verifyCard(card)).resolves.toBeUndefined();
    }
    const jws = (await exchange(base, '/.well-known/agent-registration.json.jws')).body.toString('utf8');
    expect(decodeProtectedHeader(jws).kid).toBe(rotated.kid);
    // the old key stays listed: a card signed before the rotation still verifies
    expect((await jwks()).keys.map((key) => key.kid)).toEqual([rotated.kid, old.kid]);
    expect(kidOf(before)).toBe(old.kid);
    await expect(verifyCard(before)).resolves.toBeUndefined();
    // signed once per key: the cache holds the new answers again
    for (const path of paths) {
      await exchange(base, path);
      expect(cache.has(path), path).toBe(true);
    }
  });
});
