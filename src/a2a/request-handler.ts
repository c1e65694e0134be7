// The SDK's request handler plus the request checks the protocol expects of a server and the SDK leaves to it:
// a message needs at least one part and comes from the user, history lengths are not negative, page sizes are
// 1-100, and a webhook given with the message is for a message that starts a task (register, deregister):
// other intents answer at once and would leave the config behind unused. Refusals are JSON-RPC
// invalid-params errors (-32602) that say what to fix.
import {
  type GetTaskRequest,
  type ListTasksRequest,
  type ListTasksResponse,
  type Message,
  Role,
  type SendMessageRequest,
  type StreamResponse,
  type Task,
} from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { DefaultRequestHandler, type ServerCallContext } from '@a2a-js/sdk/server';
import { inputParts, parseIntent, TASK_INTENTS } from './intents.js';

function checkHistoryLength(historyLength: number | undefined): void {
  if (historyLength !== undefined && (!Number.isInteger(historyLength) || historyLength < 0)) {
    throw new RequestMalformedError(`historyLength must be a whole number of messages, 0 or more; got ${historyLength}`);
  }
}

function checkSend(params: SendMessageRequest): void {
  const message = params.message;
  if (!message || message.parts.length === 0) {
    throw new RequestMalformedError('message.parts must hold at least one part, e.g. a data part {"intent": "help"} or a text part "help"');
  }
  if (message.role !== Role.ROLE_USER) throw new RequestMalformedError('message.role must be user: the caller speaks as the user');
  checkHistoryLength(params.configuration?.historyLength);
  if (params.configuration?.taskPushNotificationConfig) {
    const parsed = parseIntent(inputParts(message));
    const intent = parsed.ok ? parsed.request.intent : parsed.intent;
    if (!intent || !TASK_INTENTS.includes(intent)) {
      throw new RequestMalformedError(
        `A push notification config is for a message that starts a task (${TASK_INTENTS.join(', ')}); ${intent ?? 'this message'} is answered at once: send it without one`,
      );
    }
  }
}

export class RegistryRequestHandler extends DefaultRequestHandler {
  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    checkSend(params);
    return super.sendMessage(params, context);
  }

  override async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    checkSend(params);
    yield* super.sendMessageStream(params, context);
  }

  override async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    checkHistoryLength(params.historyLength);
    return super.getTask(params, context);
  }

  override async listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    checkHistoryLength(params.historyLength);
    if (params.pageSize !== undefined && (!Number.isInteger(params.pageSize) || params.pageSize < 1 || params.pageSize > 100)) {
      throw new RequestMalformedError(`pageSize must be 1 to 100; got ${params.pageSize}`);
    }
    return super.listTasks(params, context);
  }
}
