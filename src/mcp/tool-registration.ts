// Registering one tool: its catalog entry (title, description), the REST schemas' shapes as input and output
// (the SDK builds the JSON Schemas from them and validates the arguments: a refused argument is a tool error naming
// the field and what to fix), and its work, whose refusals become tool errors too.
import type { McpServer, ToolCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ShapeOutput } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { TOOLS, type ToolName } from './tool-catalog.js';
import { toolError } from './tool-results.js';

/** What a tool's work gets besides its arguments: the request's progress token, cancellation, notifications. */
export type ToolCall = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** Reads nothing it changes: the queries. */
export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, openWorldHint: true };
/** Opens a session the human completes (nothing happens on chain without them). */
export const OPENS_SESSION: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };

export function registerTool<I extends z.ZodRawShape, O extends z.ZodRawShape>(
  server: McpServer,
  logger: Logger,
  name: ToolName,
  schemas: { input: I; output: O; annotations: ToolAnnotations },
  work: (args: ShapeOutput<I>, call: ToolCall) => Promise<CallToolResult>,
): void {
  const { title, description } = TOOLS[name];
  const callback = async (args: ShapeOutput<I>, call: ToolCall): Promise<CallToolResult> => {
    const started = performance.now();
    let result: CallToolResult;
    try {
      result = await work(args, call);
    } catch (error) {
      result = toolError(name, error, logger);
    }
    // each HTTP exchange has its request log line (route /mcp); this one names the tool
    logger.debug({ tool: name, isError: result.isError === true, ms: Math.round(performance.now() - started) }, 'MCP tool call');
    return result;
  };
  server.registerTool(
    name,
    { title, description, inputSchema: schemas.input, outputSchema: schemas.output, annotations: { title, ...schemas.annotations } },
    // the SDK types the callback by a conditional type of the shape, which stays unresolved for a generic shape
    callback as unknown as ToolCallback<I>,
  );
}
