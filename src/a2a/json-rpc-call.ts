// One JSON-RPC request answered as an object: a lone request of a method that does not stream, the entries of a
// batch, notifications (the HTTP front sends a streaming method to the SDK's express handler instead). It does what
// that handler does up to the answer, without its router and body parser (the front has read the body): the caller,
// the A2A version (v0.3 through the SDK's compatibility layer without the A2A-Version header), the requested
// extensions, the SDK's transport handler of that version, and for a lone request the header naming the extensions
// the answer activated.
import { Extensions } from '@a2a-js/sdk';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { type A2ARequestHandler, defaultServerCallContextBuilder, JsonRpcTransportHandler, type User, validateVersion } from '@a2a-js/sdk/server';
import type { Request, Response } from 'express';

/** One JSON-RPC request, already checked as one by the front. */
export interface RpcRequest {
  jsonrpc: '2.0';
  method: string;
  params?: unknown;
  id?: string | number | null;
}

export interface RpcAnswer {
  jsonrpc: '2.0';
  id: string | number | null;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** The version of requests without the A2A-Version header. */
const LEGACY_VERSION = '0.3';
const INVALID_REQUEST = -32600;

export function jsonRpcCall(
  requestHandler: A2ARequestHandler,
  userBuilder: (req: Request) => Promise<User>,
): (request: RpcRequest, req: Request, res?: Response) => Promise<RpcAnswer> {
  const v1 = new JsonRpcTransportHandler(requestHandler);
  const v03 = new LegacyJsonRpcTransportHandler(requestHandler);
  return async (request, req, res) => {
    const id = request.id ?? null;
    const version = req.header('A2A-Version') || undefined;
    const legacy = (version ?? LEGACY_VERSION) === LEGACY_VERSION;
    try {
      const extensions = legacy ? (req.header('X-A2A-Extensions') ?? req.header('A2A-Extensions')) : req.header('A2A-Extensions');
      const context = defaultServerCallContextBuilder({
        extensions: Extensions.parseServiceParameter(extensions),
        user: await userBuilder(req),
        headers: req.headers,
        requestedVersion: version,
      });
      validateVersion(context.requestedVersion, await requestHandler.getAgentCard(), 'JSONRPC');
      const answer = await (legacy ? v03 : v1).handle(request as unknown as Record<string, unknown>, context);
      if (res && context.activatedExtensions) res.setHeader(legacy ? 'X-A2A-Extensions' : 'A2A-Extensions', Array.from(context.activatedExtensions));
      if (Symbol.asyncIterator in answer) {
        // the front never sends a streaming method here; should one come, its stream is closed unread
        await answer.return(undefined);
        return { jsonrpc: '2.0', id, error: { code: INVALID_REQUEST, message: `${request.method} answers with a stream: send it alone` } };
      }
      return answer as RpcAnswer;
    } catch (error) {
      // what the transport does not answer itself (an unsupported version), reported and mapped as the SDK's express
      // handler reports and maps it for a lone request (its console output goes to the log: a caller's mistake at warn)
      if (res) console.error('Unhandled error in JSON-RPC POST handler:', error);
      const mapped = legacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(error) : JsonRpcTransportHandler.mapToJSONRPCError(error);
      return { jsonrpc: '2.0', id, error: mapped as RpcAnswer['error'] };
    }
  };
}
