// Subscribing to any task that is not final streams its later updates until it is (A2A v1.0 §3.1.6): a conversation
// waiting for input, answered at once without the SDK's machinery, gets its next turn from another client on the
// open stream (the answer, then completed, then the end); a turn that asks again streams input-required and the
// stream stays open; a cancel ends it; an instance sharing the store and its events streams what another instance's
// turn did; and a stream whose caller left stops following the task. Real HTTP streams, v1.0 and v0.3.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EventBus, type EventListener, InProcessEventBus } from '../../src/store/event-bus.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { rpc, rpcStream, v1Rpc } from '../support/a2a.js';
import { type TestApp, testApp } from '../support/app.js';
import { deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';
import { serveOnLoopback } from '../support/service-http.js';

/** The events port of one process, counting who listens on each topic. */
class CountedEvents implements EventBus {
  readonly #events = new InProcessEventBus();
  readonly listening = new Map<string, number>();

  publish(topic: string, message: string): Promise<void> {
    return this.#events.publish(topic, message);
  }

  subscribe(topic: string, listener: EventListener): () => void {
    this.listening.set(topic, (this.listening.get(topic) ?? 0) + 1);
    const unsubscribe = this.#events.subscribe(topic, listener);
    return () => {
      this.listening.set(topic, (this.listening.get(topic) ?? 1) - 1);
      unsubscribe();
    };
  }

  close(): Promise<void> {
    return this.#events.close();
  }
}

/** Waits until `ready` holds, failing after 10 s. */
async function until(ready: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !ready(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!ready()) throw new Error(`timed out waiting for ${what}`);
}

const v1Message = (parts: object[], taskId?: string) => ({
  message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts, ...(taskId ? { taskId } : {}) },
});

describe('A2A subscriptions to open tasks', () => {
  let networks: TestNetworks;
  const events = new CountedEvents();
  const store = new MemoryStore();
  let a: TestApp;
  let b: TestApp;
  let served: Awaited<ReturnType<typeof serveOnLoopback>>;
  let base: string;

  beforeAll(async () => {
    networks = await deployTestNetworks();
    served = await serveOnLoopback((req, res) => a.app(req, res));
    base = served.base;
    a = testApp(networks.chains, { publicUrl: base, store, events });
    // a second instance on the same store and events, as two processes on one Redis
    b = testApp(networks.chains, { publicUrl: base, store, events, sessionSecret: a.sessionSecret });
  });

  afterAll(async () => {
    for (const one of [a, b]) {
      one?.services.watcher.stopAll();
      one?.a2a.close();
    }
    await served?.close();
  });

  it('v1.0 SubscribeToTask of a conversation answered at once: a follow-up from another client reaches it, then the stream ends', async () => {
    const sent = await v1Rpc(a.app, 'SendMessage', v1Message([{ text: 'good morning' }]), '198.51.100.1');
    const task = sent.body.result.task;
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');

    const stream = await rpcStream(base, 'SubscribeToTask', { id: task.id }, { version: '1.0', forwardedFor: '198.51.100.2' });
    expect(await stream.next()).toMatchObject({ task: { id: task.id, status: { state: 'TASK_STATE_INPUT_REQUIRED' } } });
    // the turn that completes it, from a third client
    const followUp = await v1Rpc(a.app, 'SendMessage', v1Message([{ data: { intent: 'help' } }], task.id), '198.51.100.3');
    expect(followUp.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');

    const rest = await stream.rest();
    expect(rest.map((result) => Object.keys(result))).toEqual([['artifactUpdate'], ['statusUpdate']]);
    expect(rest[0]).toMatchObject({ artifactUpdate: { taskId: task.id, artifact: { name: 'help-answer' } } });
    expect(rest[1]).toMatchObject({ statusUpdate: { taskId: task.id, contextId: task.contextId, status: { state: 'TASK_STATE_COMPLETED' } } });
  });

  it('v0.3 tasks/resubscribe: a turn that asks again streams input-required and the stream stays open; a cancel ends it', async () => {
    const sent = await rpc(a.app, 'message/send', {
      message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'hello' }] },
    });
    const taskId = sent.body.result.id as string;
    const stream = await rpcStream(base, 'tasks/resubscribe', { id: taskId });
    expect(await stream.next()).toMatchObject({ kind: 'task', id: taskId, status: { state: 'input-required' } });

    await rpc(a.app, 'message/send', {
      message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'data', data: { intent: 'lookup' } }], taskId },
    });
    const asked = await stream.next();
    expect(asked).toMatchObject({ kind: 'status-update', taskId, final: false, status: { state: 'input-required' } });
    expect(JSON.stringify(asked)).toContain('agentId');

    expect((await rpc(a.app, 'tasks/cancel', { id: taskId })).body.result.status.state).toBe('canceled');
    expect(await stream.rest()).toEqual([
      expect.objectContaining({ kind: 'status-update', final: true, status: expect.objectContaining({ state: 'canceled' }) }),
    ]);
  });

  it('a turn on another instance sharing the store reaches a subscriber of this one', async () => {
    const sent = await v1Rpc(a.app, 'SendMessage', v1Message([{ text: 'which agents are there?' }]), '198.51.100.4');
    const task = sent.body.result.task;
    const stream = await rpcStream(base, 'SubscribeToTask', { id: task.id }, { version: '1.0' });
    expect(await stream.next()).toMatchObject({ task: { id: task.id } });

    const followUp = await v1Rpc(b.app, 'SendMessage', v1Message([{ text: 'help' }], task.id), '198.51.100.4');
    expect(followUp.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect((await stream.rest()).at(-1)).toMatchObject({ statusUpdate: { status: { state: 'TASK_STATE_COMPLETED' } } });
  });

  it('a stream whose caller has left stops following the task', async () => {
    const sent = await v1Rpc(a.app, 'SendMessage', v1Message([{ text: 'anyone there?' }]), '198.51.100.5');
    const topic = `a2a-task:${sent.body.result.task.id}`;
    const leave = new AbortController();
    const stream = await rpcStream(base, 'SubscribeToTask', { id: sent.body.result.task.id }, { version: '1.0', signal: leave.signal });
    await stream.next();
    await until(() => events.listening.get(topic) === 1, 'the stream to follow the task');
    leave.abort();
    await until(() => events.listening.get(topic) === 0, 'the stream to stop following the task');
  });
});
