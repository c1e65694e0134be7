// Which errors the A2A SDK reports are the caller's mistakes (an unsupported A2A-Version, a malformed message, an
// unknown task): every A2A error but an internal one. The SDK writes them with console.error and their stack; the
// console bridge (logger.ts) logs these at warn, without the stack.
import { A2A_ERROR_CODE, A2AError, toJsonRpcError } from '@a2a-js/sdk/errors';

export const isA2aCallerError = (error: Error): boolean => error instanceof A2AError && toJsonRpcError(error).code !== A2A_ERROR_CODE.INTERNAL_ERROR;
