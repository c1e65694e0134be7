// One JSON-RPC request answered as an object by the SDK's transport handlers: a lone request of a method that does
// not stream, the entries of a batch, notifications (the HTTP front sends a lone streaming request to the SDK's
// express handler instead). A request with A2A-Version 1.0 goes to JsonRpcTransportHandler; one without the header
// (or with 0.3) to the v0.3 compatibility layer's LegacyJsonRpcTransportHandler, as the protocol versions the
// requests; any other version is the SDK's VersionNotSupportedError. The transports answer every failure of a
// method as a JSON-RPC error themselves; what is thrown before them and is not the caller's mistake is logged.
import { Extensions } from '@a2a-js/sdk';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { type A2ARequestHandler, defaultServerCallContextBuilder, JsonRpcTransportHandler, type User, validateVersion } from '@a2a-js/sdk/server';
import type { Request } from 'express';
import type { Logger } from 'pino';
import { isA2aCallerError } from './caller-errors.js';

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

/** The version of requests without the A2A-Version header (A2A v1.0 §3.6.1). */
const LEGACY_VERSION = '0.3';
const INVALID_REQUEST = -32600;

export function jsonRpcCall(
  requestHandler: A2ARequestHandler,
  userBuilder: (req: Request) => Promise<User>,
  logger: Logger,
): (request: RpcRequest, req: Request) => Promise<RpcAnswer> {
  const v1 = new JsonRpcTransportHandler(requestHandler);
  const v03 = new LegacyJsonRpcTransportHandler(requestHandler);
  return async (request, req) => {
    const id = request.id ?? null;
    const version = req.header('A2A-Version') || undefined;
    const legacy = (version ?? LEGACY_VERSION) === LEGACY_VERSION;
    try {
      // the extensions header of each version (v0.3 named it X-A2A-Extensions)
      const extensions = legacy ? (req.header('X-A2A-Extensions') ?? req.header('A2A-Extensions')) : req.header('A2A-Extensions');
      const context = defaultServerCallContextBuilder({
        extensions: Extensions.parseServiceParameter(extensions),
        user: await userBuilder(req),
        headers: req.headers,
        requestedVersion: version,
      });
      validateVersion(context.requestedVersion, await requestHandler.getAgentCard(), 'JSONRPC');
      const answer = await (legacy ? v03 : v1).handle(request as unknown as Record<string, unknown>, context);
      if (Symbol.asyncIterator in answer) {
        // the front never sends a streaming method here; should one come, its stream is closed unread
        await answer.return(undefined);
        return { jsonrpc: '2.0', id, error: { code: INVALID_REQUEST, message: `${request.method} answers with a stream: send it alone` } };
      }
      return answer as RpcAnswer;
    } catch (error) {
      const mapped = (
        legacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(error) : JsonRpcTransportHandler.mapToJSONRPCError(error)
      ) as NonNullable<RpcAnswer['error']>;
      if (!(error instanceof Error && isA2aCallerError(error)))
        logger.error({ err: error, rpcMethod: request.method }, 'A2A JSON-RPC request failed');
      return { jsonrpc: '2.0', id, error: mapped };
    }
  };
}
