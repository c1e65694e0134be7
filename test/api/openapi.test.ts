// The OpenAPI document: a valid OpenAPI 3.1 document, covering exactly the routes the app has, generated
// from the routes' own schemas; and the app's real answers conform to it. The public GET endpoints are
// taken from the document itself, so a new endpoint is checked as soon as it is documented (and the
// coverage test makes sure it is).

import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { Express } from 'express';
import request from 'supertest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MCP_PATH, STATUS_LIST_PATH } from '../../src/core/endpoints.js';
import { KEY_DIRECTORY_TEMPLATE } from '../../src/core/key-directory.js';
import { accountAbstractionAddresses } from '../../src/devnet/aa/deploy-aa.js';
import type { OpenApiDocument, OpenApiOperation } from '../../src/http/openapi/document.js';
import { DOCS_ASSET_ROUTES } from '../../src/http/routes/docs.js';
import { healthSchema } from '../../src/http/routes/health.js';
import { agentParamsSchema, humanParamsSchema, nullifierParamsSchema } from '../../src/http/schemas/queries.js';
import { disclosuresSchema, registerRequestSchema, registrationStatusSchema } from '../../src/http/schemas/registration.js';
import { newEd25519Agent } from '../support/agents.js';
import { testApp } from '../support/app.js';
import { approveDeepLink, deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';

const TESTNET = 11142220;
const PUBLIC_URL = 'http://127.0.0.1:3000';

type JsonSchema = Record<string, unknown>;

/** Values at and around the shared fields' rules: bounds, leading zeros, other forms. */
const AGENT_IDS = [
  '0',
  '1',
  '01',
  '9',
  '10',
  '9007199254740991',
  '9007199254740992',
  '9999999999999999',
  '99999999999999999',
  '-1',
  '1.0',
  '0x1',
  '',
  ' 1',
];
const NULLIFIERS = [
  '0',
  '00',
  '1',
  '01',
  (2n ** 256n - 1n).toString(),
  (2n ** 256n).toString(),
  `1${'0'.repeat(77)}`,
  `${'9'.repeat(78)}`,
  '-0',
  'abc',
  '',
];
const ONE_CASE_ADDRESSES = [
  `0x${'0'.repeat(40)}`,
  `0x${'0'.repeat(39)}1`,
  '0x52908400098527886e0f7030069857d2e4169ee7',
  '0x52908400098527886E0F7030069857D2E4169EE7',
  `0X${'1'.repeat(40)}`,
  `0x${'1'.repeat(39)}`,
  `0x${'1'.repeat(41)}`,
  `0x${'g'.repeat(40)}`,
  '1'.repeat(42),
];
const MODES = [
  'linked',
  'wallet-free',
  'walletfree',
  'agent-identity',
  'ed25519',
  'ed25519-linked',
  'privy',
  'smartwallet',
  'Linked',
  'verified',
  '',
];
const NETWORKS = ['mainnet', 'testnet', '42220', '11142220', '44787', 'celo-mainnet', 'Mainnet', ''];

interface ListedRoute {
  path: string | RegExp;
  methods?: string[];
  router?: { listRoutes(): ListedRoute[] };
}

/** Every METHOD /path the express app routes, mounted routers included, in OpenAPI path syntax. */
function appRoutes(app: Express): string[] {
  const found: string[] = [];
  const walk = (routes: ListedRoute[], prefix: string): void => {
    for (const route of routes) {
      const path = `${prefix}${route.path === '/' ? '' : String(route.path)}`;
      if (route.router) {
        walk(route.router.listRoutes(), path);
        continue;
      }
      // HEAD comes with GET; '*' is a path's answer to the methods it lacks (405, OPTIONS), not an operation
      const methods = (route.methods ?? []).filter((m) => m !== 'HEAD' && m !== 'OPTIONS' && m !== '*');
      for (const method of methods) found.push(`${method} ${path}`);
    }
  };
  walk((app as unknown as { router: { listRoutes(): ListedRoute[] } }).router.listRoutes(), '');
  return found;
}

const toOpenApiPath = (expressPath: string): string => expressPath.replace(/:(\w+)/g, '{$1}');

/** Every $ref in `value`. */
function refsOf(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) {
    for (const item of value) refsOf(item, out);
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') out.push(item);
      else refsOf(item, out);
    }
  }
  return out;
}

function operations(doc: OpenApiDocument): { path: string; method: string; operation: OpenApiOperation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ path, method, operation: operation as OpenApiOperation })),
  );
}

describe('OpenAPI document', () => {
  let networks: TestNetworks;
  let app: Express;
  let doc: OpenApiDocument;
  let ajv: Ajv2020;
  const validators = new Map<string, ValidateFunction>();

  beforeAll(async () => {
    networks = await deployTestNetworks();
    ({ app } = testApp(networks.chains, { publicUrl: PUBLIC_URL, version: '9.9.9' }));
    const res = await request(app).get('/openapi.json');
    expect(res.status).toBe(200);
    doc = res.body as OpenApiDocument;
    // The components as one schema resource "api", so that their refs (#/components/schemas/X) resolve.
    ajv = new Ajv2020({ strict: true, allErrors: true });
    ajv.addKeyword('components');
    ajv.addFormat('date-time', (value: string) => !Number.isNaN(Date.parse(value)));
    ajv.addFormat('uri', (value: string) => URL.canParse(value));
    ajv.addSchema({ $id: 'api', components: doc.components });
  });

  /** Checks a real answer against the document: its status is documented, and so is its body. */
  function expectConforms(res: request.Response, method: string, path: string): void {
    const operation = doc.paths[path]?.[method as 'get' | 'post'];
    expect(operation, `${method.toUpperCase()} ${path} is documented`).toBeDefined();
    const documented = operation!.responses[String(res.status)];
    expect(documented, `${method.toUpperCase()} ${path} answered ${res.status}, which is not documented: ${res.text?.slice(0, 300)}`).toBeDefined();
    const content = documented!.content ?? {};
    const type = String(res.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    if (Object.keys(content).length === 0) return;
    expect(Object.keys(content), `${method.toUpperCase()} ${path} ${res.status} answered ${type}`).toContain(type);
    const schema = content[type]?.schema;
    if (type !== 'application/json' || !schema) return;
    const target = String(schema['$ref']);
    let validate = validators.get(target);
    if (!validate) {
      validate = ajv.compile({ $ref: `api${target}` });
      validators.set(target, validate);
    }
    const valid = validate(res.body);
    expect(valid ? [] : validate.errors, `${method.toUpperCase()} ${path} ${res.status}: ${JSON.stringify(res.body).slice(0, 500)}`).toEqual([]);
  }

  it('is a valid OpenAPI 3.1 document with the service as its server', async () => {
    const result = await new Validator().validate(structuredClone(doc) as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toMatchObject({ title: 'Agent Identity Registry', version: '9.9.9' });
    expect(doc.servers).toEqual([{ url: PUBLIC_URL }]);
  });

  it('resolves every $ref, names every operation once and lists every path parameter', () => {
    for (const target of refsOf(doc)) {
      expect(target).toMatch(/^#\/components\/schemas\//);
      expect(doc.components.schemas, target).toHaveProperty([target.slice('#/components/schemas/'.length)]);
    }
    const ids = operations(doc).map(({ operation }) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { path, operation } of operations(doc)) {
      const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const declared = (operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
      expect(declared.sort(), path).toEqual(inPath.sort());
      expect(operation.tags.length, path).toBeGreaterThan(0);
      for (const tag of operation.tags) expect(doc.tags.map((t) => t.name)).toContain(tag);
    }
  });

  it('documents every route the app has, and no route it does not have', () => {
    const routed = appRoutes(app)
      // served but not REST: the docs page's files, and MCP's endpoint (its protocol is MCP's, which discovery names)
      .filter((route) => ![...DOCS_ASSET_ROUTES, MCP_PATH].some((undocumented) => route.endsWith(` ${undocumented}`)))
      .map((route) => {
        const [method, path] = route.split(' ') as [string, string];
        return `${method} ${toOpenApiPath(path)}`;
      });
    const documented = operations(doc).map(({ method, path }) => `${method.toUpperCase()} ${path}`);
    expect(routed.length).toBeGreaterThan(5);
    expect(
      routed.filter((route) => !documented.includes(route)),
      'routes without documentation',
    ).toEqual([]);
    expect(
      documented.filter((route) => !routed.includes(route)),
      'documented operations without a route',
    ).toEqual([]);
  });

  it('is generated from the schemas the routes validate and answer with', () => {
    const json = (schema: z.ZodType) => {
      const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: 'output', target: 'draft-2020-12' }) as Record<string, unknown>;
      return rest;
    };
    const health = doc.components.schemas['Health'] as { properties: Record<string, unknown> };
    expect(Object.keys(health.properties)).toEqual(Object.keys(healthSchema.shape));
    expect(health.properties['status']).toEqual(json(healthSchema.shape.status));
    const register = doc.components.schemas['RegisterRequest'] as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(register.properties)).toEqual(Object.keys(registerRequestSchema.shape));
    expect(register.required).toEqual(['mode']);
    expect(register).not.toHaveProperty('additionalProperties'); // a request is read as its input type
    const status = doc.components.schemas['RegistrationStatus'] as { properties: Record<string, unknown>; additionalProperties: unknown };
    expect(Object.keys(status.properties)).toEqual(Object.keys(registrationStatusSchema.shape));
    expect(status.additionalProperties).toBe(false); // an answer with an undocumented field fails the conformance checks
    expect(doc.components.securitySchemes['sessionToken']).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes['sessionTokenQuery']).toMatchObject({ type: 'apiKey', in: 'query', name: 'token' });
  });

  it("documents the body parsers' refusals on every POST whose body the app parses", () => {
    const posts = operations(doc).filter(({ method }) => method === 'post');
    // the A2A endpoint and the account-abstraction proxy read their own bodies and document their own answers
    const ownBody = ['/api/a2a', '/api/aa/token', '/api/aa/bundler', '/api/aa/paymaster'];
    for (const { path, operation } of posts.filter(({ path }) => !ownBody.includes(path))) {
      expect(Object.keys(operation.responses), path).toEqual(expect.arrayContaining(['400', '413', '415']));
      expect(operation.responses['415']?.content?.['application/json']?.schema).toEqual({ $ref: '#/components/schemas/Error' });
    }
    expect(doc.paths['/api/aa/token']?.post?.responses).not.toHaveProperty('415');
  });

  it('documents the JSON-RPC 2.0 envelope of POST /api/a2a: a request or a batch, answered by an answer or an array of them', () => {
    const operation = doc.paths['/api/a2a']?.post;
    expect(operation?.requestBody?.content['application/json']?.schema).toEqual({ $ref: '#/components/schemas/PostA2aRequest' });
    const request = doc.components.schemas['JsonRpcRequest'] as { properties: Record<string, JsonSchema>; required: string[] };
    expect(request.required).toEqual(['jsonrpc', 'method']);
    expect(request.properties['jsonrpc']).toEqual({ type: 'string', const: '2.0' });
    expect(request.properties['id']).toEqual({ $ref: '#/components/schemas/JsonRpcId' });
    expect(Object.keys(operation?.responses['200']?.content ?? {})).toEqual(['application/json', 'text/event-stream']);
  });

  it('requires the session token, in one of its transports, wherever a session is read', () => {
    const sessionOperations = operations(doc).filter(({ operation }) => JSON.stringify(operation.security ?? []).includes('sessionToken'));
    expect(sessionOperations.length).toBe(14); // status, QR and callback of four kinds of session, and export by GET and POST
    for (const { method, path, operation } of sessionOperations) {
      const bodyToo = method === 'post' && path === '/api/agent/register/export';
      // Bearer or ?token=, each enough; only the export by POST may carry it in its body instead (then neither is sent)
      expect(operation.security, `${method} ${path}`).toEqual([{ sessionToken: [] }, { sessionTokenQuery: [] }, ...(bodyToo ? [{}] : [])]);
      expect(operation.parameters ?? [], `${method} ${path}: the token is a security scheme, not an optional parameter`).not.toContainEqual(
        expect.objectContaining({ name: 'token' }),
      );
      expect(operation.responses['400']?.description, `${method} ${path}`).toMatch(/No session token/);
    }
    const exportBody = doc.components.schemas['ExportRequest'] as { properties: Record<string, { type: string }> };
    expect(exportBody.properties['token']).toMatchObject({ type: 'string' });
  });

  it('documents the conditional GETs of the per-agent answers: the If-None-Match header, the ETag, and 304 without a body', () => {
    const conditional = operations(doc).filter(({ operation }) => (operation.parameters ?? []).some((p) => p.in === 'header'));
    expect(conditional.map(({ method, path }) => `${method} ${path}`).sort()).toEqual(
      [
        '/api/agent/info/{chainId}/{agentId}',
        '/api/agent/verify/{chainId}/{agentId}',
        '/api/cards/{chainId}/{agentId}',
        '/api/reputation/{chainId}/{agentId}',
        '/api/verify-status/{chainId}/{agentId}',
      ].map((path) => `get ${path}`),
    );
    for (const { path, operation } of conditional) {
      expect(operation.parameters, path).toContainEqual(expect.objectContaining({ name: 'If-None-Match', in: 'header', required: false }));
      expect(operation.responses['304'], path).toMatchObject({ headers: { ETag: { schema: { $ref: '#/components/schemas/EntityTag' } } } });
      expect(operation.responses['304']?.content, path).toBeUndefined();
      expect(Object.keys(operation.responses['200']?.headers ?? {}), path).toEqual(['ETag']);
    }
  });

  it('shows the rules of the shared fields: what the pattern or enum allows is what the validator takes', () => {
    const parameter = (path: string, name: string): JsonSchema => {
      const found = doc.paths[path]?.get?.parameters?.find((p) => p.name === name);
      expect(found, `${path} {${name}}`).toBeDefined();
      return found!.schema;
    };
    const property = (component: string, name: string): JsonSchema => {
      const schema = (doc.components.schemas[component] as { properties: Record<string, JsonSchema> }).properties[name];
      expect(schema, `${component}.${name}`).toBeDefined();
      return schema!;
    };
    const fields: [string, JsonSchema, z.ZodType, string[]][] = [
      ['agentId', parameter('/api/agent/info/{chainId}/{agentId}', 'agentId'), agentParamsSchema.shape.agentId, AGENT_IDS],
      [
        'nullifier',
        parameter('/api/agent/agents-by-nullifier/{chainId}/{nullifier}', 'nullifier'),
        nullifierParamsSchema.shape.nullifier,
        NULLIFIERS,
      ],
      ['address', parameter('/api/agent/agents/{chainId}/{address}', 'address'), humanParamsSchema.shape.address, ONE_CASE_ADDRESSES],
      ['humanAddress', property('RegisterRequest', 'humanAddress'), registerRequestSchema.shape.humanAddress.unwrap(), ONE_CASE_ADDRESSES],
      ['mode', property('RegisterRequest', 'mode'), registerRequestSchema.shape.mode, MODES],
      ['network', property('RegisterRequest', 'network'), registerRequestSchema.shape.network.unwrap(), NETWORKS],
      ['minimumAge', property('Disclosures', 'minimumAge'), disclosuresSchema.shape.minimumAge.unwrap(), []],
    ];
    for (const [name, schema, validator, samples] of fields) {
      const allows = ajv.compile(schema);
      for (const value of [...samples, ...[0, 1, 18, 21, 17, -1, 1.5, null, true]]) {
        expect(allows(value), `${name} ${JSON.stringify(value)}: document ${allows(value)}, validator ${validator.safeParse(value).success}`).toBe(
          validator.safeParse(value).success,
        );
      }
    }
    // what a pattern cannot say is in the description, and the validator checks it: EIP-55 checksums
    const address = doc.paths['/api/agent/agents/{chainId}/{address}']?.get?.parameters?.find((p) => p.name === 'address');
    expect(address?.description).toMatch(/EIP-55 checksum/);
    expect(humanParamsSchema.shape.address.safeParse('0x52908400098527886E0F7030069857D2E4169Ee7').success).toBe(false);
  });

  describe('real answers conform to it', () => {
    let agentId: number;
    let humanAddress: string;
    let nullifier: string;
    let scanRef: string;

    beforeAll(async () => {
      // A real agent, registered through the API, whose answers the checks below read.
      humanAddress = privateKeyToAccount(generatePrivateKey()).address;
      const started = await request(app).post('/api/agent/register').send({ mode: 'linked', network: 'testnet', humanAddress });
      expectConforms(started, 'post', '/api/agent/register');
      const token = started.body.sessionToken as string;
      scanRef = decodeURIComponent(new URL(started.body.scanPageUrl as string).pathname.split('/').pop() as string);

      expectConforms(await request(app).get('/api/agent/register/qr').query({ token }), 'get', '/api/agent/register/qr');
      expectConforms(await request(app).get('/api/agent/register/qr').query({ token, format: 'png' }), 'get', '/api/agent/register/qr');
      expectConforms(await request(app).get('/api/agent/register/status').query({ token }), 'get', '/api/agent/register/status');
      expectConforms(await request(app).get('/api/agent/register/export').query({ token }), 'get', '/api/agent/register/export');

      const approval = await approveDeepLink(app, networks, started.body.deepLink as string);
      expectConforms(approval.callback!, 'post', '/api/agent/register/callback');

      const status = await request(app).get('/api/agent/register/status').set('Authorization', `Bearer ${token}`);
      expectConforms(status, 'get', '/api/agent/register/status');
      expect(status.body.stage).toBe('completed');
      agentId = status.body.agentId as number;
      const record = await networks.testnet.gateway.registry.readAgent(BigInt(agentId));
      nullifier = record!.humanNullifier.toString();

      expectConforms(await request(app).get('/api/agent/register/export').query({ token }), 'get', '/api/agent/register/export');
      expectConforms(await request(app).post('/api/agent/register/export').send({ token }), 'post', '/api/agent/register/export');
    });

    it('registration: the session answers and their errors', async () => {
      const agent = privateKeyToAccount(generatePrivateKey()).address;
      expectConforms(
        await request(app).post('/api/agent/register/challenge').send({ mode: 'privy', network: 'testnet', agentAddress: agent, humanAddress }),
        'post',
        '/api/agent/register/challenge',
      );
      expectConforms(
        await request(app).post('/api/agent/register/ed25519-challenge').send({ pubkey: newEd25519Agent().pubkey, network: 'testnet' }),
        'post',
        '/api/agent/register/ed25519-challenge',
      );
      expectConforms(await request(app).post('/api/agent/register').send({ mode: 'nope' }), 'post', '/api/agent/register');
      expectConforms(await request(app).get('/api/agent/register/status').query({ token: 'not-a-token' }), 'get', '/api/agent/register/status');
      expectConforms(await request(app).get('/api/agent/register/status'), 'get', '/api/agent/register/status');
      expectConforms(
        await request(app).post('/api/agent/register/callback').query({ token: 'x' }).send({ status: 'success' }),
        'post',
        '/api/agent/register/callback',
      );
    });

    /** Example values of path and query parameters, by name; a new parameter name needs one here. */
    const examples = (): Record<string, string> => ({
      chainId: String(TESTNET),
      chain: String(TESTNET),
      agentId: String(agentId),
      address: humanAddress,
      nullifier,
      sessionRef: scanRef,
      listId: '0',
    });

    const publicGets = () => operations(doc).filter(({ method, operation }) => method === 'get' && !operation.security && !operation.requestBody);

    /** The path with example values; query parameters: the required ones, and the optional ones named in `optional`. */
    function urlOf(path: string, operation: OpenApiOperation, values: Record<string, string>, optional: string[] = []): string {
      const url = path.replace(/\{(\w+)\}/g, (_, name: string) => {
        expect(values, `an example value for the path parameter ${name} of ${path}`).toHaveProperty([name]);
        return encodeURIComponent(values[name] as string);
      });
      const query = (operation.parameters ?? [])
        .filter((p) => p.in === 'query' && (p.required || optional.includes(p.name)))
        .map((p) => {
          expect(values, `an example value for the query parameter ${p.name} of ${path}`).toHaveProperty([p.name]);
          return `${p.name}=${encodeURIComponent(values[p.name] as string)}`;
        });
      return query.length > 0 ? `${url}?${query.join('&')}` : url;
    }

    it('every public GET endpoint, about a registered agent', async () => {
      const gets = publicGets();
      expect(gets.map(({ path }) => path)).toContain('/api/health');
      for (const { path, operation } of gets) {
        const res = await request(app).get(urlOf(path, operation, examples()));
        // the example agent has a secp256k1 key, and only Ed25519 agents have a key directory (rfc9421-requests.test.ts)
        if (path === KEY_DIRECTORY_TEMPLATE) expect(res.status, res.text).toBe(404);
        // no credential was issued here, so no status list has an entry yet (agent-credential.test.ts serves them)
        else if (path === STATUS_LIST_PATH) expect(res.status, res.text).toBe(404);
        else expect(res.status, `${path}: ${res.text?.slice(0, 300)}`).toBeLessThan(400);
        expectConforms(res, 'get', path);
      }
    });

    it('every public GET endpoint with a chainId, for an unsupported chain', async () => {
      for (const { path, operation } of publicGets().filter(({ operation }) =>
        (operation.parameters ?? []).some((p) => p.name === 'chainId' || p.name === 'chain'),
      )) {
        const res = await request(app).get(urlOf(path, operation, { ...examples(), chainId: '1', chain: '1' }, ['chainId', 'chain']));
        expect(res.status, path).toBe(400);
        expectConforms(res, 'get', path);
      }
    });

    it('every public GET endpoint with an agentId, for an agent that was never minted', async () => {
      for (const { path, operation } of publicGets().filter(({ operation }) => (operation.parameters ?? []).some((p) => p.name === 'agentId'))) {
        const res = await request(app).get(urlOf(path, operation, { ...examples(), agentId: '987654321' }));
        expectConforms(res, 'get', path);
      }
    });
  });

  it('documents the discovery document with ERC-4337 stacks: both account kinds locally, only the EntryPoint at a provider', async () => {
    const local = accountAbstractionAddresses(privateKeyToAccount(generatePrivateKey()).address, privateKeyToAccount(generatePrivateKey()).address);
    const { app: withStacks } = testApp(networks.chains, {
      publicUrl: PUBLIC_URL,
      // the local stack as main passes it: every address it deployed, more than discovery shows
      accountAbstraction: { testnet: local, mainnet: { entryPoint: local.entryPoint } },
    });
    const res = await request(withStacks).get('/.well-known/self-agent-id.json');
    expectConforms(res, 'get', '/.well-known/self-agent-id.json');
    const { testnet, mainnet } = res.body.accountAbstraction;
    expect(testnet).toEqual({
      chainId: TESTNET,
      entryPointVersion: '0.7',
      entryPoint: local.entryPoint,
      accountFactory: local.accountFactory,
      paymaster: local.paymaster,
      account: expect.stringMatching(/^PasskeyAccount: /),
      accounts: [
        { kind: 'passkey', factory: local.accountFactory, description: testnet.account },
        {
          kind: 'simple',
          factory: local.simpleAccountFactory,
          implementation: local.simpleAccountImplementation,
          version: '0.7',
          description: expect.stringMatching(/^SimpleAccount v0\.7 /),
        },
      ],
      tokenUrl: `${PUBLIC_URL}/api/aa/token?chainId=${TESTNET}`,
      bundlerUrl: `${PUBLIC_URL}/api/aa/bundler?chainId=${TESTNET}`,
      paymasterUrl: `${PUBLIC_URL}/api/aa/paymaster?chainId=${TESTNET}`,
    });
    expect(Object.keys(mainnet).sort()).toEqual(['bundlerUrl', 'chainId', 'entryPoint', 'entryPointVersion', 'paymasterUrl', 'tokenUrl']);
  });
});
