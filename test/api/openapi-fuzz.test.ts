// Schema-driven fuzzing of every operation of the served OpenAPI document, against the app over real local chains.
// For each operation, fast-check builds requests from the document itself: its path, query and header parameters, request
// body and security schemes, with values the schemas allow (and values known to the service: a registered agent,
// live session tokens of every kind), near misses of patterns, bounds plus or minus one, wrong types, missing and
// extra members, unicode, long strings (JSON bodies up to about 180 kB, under the 200 kB limit), other content types.
// Each answer must be one the document promises for that operation:
//   - its status is documented for the operation, and it is not a 500 (the chains are healthy);
//   - a JSON answer validates against the documented schema of its status: a 2xx its answer, an error {"error"}
//     (or, where the document says so for a status, its own error shape);
//   - any other answer has a content type the document lists for that status.
// Fixed seed and runs per operation (FUZZ_SEED, FUZZ_RUNS override them); a failure names the operation, the seed,
// the counterexample and the request and answer it produced.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ed25519 } from '@noble/curves/ed25519.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { Express } from 'express';
import fc from 'fast-check';
import request from 'supertest';
import { bytesToHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressAgentKey } from '../../src/core/agent-key.js';
import type { OpenApiDocument, OpenApiOperation } from '../../src/http/openapi/document.js';
import { A2A_RPC_METHODS } from '../../src/http/routes/a2a.js';
import { testApp } from '../support/app.js';
import { SchemaArbitraries } from '../support/openapi-arbitraries.js';
import { approveDeepLink, callbackTokenOf, deployTestNetworks } from '../support/registration-flow.js';

const SEED = Number(process.env['FUZZ_SEED'] ?? 20_260_605);
const RUNS = Number(process.env['FUZZ_RUNS'] ?? 50);
const TESTNET = '11142220';

type Method = 'get' | 'post';
interface Operation {
  method: Method;
  path: string;
  operation: OpenApiOperation;
}

/** One generated request. */
interface Case {
  path: Record<string, string>;
  query: [string, string][];
  headers: Record<string, string>;
  /** JSON (serialized here), raw text, or nothing. */
  body?: { json: unknown } | { text: string };
  contentType?: string;
}

interface Answer {
  status: number;
  type: string;
  text: string;
  body: unknown;
}

/** What the fuzzer saw, for the closing summary. */
const seen = new Map<string, Map<number, number>>();
const count = (operationId: string, status: number): void => {
  const statuses = seen.get(operationId) ?? new Map<number, number>();
  statuses.set(status, (statuses.get(status) ?? 0) + 1);
  seen.set(operationId, statuses);
};

describe('OpenAPI-driven fuzzing of every operation', () => {
  let server: Server;
  let setupApp: Express;
  let origin: string;
  let doc: OpenApiDocument;
  let arbitraries: SchemaArbitraries;
  let sessionTokens: string[];
  const validators = new Map<string, ValidateFunction>();
  let ajv: Ajv2020;
  /** Each request from its own client address: the per-client limits count per address, and would answer 429 to everything. */
  let client = 0;
  const nextClient = (): string => {
    client += 1;
    return `10.${(client >> 16) & 255}.${(client >> 8) & 255}.${client & 255}`;
  };

  beforeAll(async () => {
    const networks = await deployTestNetworks();
    const { app } = testApp(networks.chains, { publicUrl: 'http://127.0.0.1:3000' });
    server = createServer(app);
    setupApp = app;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const served = await request(server).get('/openapi.json');
    expect(served.status).toBe(200);
    doc = served.body as OpenApiDocument;
    const checked = await new Validator().validate(structuredClone(doc) as unknown as Parameters<Validator['validate']>[0]);
    expect(checked.errors ?? []).toEqual([]);

    ajv = new Ajv2020({ strict: true, allErrors: true });
    ajv.addKeyword('components');
    ajv.addFormat('date-time', (value: string) => !Number.isNaN(Date.parse(value)));
    ajv.addFormat('uri', (value: string) => URL.canParse(value));
    ajv.addSchema({ $id: 'api', components: doc.components });

    // Values that mean something to the service: a registered agent, and live sessions of every kind.
    const human = privateKeyToAccount(generatePrivateKey()).address;
    const registered = await request(server).post('/api/agent/register').send({ mode: 'linked', network: 'testnet', humanAddress: human });
    expect(registered.status).toBe(200);
    await approveDeepLink(setupApp, networks, registered.body.deepLink as string);
    const completed = await request(server).get('/api/agent/register/status').query({ token: registered.body.sessionToken });
    expect(completed.body.stage).toBe('completed');
    const agentId = completed.body.agentId as number;
    const agentAddress = completed.body.agentAddress as string;
    const agent = await networks.testnet.gateway.registry.readAgent(BigInt(agentId));
    const waiting = await request(server).post('/api/agent/register').send({ mode: 'wallet-free', network: 'testnet' });
    const opened = await Promise.all([
      request(server).post('/api/agent/identify').send({ network: 'testnet' }),
      request(server).post('/api/agent/refresh').send({ network: 'testnet', agentId }),
      request(server).post('/api/agent/deregister').send({ network: 'testnet', agentAddress }),
    ]);
    for (const res of [waiting, ...opened]) expect(res.status, JSON.stringify(res.body)).toBe(200);
    const tokenOfScanUrl = (url: string): string => new URL(url).searchParams.get('token') ?? '';
    sessionTokens = [
      completed.body.sessionToken as string,
      waiting.body.sessionToken as string,
      tokenOfScanUrl(waiting.body.scanUrl as string),
      callbackTokenOf(waiting.body.deepLink as string),
      ...opened.map((res) => res.body.sessionToken as string),
      'not-a-token',
      `${(waiting.body.sessionToken as string).slice(0, -2)}AA`,
    ];
    const pubkey = bytesToHex(ed25519.getPublicKey(ed25519.utils.randomSecretKey()));
    const verifyTag = String((await request(server).get(`/api/agent/verify/${TESTNET}/${agentId}`)).headers.etag ?? '"none"');
    arbitraries = new SchemaArbitraries(doc.components.schemas, {
      chainId: [TESTNET, '42220'],
      chain: [TESTNET],
      agentId: [agentId, String(agentId)],
      address: [human, human.toLowerCase()],
      humanAddress: [human],
      agentAddress: [agentAddress],
      nullifier: [agent!.humanNullifier.toString()],
      network: ['testnet'],
      pubkey: [pubkey],
      ed25519Pubkey: [pubkey],
      agentKey: [addressAgentKey(agentAddress as `0x${string}`)],
      token: sessionTokens,
      format: ['png'],
      method: [...A2A_RPC_METHODS],
      // conditional GETs: any current answer, the agent's verification as it is now, a list naming it
      'If-None-Match': ['*', verifyTag, `W/${verifyTag}, "other"`],
    });
  }, 120_000);

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    const lines = [...seen].map(([id, statuses]) => `  ${id}: ${[...statuses].map(([status, n]) => `${status}×${n}`).join(' ')}`);
    const total = [...seen.values()].reduce((sum, statuses) => sum + [...statuses.values()].reduce((a, b) => a + b, 0), 0);
    console.log(`OpenAPI fuzz: ${seen.size} operations, ${total} requests, seed ${SEED}, ${RUNS} runs each\n${lines.join('\n')}`);
  });

  const operations = (): Operation[] =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({ method: method as Method, path, operation: operation as OpenApiOperation })),
    );

  /** Headers for the operation's security alternatives: the right ones, wrong ones, or none. */
  function securityHeaders(operation: OpenApiOperation): fc.Arbitrary<{ headers: Record<string, string>; query: [string, string][] }> {
    const schemes = new Set((operation.security ?? []).flatMap((alternative) => Object.keys(alternative)));
    const none = fc.constant({ headers: {}, query: [] as [string, string][] });
    const parts: fc.Arbitrary<{ headers: Record<string, string>; query: [string, string][] }>[] = [none];
    const token = fc.oneof(fc.constantFrom(...sessionTokens), fc.string({ maxLength: 60 }));
    if (schemes.has('sessionToken') || schemes.has('sessionTokenQuery')) {
      parts.push(
        token.map((t) => ({ headers: { Authorization: `Bearer ${t}` }, query: [] })),
        token.map((t) => ({ headers: {}, query: [['token', t]] as [string, string][] })),
        fc.tuple(token, token).map(([a, b]) => ({ headers: { Authorization: `Bearer ${a}` }, query: [['token', b]] as [string, string][] })),
        fc.string({ maxLength: 30 }).map((value) => ({ headers: { Authorization: value }, query: [] })),
      );
    }
    if (schemes.has('agentSignature')) {
      const hex = (bytes: number) => fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => bytesToHex(b));
      const timestamp = fc.oneof(fc.constant(String(Date.now())), fc.string({ maxLength: 20 }), fc.integer({ min: 0, max: 2 ** 50 }).map(String));
      parts.push(
        fc
          .tuple(hex(65), timestamp)
          .map(([signature, ts]) => ({ headers: { 'x-svc-agent-signature': signature, 'x-svc-agent-timestamp': ts }, query: [] })),
        fc.tuple(hex(64), timestamp, hex(32)).map(([signature, ts, key]) => ({
          headers: { 'x-svc-agent-signature': signature, 'x-svc-agent-timestamp': ts, 'x-svc-agent-keytype': 'ed25519', 'x-svc-agent-key': key },
          query: [],
        })),
        fc.string({ maxLength: 40 }).map((signature) => ({ headers: { 'x-svc-agent-signature': signature }, query: [] })),
      );
    }
    if (schemes.has('aaProxyToken')) {
      parts.push(fc.string({ maxLength: 200 }).map((value) => ({ headers: { 'x-aa-proxy-token': value }, query: [] })));
    }
    return fc.oneof(...parts);
  }

  function caseOf({ method, operation }: Operation): fc.Arbitrary<Case> {
    const parameters = operation.parameters ?? [];
    // A path parameter is a non-empty segment: an empty one is another path, not this operation.
    const pathValues = fc.record(
      Object.fromEntries(
        parameters
          .filter((p) => p.in === 'path')
          .map((p) => [
            p.name,
            arbitraries
              .any(p.schema, p.name)
              .map(String)
              .filter((value) => value !== ''),
          ]),
      ),
    ) as fc.Arbitrary<Record<string, string>>;
    const queryParameters = parameters.filter((p) => p.in === 'query');
    const queryValue = (p: (typeof queryParameters)[number]) =>
      fc.oneof(
        arbitraries.any(p.schema, p.name).map((value) => [String(value)]),
        // repeated: ?name=a&name=b reaches the route as an array
        fc.tuple(arbitraries.any(p.schema, p.name), arbitraries.any(p.schema, p.name)).map(([a, b]) => [String(a), String(b)]),
      );
    const query = fc
      .tuple(
        ...queryParameters.map((p) =>
          p.required
            ? queryValue(p).map((values) => ({ name: p.name, values }))
            : fc.option(queryValue(p).map((values) => ({ name: p.name, values }))),
        ),
        fc.option(fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ maxLength: 8 }))),
      )
      .map((entries) => {
        const extra = entries.pop() as [string, string] | null;
        const pairs = (entries as ({ name: string; values: string[] } | null)[]).flatMap((entry) =>
          entry ? entry.values.map((value): [string, string] => [entry.name, value]) : [],
        );
        return extra ? [...pairs, extra] : pairs;
      });

    // header parameters (If-None-Match): sent or not; a header carries visible ASCII only
    const headerParameters = parameters.filter((p) => p.in === 'header');
    const headerValues = fc.record(
      Object.fromEntries(
        headerParameters.map((p) => [p.name, arbitraries.any(p.schema, p.name).map((value) => String(value).replace(/[^\x20-\x7e]/g, ''))]),
      ),
      { requiredKeys: headerParameters.filter((p) => p.required).map((p) => p.name) },
    ) as fc.Arbitrary<Record<string, string>>;

    const bodySchema = operation.requestBody?.content['application/json']?.schema;
    const json = bodySchema
      ? fc.oneof(
          { arbitrary: arbitraries.valid(bodySchema), weight: 4 },
          { arbitrary: arbitraries.invalid(bodySchema), weight: 3 },
          // one string member about 180 kB long: big, but under the 200 kB limit
          {
            arbitrary: fc
              .tuple(arbitraries.valid(bodySchema), fc.integer({ min: 20_000, max: 180_000 }))
              .map(([value, size]) => hugeMember(value, size)),
            weight: 1,
          },
        )
      : fc.jsonValue({ maxDepth: 2 });
    const body = fc.oneof(
      { arbitrary: json.map((value) => ({ json: value })), weight: 6 },
      { arbitrary: fc.constantFrom('', '{', '[', 'null', '"x"', '{"a":', '\u0000', '{}garbage').map((text) => ({ text })), weight: 1 },
      { arbitrary: fc.string({ unit: 'grapheme', maxLength: 50 }).map((text) => ({ text })), weight: 1 },
    );
    const contentType = fc.oneof(
      { arbitrary: fc.constant('application/json'), weight: 8 },
      {
        arbitrary: fc.constantFrom(
          'application/json; charset=utf-8',
          'text/plain',
          'application/x-www-form-urlencoded',
          'application/octet-stream',
          'application/json; charset=utf-16',
          'application/json; charset=latin1',
          'application/json; charset=x-unknown',
          'text/plain; charset=x-unknown',
          'application/JSON',
        ),
        weight: 2,
      },
    );
    const extraHeaders = fc.record(
      {
        'A2A-Version': fc.constantFrom('1.0', '0.3', '2.0', ''),
        // the service's own origin (the account-abstraction proxy's default rule), another, and a sandboxed page's
        Origin: fc.constantFrom(origin, origin, 'https://elsewhere.example', 'null'),
        Accept: fc.constantFrom('application/json', 'text/event-stream', '*/*', 'image/png'),
        // the body is sent as plain text whatever this says: a decoder fails on it, or there is none (rarely, so
        // that most requests reach the route's own checks)
        'Content-Encoding': fc.oneof(
          { arbitrary: fc.constant('identity'), weight: 6 },
          { arbitrary: fc.constantFrom('gzip', 'br', 'x-unknown'), weight: 1 },
        ),
      },
      { requiredKeys: [] },
    );
    // a GET has no body; a POST without a documented one still gets one at times (the body is then ignored or refused)
    const sendsBody = method === 'post';
    return fc
      .record({
        path: pathValues,
        query,
        security: securityHeaders(operation),
        headers: extraHeaders,
        parameterHeaders: headerValues,
        body: sendsBody ? fc.option(body, { freq: operation.requestBody ? 8 : 2 }) : fc.constant(null),
        contentType,
      })
      .map(({ path: values, query: pairs, security, headers, parameterHeaders, body: sent, contentType: type }) => ({
        path: values,
        query: [...pairs, ...security.query],
        headers: { ...headers, ...parameterHeaders, ...security.headers },
        ...(sent ? { body: sent, contentType: type } : {}),
      }));
  }

  async function send({ method, path }: Operation, c: Case): Promise<Answer> {
    const url = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(c.path[name] ?? ''));
    const search = new URLSearchParams(c.query).toString();
    let req = request(server)
      [method](search ? `${url}?${search}` : url)
      .timeout({ response: 20_000, deadline: 25_000 });
    req = req.set('X-Forwarded-For', nextClient());
    for (const [name, value] of Object.entries(c.headers)) req = req.set(name, value);
    if (c.body) {
      const text = 'json' in c.body ? (JSON.stringify(c.body.json) ?? 'null') : c.body.text;
      req = req.set('Content-Type', c.contentType ?? 'application/json').send(text);
    }
    const res = await req.buffer(true).parse((response, done) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => done(null, Buffer.concat(chunks)));
    });
    const raw = res.body as Buffer;
    const type = String(res.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim()
      .toLowerCase();
    const text = type.startsWith('image/') ? `<${raw.length} bytes>` : raw.toString('utf8');
    let body: unknown;
    if (type === 'application/json') {
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
    }
    return { status: res.status, type, text, body };
  }

  /** What is wrong with the answer, measured against the document; undefined when nothing is. */
  function problemOf({ operation }: Operation, answer: Answer): string | undefined {
    const documented = operation.responses[String(answer.status)];
    if (answer.status === 500) return 'a 500: the chains are healthy, so this is a failure of the service';
    if (!documented)
      return `status ${answer.status} is not documented for this operation (documented: ${Object.keys(operation.responses).join(', ')})`;
    const content = documented.content ?? {};
    const types = Object.keys(content);
    const empty = answer.text === '' && (answer.status === 204 || answer.status === 304 || (answer.status >= 300 && answer.status < 400));
    if (answer.status >= 400 && answer.type !== 'application/json') return `an error answered as ${answer.type || 'no content type'}, not JSON`;
    if (types.length === 0 || empty) return undefined;
    if (!types.includes(answer.type)) return `answered ${answer.type || 'no content type'}; the document lists ${types.join(', ')}`;
    const schema = content[answer.type]?.schema;
    if (answer.type !== 'application/json' || !schema) return undefined;
    if (answer.body === undefined) return 'a JSON content type with a body that is not JSON';
    const target = typeof schema['$ref'] === 'string' ? `api${schema['$ref']}` : undefined;
    const key = target ?? JSON.stringify(schema);
    let validate = validators.get(key);
    if (!validate) {
      validate = target ? ajv.compile({ $ref: target }) : ajv.compile(schema);
      validators.set(key, validate);
    }
    if (!validate(answer.body)) return `the body does not match the documented schema: ${ajv.errorsText(validate.errors)}`;
    return undefined;
  }

  const describeCase = (op: Operation, c: Case, answer?: Answer): string => {
    const body = c.body ? ('json' in c.body ? JSON.stringify(c.body.json) : JSON.stringify(c.body.text)) : '(none)';
    return [
      `${op.method.toUpperCase()} ${op.path} ${JSON.stringify(c.path)} query ${JSON.stringify(c.query)}`,
      `headers ${JSON.stringify(c.headers)}${c.body ? ` content-type ${c.contentType}` : ''}`,
      `body ${body.length > 400 ? `${body.slice(0, 400)}… (${body.length} characters)` : body}`,
      ...(answer ? [`answer ${answer.status} ${answer.type}: ${answer.text.slice(0, 500)}`] : []),
    ].join('\n    ');
  };

  it('answers every generated request as the document says: a documented status, never a 500, bodies matching their schemas', async () => {
    const started = Date.now();
    const failures: string[] = [];
    const all = operations();
    expect(all.length).toBeGreaterThan(40);
    for (const op of all) {
      const property = fc.asyncProperty(caseOf(op), async (c) => {
        const answer = await send(op, c);
        count(op.operation.operationId, answer.status);
        const problem = problemOf(op, answer);
        if (problem) throw new Error(`${problem}\n    ${describeCase(op, c, answer)}`);
      });
      const result = await fc.check(property, { seed: SEED, numRuns: RUNS, endOnFailure: true });
      if (result.failed) {
        const error = result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
        failures.push(
          `${op.method.toUpperCase()} ${op.path} failed after ${result.numRuns} runs (seed ${result.seed}, path "${result.counterexamplePath}"):\n  ${error}`,
        );
      }
    }
    console.log(`OpenAPI fuzz run: ${all.length} operations × ${RUNS} runs in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    expect(failures, `reproduce with FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS}`).toEqual([]);
  }, 180_000);
});

/** `value` with its first string member (or itself, when it is an object without one) made `size` characters long. */
function hugeMember(value: unknown, size: number): unknown {
  const huge = 'x'.repeat(size);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { huge };
  const entries = Object.entries(value);
  const index = entries.findIndex(([, member]) => typeof member === 'string');
  if (index < 0) return { ...value, huge };
  entries[index] = [entries[index]![0], huge];
  return Object.fromEntries(entries);
}
