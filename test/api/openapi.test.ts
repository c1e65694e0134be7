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
import type { OpenApiDocument, OpenApiOperation } from '../../src/http/openapi/document.js';
import { DOCS_ASSET_ROUTES } from '../../src/http/routes/docs.js';
import { healthSchema } from '../../src/http/routes/health.js';
import { registerRequestSchema, registrationStatusSchema } from '../../src/http/schemas/registration.js';
import { newEd25519Agent } from '../support/agents.js';
import { testApp } from '../support/app.js';
import { approveDeepLink, deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';

const TESTNET = 11142220;
const PUBLIC_URL = 'http://127.0.0.1:3000';

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
      const methods = (route.methods ?? []).filter((m) => m !== 'HEAD' && m !== 'OPTIONS');
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
      .filter((route) => !DOCS_ASSET_ROUTES.some((asset) => route.endsWith(` ${asset}`)))
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
    const statusOperation = doc.paths['/api/agent/register/status']?.get;
    expect(statusOperation?.security).toEqual([{ sessionToken: [] }, {}]);
    expect(statusOperation?.parameters).toContainEqual(expect.objectContaining({ name: 'token', in: 'query', required: false }));
    expect(doc.components.securitySchemes['sessionToken']).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  describe('real answers conform to it', () => {
    let agentId: number;
    let humanAddress: string;
    let nullifier: string;

    beforeAll(async () => {
      // A real agent, registered through the API, whose answers the checks below read.
      humanAddress = privateKeyToAccount(generatePrivateKey()).address;
      const started = await request(app).post('/api/agent/register').send({ mode: 'linked', network: 'testnet', humanAddress });
      expectConforms(started, 'post', '/api/agent/register');
      const token = started.body.sessionToken as string;

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
        expect(res.status, `${path}: ${res.text?.slice(0, 300)}`).toBeLessThan(400);
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
});
