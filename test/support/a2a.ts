// What the A2A tests share: building the SDK's v1.0 message parts, reading data parts and answers back, and raw v0.3
// JSON-RPC calls (no A2A-Version header) for opening a register task and waiting on its state.
import { type Message, type Part, Role, type Task, TaskState } from '@a2a-js/sdk';
import type { Express } from 'express';
import request from 'supertest';

export const REGISTER_TESTNET = { intent: 'register', mode: 'wallet-free', network: 'testnet' } as const;

export const dataPart = (value: object): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
});
export const textPart = (value: string): Part => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' });

export const userMessage = (parts: Part[]): Message => ({
  messageId: crypto.randomUUID(),
  contextId: '',
  taskId: '',
  role: Role.ROLE_USER,
  parts,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

/** A raw v0.3 message/send (no A2A-Version header) of one data part, as an A2A client sends an intent. */
export const legacySend = (data: object, messageId: string = crypto.randomUUID()) => ({
  jsonrpc: '2.0' as const,
  id: 1,
  method: 'message/send',
  params: { message: { kind: 'message', messageId, role: 'user', parts: [{ kind: 'data', data }] } },
});

/** The first data part's value (v1.0 shape), or {}. */
export const dataOf = (parts: Part[] | undefined): Record<string, unknown> => {
  const part = parts?.find((p) => p.content?.$case === 'data');
  return (part?.content?.value ?? {}) as Record<string, unknown>;
};

/**
 * What a task answers (v1.0 shape): a completed task's artifact data (a query's REST fields), else its status
 * message's data (what an input-required task needs, a failed one's error).
 */
export const answerOf = (task: Task): Record<string, unknown> =>
  task.status?.state === TaskState.TASK_STATE_COMPLETED ? dataOf(task.artifacts[0]?.parts) : dataOf(task.status?.message?.parts);

/** A raw v0.3 JSON-RPC call (no A2A-Version header), optionally from another client address. */
export const rpc = (app: Express, method: string, params: object, forwardedFor?: string) => {
  const req = request(app).post('/api/a2a');
  if (forwardedFor) req.set('X-Forwarded-For', forwardedFor);
  return req.send({ jsonrpc: '2.0', id: 1, method, params });
};

/** A raw v1.0 JSON-RPC call (A2A-Version: 1.0), optionally from another client address. */
export const v1Rpc = (app: Express, method: string, params: object, forwardedFor?: string) => {
  const req = request(app).post('/api/a2a').set('A2A-Version', '1.0');
  if (forwardedFor) req.set('X-Forwarded-For', forwardedFor);
  return req.send({ jsonrpc: '2.0', id: method, method, params });
};

/** A v0.3 message/send of a testnet register intent: the raw answer (an open task, or a failed one with an error part). */
export const sendRegister = (app: Express, forwardedFor?: string) =>
  rpc(
    app,
    'message/send',
    { message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'data', data: REGISTER_TESTNET }] } },
    forwardedFor,
  );

type LegacyParts = { parts: { kind: string; data?: Record<string, unknown> }[] };

/**
 * The data part of a v0.3 answer: a message's, a completed task's artifact, or another task's status message (the
 * error part of a refused register, what an input-required task needs).
 */
export const legacyDataOf = (
  result: LegacyParts | { kind: 'task'; status: { state: string; message?: LegacyParts }; artifacts?: LegacyParts[] },
): Record<string, unknown> => {
  const parts = 'parts' in result ? result : result.status.state === 'completed' ? result.artifacts?.[0] : result.status.message;
  return parts?.parts.find((p) => p.kind === 'data')?.data ?? {};
};

/** A v0.3 register task opened with message/send: its id and its artifact's data (deepLink, sessionToken, ...). */
export async function openRegisterTask(app: Express, forwardedFor?: string): Promise<{ taskId: string; artifact: Record<string, unknown> }> {
  const res = await sendRegister(app, forwardedFor);
  if (res.body.result?.status?.state !== 'auth-required') throw new Error(`no open task: ${JSON.stringify(res.body)}`);
  const artifact = legacyDataOf(res.body.result.artifacts[0]);
  return { taskId: res.body.result.id as string, artifact };
}

/** The task's v0.3 state once it is `state`, or the last one seen after 5 s. */
export async function waitForTaskState(app: Express, taskId: string, state: string): Promise<string> {
  let seen = '';
  for (let i = 0; i < 50 && seen !== state; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    seen = (await rpc(app, 'tasks/get', { id: taskId })).body.result?.status?.state;
  }
  return seen;
}

/** A JSON-RPC stream read as it arrives: `next()` is its next event's result, undefined once the stream has ended. */
export class SseResults {
  readonly #events: AsyncIterator<unknown>;

  constructor(res: Response) {
    this.#events = SseResults.#results(res);
  }

  /** The next event's JSON-RPC result (its error, if it carries one, throws). */
  async next(): Promise<Record<string, unknown> | undefined> {
    const { value, done } = await this.#events.next();
    return done ? undefined : (value as Record<string, unknown>);
  }

  /** Every result left, until the stream ends. */
  async rest(): Promise<Record<string, unknown>[]> {
    const results: Record<string, unknown>[] = [];
    for (let result = await this.next(); result !== undefined; result = await this.next()) results.push(result);
    return results;
  }

  static async *#results(res: Response): AsyncGenerator<unknown> {
    if (!/text\/event-stream/.test(res.headers.get('content-type') ?? '')) throw new Error(`not a stream: ${res.status} ${await res.text()}`);
    const decoder = new TextDecoder();
    let buffered = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
        const data = buffered
          .slice(0, end)
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5))
          .join('');
        buffered = buffered.slice(end + 2);
        if (!data) continue; // a keep-alive comment
        const answer = JSON.parse(data) as { result?: unknown; error?: unknown };
        if (answer.error) throw new Error(`stream error: ${JSON.stringify(answer.error)}`);
        yield answer.result;
      }
    }
  }
}

/** A streaming JSON-RPC call over real HTTP (v1.0 with `version`, else v0.3), from `forwardedFor` when given. */
export async function rpcStream(
  base: string,
  method: string,
  params: object,
  options: { version?: string; forwardedFor?: string; signal?: AbortSignal } = {},
): Promise<SseResults> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
  if (options.version) headers['a2a-version'] = options.version;
  if (options.forwardedFor) headers['x-forwarded-for'] = options.forwardedFor;
  const res = await fetch(`${base}/api/a2a`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return new SseResults(res);
}
