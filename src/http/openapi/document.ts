// The OpenAPI 3.1 document, generated from the routes' own descriptions (RouteDoc) with zod's JSON Schema
// conversion, so the document shows exactly the schemas the routes validate with and answer with.
//
// Schemas become components: request-side schemas (bodies, path and query parameters) are converted as zod
// input types, response schemas as output types. A schema named with `.meta({ id })` keeps its name, and so
// does a named schema nested in another one; an unnamed top-level schema is named after its operation. A
// schema used on both sides whose input and output differ (defaults, transforms) gets an `...Input` twin.
import { z } from 'zod';
import { errorSchema } from '../schemas/registration.js';
import type { ResponseDoc, RouteDoc } from './route-doc.js';

export type JsonSchema = Record<string, unknown>;

export interface OpenApiOperation {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  parameters?: OpenApiParameter[];
  requestBody?: { required: boolean; content: Record<string, { schema: JsonSchema }> };
  responses: Record<
    string,
    { description: string; headers?: Record<string, { description: string; schema: JsonSchema }>; content?: Record<string, { schema?: JsonSchema }> }
  >;
  security?: Record<string, string[]>[];
}

export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  description?: string;
  schema: JsonSchema;
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description?: string; license?: { name: string; identifier: string } };
  servers: { url: string; description?: string }[];
  tags: { name: string; description?: string }[];
  paths: Record<string, Partial<Record<RouteDoc['method'], OpenApiOperation>>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, JsonSchema> };
}

export interface DocumentOptions {
  title: string;
  version: string;
  /** The service's public base URL: the document's one server. */
  publicUrl: string;
  description?: string;
  /** Descriptions of the tags the routes use, in the order they should be shown. */
  tags?: { name: string; description: string }[];
}

const REF_PREFIX = '#/components/schemas/';
const ref = (id: string): JsonSchema => ({ $ref: `${REF_PREFIX}${id}` });
/** Where zod puts named schemas that are nested in a converted one without being converted themselves. */
const SHARED_REF = /^#\/components\/schemas\/__shared#\/\$defs\/(.+)$/;
const SESSION_SCHEME = 'sessionToken';
const SESSION_QUERY_SCHEME = 'sessionTokenQuery';
const SIGNATURE_SCHEME = 'agentSignature';
const TIMESTAMP_SCHEME = 'agentTimestamp';
const RFC9421_INPUT_SCHEME = 'httpSignatureInput';
const RFC9421_SIGNATURE_SCHEME = 'httpSignature';
const PROXY_TOKEN_SCHEME = 'aaProxyToken';

type Io = 'input' | 'output';

/** The schemas of one side (request or response) and the names they get. */
class Side {
  readonly registry = z.registry<{ id: string }>();
  private readonly ids = new Map<z.ZodType, string>();
  private readonly owners = new Map<string, z.ZodType>();

  constructor(readonly io: Io) {}

  /** Registers `schema` (once) and returns its component name: its own `.meta({ id })`, else `fallback`. */
  name(schema: z.ZodType, fallback: string): string {
    const known = this.ids.get(schema);
    if (known) return known;
    const own = z.globalRegistry.get(schema)?.id;
    const id = typeof own === 'string' && own !== '' ? own : fallback;
    if (this.owners.has(id)) throw new Error(`OpenAPI: two different ${this.io} schemas are both named ${id}; give one another .meta({ id })`);
    this.owners.set(id, schema);
    this.ids.set(schema, id);
    this.registry.add(schema, { id });
    return id;
  }

  /** All registered schemas as JSON Schema components, nested named schemas hoisted beside them. */
  convert(): Record<string, JsonSchema> {
    if (this.ids.size === 0) return {};
    const { schemas } = z.toJSONSchema(this.registry, {
      target: 'draft-2020-12',
      io: this.io,
      unrepresentable: 'throw',
      uri: (id) => `${REF_PREFIX}${id}`,
    }) as { schemas: Record<string, JsonSchema> };
    const out: Record<string, JsonSchema> = {};
    const rename = (id: string): string => (/^_*schema\d+$/.test(id) ? `${this.io === 'input' ? 'Input' : 'Output'}${id.replace(/^_*s/, 'S')}` : id);
    const add = (id: string, schema: JsonSchema): void => {
      if (id in out) throw new Error(`OpenAPI: two different ${this.io} schemas are both named ${id}`);
      out[id] = stripSchemaIds(schema);
    };
    for (const [id, schema] of Object.entries(schemas)) {
      if (id !== '__shared') {
        add(id, schema);
        continue;
      }
      const defs = (schema['$defs'] ?? {}) as Record<string, JsonSchema>;
      for (const [defId, def] of Object.entries(defs)) add(rename(defId), def);
    }
    return mapRefs(out, (target) => {
      const shared = SHARED_REF.exec(target);
      return shared ? `${REF_PREFIX}${rename(decodeURIComponent(shared[1] as string))}` : target;
    });
  }
}

function stripSchemaIds(schema: JsonSchema): JsonSchema {
  const { $schema: _schema, $id: _id, id: _metaId, ...rest } = schema;
  return rest;
}

/** A deep copy of `value` with every `$ref` string passed through `map`. */
function mapRefs<T>(value: T, map: (ref: string) => string): T {
  if (Array.isArray(value)) return value.map((item: unknown) => mapRefs(item, map)) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, key === '$ref' && typeof item === 'string' ? map(item) : mapRefs(item, map)]),
  ) as T;
}

/** JSON with sorted keys, to compare two schemas. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
}

/**
 * One component set from both sides. A name both sides use for different JSON becomes `<name>Input` on the
 * request side (repeated until stable, since renaming a nested schema changes its parents).
 */
function mergeSides(input: Record<string, JsonSchema>, output: Record<string, JsonSchema>) {
  const twins = new Set<string>();
  const inputRef = (target: string): string => {
    const name = target.startsWith(REF_PREFIX) ? target.slice(REF_PREFIX.length) : undefined;
    return name !== undefined && twins.has(name) ? `${REF_PREFIX}${name}Input` : target;
  };
  for (let changed = true; changed; ) {
    changed = false;
    for (const [name, schema] of Object.entries(input)) {
      if (name in output && !twins.has(name) && canonical(mapRefs(schema, inputRef)) !== canonical(output[name])) {
        twins.add(name);
        changed = true;
      }
    }
  }
  const schemas: Record<string, JsonSchema> = { ...output };
  for (const [name, schema] of Object.entries(input)) {
    if (name in output && !twins.has(name)) continue;
    const final = twins.has(name) ? `${name}Input` : name;
    if (final in schemas) throw new Error(`OpenAPI: the schema name ${final} is taken; rename one of the schemas`);
    schemas[final] = mapRefs(schema, inputRef);
  }
  return { schemas, inputRef };
}

const words = (text: string): string[] => text.split(/[^A-Za-z0-9]+/).filter((word) => word !== '');
const pascal = (text: string): string =>
  words(text)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('');

/** getAgentInfoByChainIdByAgentId for GET /api/agent/info/{chainId}/{agentId}. */
export function operationIdOf(route: Pick<RouteDoc, 'method' | 'path'>): string {
  const segments = route.path.split('/').filter((segment, index) => segment !== '' && !(index === 1 && segment === 'api'));
  const name = segments.map((segment) => (/^\{.+\}$/.test(segment) ? `By${pascal(segment)}` : pascal(segment))).join('');
  return `${route.method}${name}`;
}

const pathParamsOf = (path: string): string[] => [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] as string);

function responseContent(doc: ResponseDoc, schemaRef: JsonSchema | undefined): Record<string, { schema?: JsonSchema }> | undefined {
  const content: Record<string, { schema?: JsonSchema }> = {};
  // a JSON media type of its own (application/...+json) carries the schema itself
  const jsonType = doc.contentType?.endsWith('+json') ? doc.contentType : 'application/json';
  if (schemaRef) content[jsonType] = { schema: schemaRef };
  if (doc.contentType && doc.contentType !== jsonType)
    content[doc.contentType] = doc.contentType.startsWith('text/') ? { schema: { type: 'string' } } : {};
  return Object.keys(content).length > 0 ? content : undefined;
}

const isOptional = (schema: z.ZodType): schema is z.ZodOptional<z.ZodType> => schema instanceof z.ZodOptional;

/** What the app's body parsers answer, before any route, to a POST body they cannot read. */
const parserAnswers = (bodyLimit: number | undefined): Record<number, ResponseDoc> => ({
  413: { description: `The body is over ${bodyLimit === undefined ? '200 kB' : `${bodyLimit} bytes`}` },
  415: { description: 'The body has a charset or a Content-Encoding the service cannot decode (the message says which)' },
});

/** The route's answers, and the body parsers' where the app parses its body. */
function answersOf(route: RouteDoc): Record<number, ResponseDoc> {
  return route.method === 'post' && !route.ownBody ? { ...parserAnswers(route.bodyLimit), ...route.responses } : route.responses;
}

/**
 * The session token is required, in one of its transports: the Authorization header or ?token= (alternatives, each
 * enough). A token that may come in the JSON body instead cannot be a security scheme: the empty alternative says
 * the request may go without either, and the body schema says where the token is then.
 */
function sessionTokenSecurity(transports: NonNullable<RouteDoc['sessionToken']>): Record<string, string[]>[] {
  return [{ [SESSION_SCHEME]: [] }, { [SESSION_QUERY_SCHEME]: [] }, ...(transports === 'query-bearer-or-body' ? [{}] : [])];
}

/** Generates the document. Throws when the descriptions are inconsistent (path parameters, names). */
export function openApiDocument(routes: readonly RouteDoc[], options: DocumentOptions): OpenApiDocument {
  const input = new Side('input');
  const output = new Side('output');
  const parameterObjects = new Set<string>();

  // First pass: name every schema, so the conversions see them all.
  const planned = routes.map((route) => {
    const operationId = operationIdOf(route);
    const base = pascal(operationId);
    const declared = Object.keys(route.params?.shape ?? {});
    const inPath = pathParamsOf(route.path);
    if (declared.length !== inPath.length || inPath.some((name) => !declared.includes(name))) {
      throw new Error(
        `OpenAPI: ${route.method.toUpperCase()} ${route.path} has path parameters {${inPath.join(', ')}} but params describes [${declared.join(', ')}]`,
      );
    }
    const params = route.params ? input.name(route.params, `${base}PathParameters`) : undefined;
    const query = route.query ? input.name(route.query, `${base}QueryParameters`) : undefined;
    const headers = route.headers ? input.name(route.headers, `${base}HeaderParameters`) : undefined;
    for (const name of [params, query, headers]) if (name) parameterObjects.add(name);
    const body = route.body
      ? { required: !isOptional(route.body), name: input.name(isOptional(route.body) ? route.body.unwrap() : route.body, `${base}Request`) }
      : undefined;
    const responses = Object.entries(answersOf(route)).map(([status, doc]) => {
      const code = Number(status);
      const schema = doc.schema ?? (code >= 400 && !doc.contentType ? errorSchema : undefined);
      const headerNames = Object.entries(doc.headers ?? {}).map(
        ([header, { schema: headerSchema }]) => [header, output.name(headerSchema, `${base}Response${status}${pascal(header)}Header`)] as const,
      );
      return { status, doc, name: schema ? output.name(schema, `${base}Response${code === 200 ? '' : status}`) : undefined, headerNames };
    });
    return { route, operationId, params, query, headers, body, responses };
  });

  const { schemas, inputRef } = mergeSides(input.convert(), output.convert());
  const inputSchema = (name: string): JsonSchema => {
    const resolved = inputRef(`${REF_PREFIX}${name}`).slice(REF_PREFIX.length);
    const schema = schemas[resolved];
    if (!schema) throw new Error(`OpenAPI: no component ${resolved}`);
    return schema;
  };

  const parametersOf = (name: string | undefined, where: OpenApiParameter['in']): OpenApiParameter[] => {
    if (!name) return [];
    const object = inputSchema(name);
    const required = new Set((object['required'] ?? []) as string[]);
    return Object.entries((object['properties'] ?? {}) as Record<string, JsonSchema>).map(([param, schema]) => {
      const { description, ...rest } = schema;
      return {
        name: param,
        in: where,
        required: where === 'path' || required.has(param),
        ...(typeof description === 'string' ? { description } : {}),
        schema: rest,
      };
    });
  };

  const paths: OpenApiDocument['paths'] = {};
  for (const { route, operationId, params, query, headers, body, responses } of planned) {
    const parameters = [...parametersOf(params, 'path'), ...parametersOf(query, 'query'), ...parametersOf(headers, 'header')];
    const operation: OpenApiOperation = {
      operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: route.tags,
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(body
        ? { requestBody: { required: body.required, content: { 'application/json': { schema: { $ref: inputRef(`${REF_PREFIX}${body.name}`) } } } } }
        : {}),
      responses: Object.fromEntries(
        responses.map(({ status, doc, name, headerNames }) => {
          const content = responseContent(doc, name ? ref(name) : undefined);
          const documented = headerNames.map(([header, schemaName]) => [
            header,
            { description: doc.headers?.[header]?.description ?? '', schema: ref(schemaName) },
          ]);
          return [
            status,
            {
              description: doc.description,
              ...(documented.length > 0 ? { headers: Object.fromEntries(documented) } : {}),
              ...(content ? { content } : {}),
            },
          ];
        }),
      ),
      ...(route.sessionToken ? { security: sessionTokenSecurity(route.sessionToken) } : {}),
      ...(route.signedRequest
        ? {
            security: [
              { [SIGNATURE_SCHEME]: [], [TIMESTAMP_SCHEME]: [] },
              { [RFC9421_INPUT_SCHEME]: [], [RFC9421_SIGNATURE_SCHEME]: [] },
              ...(route.signedRequest === 'optional' ? [{}] : []),
            ],
          }
        : {}),
      ...(route.proxyToken ? { security: [{ [PROXY_TOKEN_SCHEME]: [] }] } : {}),
    };
    const item = paths[route.path] ?? {};
    paths[route.path] = item;
    if (item[route.method]) throw new Error(`OpenAPI: ${route.method.toUpperCase()} ${route.path} is described twice`);
    item[route.method] = operation;
  }

  // Parameter objects live in the operations' parameters, not as components.
  for (const name of parameterObjects) {
    const resolved = inputRef(`${REF_PREFIX}${name}`).slice(REF_PREFIX.length);
    delete schemas[resolved];
  }

  const used = [...new Set(routes.flatMap((route) => route.tags))];
  const described = options.tags ?? [];
  const tags = [
    ...described.filter((tag) => used.includes(tag.name)),
    ...used.filter((name) => !described.some((tag) => tag.name === name)).map((name) => ({ name })),
  ];

  return {
    openapi: '3.1.0',
    info: {
      title: options.title,
      version: options.version,
      ...(options.description ? { description: options.description } : {}),
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: options.publicUrl }],
    tags,
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
      securitySchemes: {
        [SIGNATURE_SCHEME]: {
          type: 'apiKey',
          in: 'header',
          name: 'x-svc-agent-signature',
          description:
            'Signed agent request: the agent signs keccak256(timestamp + METHOD + path?query + keccak256(body) as 0x-hex) — ' +
            'personal_sign for secp256k1 agents; Ed25519 agents sign the 32 bytes and add x-svc-agent-keytype: ed25519 and ' +
            'x-svc-agent-key (the raw public key). x-svc-agent-address is informational.',
        },
        [TIMESTAMP_SCHEME]: {
          type: 'apiKey',
          in: 'header',
          name: 'x-svc-agent-timestamp',
          description: 'Unix milliseconds (decimal digits) within 5 minutes of the server clock; part of the signed message.',
        },
        [RFC9421_INPUT_SCHEME]: {
          type: 'apiKey',
          in: 'header',
          name: 'Signature-Input',
          description:
            'RFC 9421 HTTP Message Signature, the alternative to the x-svc-agent-* headers. Covered components: @method, @authority, ' +
            '@path, @query, content-digest (RFC 9530, when there is a body) and signature-agent (when sent); parameters created, ' +
            'expires (at most 5 minutes later), nonce (once per agent) and keyid. secp256k1 agents use ERC-8128 ' +
            '(keyid="erc8128:<chainId>:<address>", EIP-191 over the signature base); Ed25519 agents use Web Bot Auth ' +
            '(alg="ed25519", keyid = the JWK thumbprint, tag="web-bot-auth", Signature-Agent naming their key directory ' +
            'GET /api/agent/key-directory/{chainId}/{agentId}). A malformed Signature-Input is 400, a failed check 403 naming it, a ' +
            'reused nonce 409.',
        },
        [RFC9421_SIGNATURE_SCHEME]: {
          type: 'apiKey',
          in: 'header',
          name: 'Signature',
          description: 'The RFC 9421 signature, under the label Signature-Input names.',
        },
        [PROXY_TOKEN_SCHEME]: {
          type: 'apiKey',
          in: 'header',
          name: 'x-aa-proxy-token',
          description: 'A token from POST /api/aa/token, for the same chain, client address and User-Agent; it lives 90 s by default.',
        },
        [SESSION_SCHEME]: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWE',
          description:
            'The session token of a registration (or other) session, as Authorization: Bearer <token>; or as ?token= (sessionTokenQuery). ' +
            'Without one the answer is 400 naming the transports; an altered or foreign token is 401, an expired one 410.',
        },
        [SESSION_QUERY_SCHEME]: {
          type: 'apiKey',
          in: 'query',
          name: 'token',
          description: 'The session token as the query parameter token (the deep link and the scan URL carry it this way).',
        },
      },
    },
  };
}
