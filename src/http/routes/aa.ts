// The account-abstraction proxy: thin routes over the AA service, which checks origin, token, limits, size and
// the JSON-RPC request in its order. They read their own body (a size limit on the bytes as they arrive, and the
// exact text forwarded), answer only JSON, and send no CORS headers: the proxy has its own origin rule.
import type { Request } from 'express';
import type { AaCall, AaProxyService, AaRoute } from '../../aa/aa-proxy.js';
import { clientKeyOf } from '../../services/rate-limits.js';
import type { ResponseDoc } from '../openapi/route-doc.js';
import type { Route } from '../route.js';
import { aaQuerySchema, aaTokenSchema, bundlerRequestSchema, jsonRpcResponseSchema, paymasterRequestSchema } from '../schemas/aa.js';
import { documented } from '../validation.js';

const TAGS = ['Account abstraction'];
const PROXY_POST = { method: 'post', tags: TAGS, query: aaQuerySchema, ownBody: true } as const;

const callOf = (req: Request): AaCall => ({ query: req.query, headers: req.headers, client: clientKeyOf(req.ip) });

const originRefused: ResponseDoc = {
  description: 'The origin check failed: no Origin or Referer, not a URL, not an allowed origin, or (without an allow-list) a page of another host',
};
const rateLimited = (what: string): ResponseDoc => ({ description: `More than the limit of ${what} per minute from this address (Retry-After)` });

const forwardRoute = (
  aa: AaProxyService,
  route: AaRoute,
  summary: string,
  body: typeof bundlerRequestSchema | typeof paymasterRequestSchema,
): Route => ({
  ...PROXY_POST,
  path: `/api/aa/${route}`,
  summary,
  description:
    "The body is forwarded as it is to the network's configured upstream, and its answer returned as it is. Needs an allowed " +
    'origin and a token from POST /api/aa/token (header x-aa-proxy-token).',
  body,
  proxyToken: true,
  responses: {
    200: { description: "The upstream's JSON-RPC response, unchanged", schema: jsonRpcResponseSchema },
    400: {
      description:
        'An unsupported or missing chain; a body that is not JSON, repeats a key, is a batch, not JSON-RPC 2.0, a method not allowed, params not an array',
    },
    401: { description: 'The token is missing, malformed, forged, expired, or for another chain, address or User-Agent (the message says which)' },
    403: originRefused,
    413: { description: 'A body over 200,000 bytes' },
    429: rateLimited(`${route} calls`),
    502: { description: 'The upstream failed: no connection, an HTTP error, or an answer that is not JSON-RPC' },
    503: { description: 'No upstream for this network (the message names the setting)' },
    504: { description: 'The upstream did not answer in time' },
  },
  handler: async (req, res) => {
    res.type('application/json').send(await aa.forward(route, callOf(req), req));
  },
});

export function aaRoutes(aa: AaProxyService): Route[] {
  return [
    {
      ...PROXY_POST,
      path: '/api/aa/token',
      summary: 'A short-lived token for the bundler and paymaster proxy',
      description: 'Bound to the chain, the client address and the User-Agent. The body is ignored.',
      responses: {
        200: { description: 'The token', schema: aaTokenSchema },
        400: { description: 'An unsupported or missing chain' },
        403: originRefused,
        429: rateLimited('tokens'),
      },
      handler: async (req, res) => {
        res.json(documented(aaTokenSchema, await aa.issueToken(callOf(req))));
      },
    },
    forwardRoute(aa, 'bundler', 'Forward an ERC-4337 bundler JSON-RPC call (ERC-7769) to the network’s bundler', bundlerRequestSchema),
    forwardRoute(aa, 'paymaster', 'Forward an ERC-7677 paymaster JSON-RPC call to the network’s paymaster', paymasterRequestSchema),
  ];
}
