// The cache and CORS policies derived from the route table: a matched route's own, the nearest route's CORS
// group for an unknown path below it, the defaults elsewhere, and never a cache for what no GET route answers.
import { describe, expect, it } from 'vitest';
import { CORS_GROUPS, pathMatcher, type Route } from '../../src/http/route.js';
import { RoutePolicies } from '../../src/http/route-policies.js';

const handler: Route['handler'] = (_req, res) => {
  res.end();
};
const route = (method: Route['method'], path: string, extra: Partial<Route> = {}): Route => ({
  method,
  path,
  summary: path,
  tags: ['Test'],
  responses: {},
  handler,
  ...extra,
});

const policies = new RoutePolicies([
  route('get', '/api/agent/info/{chainId}/{agentId}', { cache: 'agent', cors: 'public' }),
  route('post', '/api/agent/register', { cors: 'session' }),
  route('get', '/api/agent/register/status', { cors: 'session' }),
  route('post', '/api/a2a', { cors: 'a2a' }),
  route('get', '/docs'),
]);

describe('RoutePolicies', () => {
  it('gives a matched GET or HEAD its route cache policy, and everything else none', () => {
    expect(policies.cacheFor('GET', '/api/agent/info/42220/7')).toBe('agent');
    expect(policies.cacheFor('HEAD', '/api/agent/info/42220/7')).toBe('agent');
    expect(policies.cacheFor('POST', '/api/agent/info/42220/7')).toBe('none');
    expect(policies.cacheFor('GET', '/api/agent/info/42220')).toBe('none');
    expect(policies.cacheFor('GET', '/api/agent/info/42220/7/x')).toBe('none');
    expect(policies.cacheFor('GET', '/api/agent/register/status')).toBe('none');
  });

  it("gives a path its route's CORS group, whatever the method (a preflight asks before the request)", () => {
    expect(policies.corsFor('/api/agent/info/42220/7')).toBe(CORS_GROUPS.public);
    expect(policies.corsFor('/api/agent/register')).toBe(CORS_GROUPS.session);
    expect(policies.corsFor('/api/a2a')).toBe(CORS_GROUPS.a2a);
    expect(policies.corsFor('/docs')).toBeNull();
  });

  it('an unknown path takes the group of the nearest route above it, else the defaults', () => {
    expect(policies.corsFor('/api/agent/register/unknown')).toBe(CORS_GROUPS.session);
    expect(policies.corsFor('/api/a2a/x')).toBe(CORS_GROUPS.a2a);
    expect(policies.corsFor('/api/no/such/thing')).toBe(CORS_GROUPS.public);
    expect(policies.corsFor('/.well-known/nothing')).toBe(CORS_GROUPS.public);
    expect(policies.corsFor('/api/aa/token')).toBeNull();
    expect(policies.corsFor('/docs/x')).toBeNull();
    expect(policies.corsFor('/docsx')).toBeNull();
  });
});

describe('pathMatcher', () => {
  it('matches one segment per parameter and the literal parts exactly', () => {
    const matches = pathMatcher('/.well-known/a2a/{agentId}');
    expect(matches('/.well-known/a2a/5')).toBe(true);
    expect(matches('/.well-known/a2a/5/6')).toBe(false);
    expect(matches('/.well-known/a2a/')).toBe(false);
    expect(pathMatcher('/openapi.json')('/openapiXjson')).toBe(false);
  });

  it("matches as the router routes (case-insensitively, one trailing slash), so a preflight or a 405 of a path a route answers gets that route's CORS and Allow", () => {
    const matches = pathMatcher('/api/agent/info/{chainId}/{agentId}');
    expect(matches('/API/Agent/info/42220/1')).toBe(true);
    expect(matches('/api/agent/info/42220/1/')).toBe(true);
    expect(matches('/api/agent/info/42220/1//')).toBe(false);
    const own = new RoutePolicies([route('get', '/api/agent/info/{chainId}/{agentId}', { cors: 'public' })]);
    expect(own.allowFor('/API/agent/info/42220/1/')).toEqual(own.allowFor('/api/agent/info/42220/1'));
    expect(own.corsFor('/API/agent/info/42220/1/')).toBe(CORS_GROUPS.public);
  });
});
