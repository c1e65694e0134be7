// The local bundler and paymaster served over HTTP JSON-RPC on a loopback port, the upstream URLs the
// account-abstraction proxy forwards to on the embedded chains: POST /bundler and POST /paymaster. jayson's server
// dispatches the requests (single or batch); the HTTP side is ours so that every answer, also a bad path, method
// or body, is a JSON-RPC error object rather than text.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import jayson, { type JSONRPCCallbackTypePlain, type JSONRPCRequestLike, type Method, type RequestParamsLike, type Server } from 'jayson';
import { decodeSponsoree, SPONSOREE_HEADER } from '../../aa/sponsoree-header.js';
import { type RpcContext, RpcErrorCode, type RpcService, toJsonRpcError } from './json-rpc.js';

export interface AaRpcServerOptions {
  bundler: RpcService;
  paymaster: RpcService;
  /** Default 127.0.0.1: these services spend the executor's and the paymaster's funds. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /**
   * The key the proxy MACs its x-sponsoree header with (aa/sponsoree-header.ts): the paymaster then charges that client's
   * budgets. Absent, or a request without the header: a direct caller. A header that does not verify is refused.
   */
  sponsoreeKey?: Uint8Array;
}

export interface AaRpcServer {
  bundlerUrl: string;
  paymasterUrl: string;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 1_000_000;
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

/** A jayson server over `service`'s methods; errors thrown by a method become its JSON-RPC error object. */
function jsonRpcServer(service: RpcService): Server {
  const methods: Record<string, Method> = {};
  for (const [name, method] of Object.entries(service.methods)) {
    methods[name] = new jayson.Method(
      (params: RequestParamsLike, context: object, callback: JSONRPCCallbackTypePlain) => {
        if (params !== undefined && !Array.isArray(params)) {
          callback({ code: RpcErrorCode.invalidParams, message: 'Invalid params: params must be an array' });
          return;
        }
        method(params ?? [], context as RpcContext).then(
          (result) => callback(null, result),
          (error: unknown) => callback(toJsonRpcError(error)),
        );
      },
      { useContext: true },
    );
  }
  const known = Object.keys(methods).join(', ');
  const unknown = (name: string): Method =>
    new jayson.Method((_params: RequestParamsLike, callback: JSONRPCCallbackTypePlain) =>
      callback({ code: RpcErrorCode.methodNotFound, message: `Method not found: ${name.slice(0, 100)} (this service answers ${known})` }),
    );
  return new jayson.Server(methods, {
    router(name: string) {
      return this.getMethod(name) ?? unknown(name);
    },
  });
}

function send(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  response.end(text);
}

const errorBody = (code: number, message: string): unknown => ({ jsonrpc: '2.0', id: null, error: { code, message } });

function readBody(request: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    request.on('data', (chunk: Buffer) => {
      length += chunk.length;
      if (length > MAX_BODY_BYTES) {
        resolve(undefined);
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

export async function startAaRpcServer(options: AaRpcServerOptions): Promise<AaRpcServer> {
  const routes: Record<string, Server> = {
    '/bundler': jsonRpcServer(options.bundler),
    '/paymaster': jsonRpcServer(options.paymaster),
  };

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    const route = routes[path];
    if (!route)
      return send(response, 404, errorBody(INVALID_REQUEST, `No JSON-RPC service at ${path.slice(0, 100)}: POST to /bundler or /paymaster`));
    if (request.method !== 'POST') return send(response, 405, errorBody(INVALID_REQUEST, 'JSON-RPC requests are POSTed'), { allow: 'POST' });
    const context: RpcContext = {};
    const claimed = request.headers[SPONSOREE_HEADER];
    if (typeof claimed === 'string' && options.sponsoreeKey) {
      const sponsoree = decodeSponsoree(options.sponsoreeKey, claimed);
      if (!sponsoree) return send(response, 401, errorBody(INVALID_REQUEST, `The ${SPONSOREE_HEADER} header was not set by this service's proxy`));
      context.sponsoree = sponsoree;
    }
    const text = await readBody(request);
    if (text === undefined) return send(response, 413, errorBody(INVALID_REQUEST, `The request body is over ${MAX_BODY_BYTES} bytes`));
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return send(response, 200, errorBody(PARSE_ERROR, 'Parse error: the body is not JSON'));
    }
    const answer = await route.callp(parsed as JSONRPCRequestLike, context).catch((error: unknown) => error);
    if (answer === undefined) {
      response.writeHead(204).end(); // notifications only: nothing to answer
      return;
    }
    send(response, 200, answer);
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) send(response, 500, errorBody(RpcErrorCode.internal, toJsonRpcError(error).message));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const base = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
  return {
    bundlerUrl: `${base}/bundler`,
    paymasterUrl: `${base}/paymaster`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
