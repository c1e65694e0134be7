import { randomBytes } from 'node:crypto';
import { Task, TaskState } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { describe, expect, it } from 'vitest';
import { ClientAddress } from '../../src/a2a/client-address.js';
import { CLIENT_INDEX_LIMIT, DEFAULT_TASK_LIFETIMES, KeyValueTaskStore, TASK_TTL_MS } from '../../src/a2a/task-store.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { SealedValues } from '../../src/store/sealed-values.js';

const task = (id: string): Task => ({
  id,
  contextId: 'c1',
  status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date(0).toISOString() },
  artifacts: [],
  history: [],
  metadata: { registrySession: { intent: 'register', sessionToken: 'eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..iv.body.tag', stage: 'qr-ready' } },
});

/** The request of a client at `address`. */
const as = (address: string) => new ServerCallContext({ user: new ClientAddress(address) });
/** ListTasks: everything the caller may see, up to 100. */
const listRequest = {
  tenant: '',
  contextId: '',
  status: TaskState.TASK_STATE_UNSPECIFIED,
  pageSize: 100,
  pageToken: '',
  includeArtifacts: false,
  statusTimestampAfter: undefined,
};
/** The text SealedValues makes: version, iv, ciphertext, tag. */
const SEALED = /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

describe('KeyValueTaskStore at rest', () => {
  const secret = randomBytes(32);

  it('keeps each task as one sealed value, its creator beside it, and reads it back whole', async () => {
    const store = new MemoryStore();
    const tasks = new KeyValueTaskStore(store, new SealedValues(secret, 'a2a-task'));
    await tasks.save(task('t1'), as('203.0.113.7'));
    await tasks.saveNew(task('t6'), as('203.0.113.7'));
    for (const id of ['t1', 't6']) {
      const raw = await store.get<{ sealed: string; owner: string }>(`a2a:task:${id}`);
      expect(Object.keys(raw ?? {}).sort()).toEqual(['owner', 'sealed']);
      expect(raw?.sealed).toMatch(SEALED);
      expect(raw?.owner).toBe('203.0.113.7');
      expect(JSON.stringify(raw)).not.toContain('eyJ');
      expect(await tasks.load(id)).toEqual(task(id));
    }
    expect(await store.keys('a2a:task-owner:')).toEqual([]);
    // a later save (an update, from another request) keeps the creator
    await tasks.save({ ...task('t1'), status: { ...task('t1').status, state: TaskState.TASK_STATE_COMPLETED } } as Task, as('198.51.100.1'));
    expect((await store.get<{ owner: string }>('a2a:task:t1'))?.owner).toBe('203.0.113.7');
  });

  it('reads a task kept before sealing, and seals it at its next save', async () => {
    const store = new MemoryStore();
    await store.set('a2a:task:t2', Task.toJSON(task('t2')));
    const tasks = new KeyValueTaskStore(store, new SealedValues(secret, 'a2a-task'));
    const loaded = await tasks.load('t2');
    expect(loaded).toEqual(task('t2'));
    await tasks.save(loaded as Task);
    expect((await store.get<{ sealed: string }>('a2a:task:t2'))?.sealed).toMatch(SEALED);
  });

  it('reads and lists a task kept as sealed text with its owner under a key of its own, and keeps both at its next save', async () => {
    let now = 1_000_000;
    const store = new MemoryStore(() => now);
    const sealed = new SealedValues(secret, 'a2a-task');
    const tasks = new KeyValueTaskStore(store, sealed);
    // as an earlier version kept a session task of 203.0.113.7
    await store.set('a2a:task:t7', sealed.seal('a2a:task:t7', Task.toJSON(task('t7'))), TASK_TTL_MS);
    await store.set('a2a:task-owner:t7', '203.0.113.7', TASK_TTL_MS);
    await store.set('a2a:tasks', JSON.stringify(['t7']));
    const listedTo = async (address: string) => (await tasks.list(listRequest, as(address))).tasks.map((listed) => listed.id);
    expect(await tasks.load('t7')).toEqual(task('t7'));
    expect(await listedTo('203.0.113.7')).toEqual(['t7']);
    expect(await listedTo('198.51.100.1')).toEqual([]);

    now += TASK_TTL_MS - 1_000;
    await tasks.save(task('t7'), as('198.51.100.1'));
    now += 2_000; // past the first save's week: the save kept the owner as long as the task
    expect(await tasks.load('t7')).toEqual(task('t7'));
    expect(await listedTo('203.0.113.7')).toEqual(['t7']);
    expect(await listedTo('198.51.100.1')).toEqual([]);
  });

  it('a task sealed under another secret, or moved to another id, is as good as gone', async () => {
    const store = new MemoryStore();
    await new KeyValueTaskStore(store, new SealedValues(randomBytes(32), 'a2a-task')).save(task('t3'));
    const tasks = new KeyValueTaskStore(store, new SealedValues(secret, 'a2a-task'));
    expect(await tasks.load('t3')).toBeUndefined();
    await tasks.save(task('t4'));
    await store.set('a2a:task:t5', await store.get<string>('a2a:task:t4'));
    expect(await tasks.load('t5')).toBeUndefined();
  });

  it('keeps a session task a week after its last change, a conversation waiting for input an hour, a finished query ten minutes', async () => {
    let now = 1_000_000;
    const store = new MemoryStore(() => now);
    const tasks = new KeyValueTaskStore(store, new SealedValues(secret, 'a2a-task'));
    const { registrySession: _session, ...noSession } = task('q').metadata ?? {};
    const finished = { ...task('q').status!, state: TaskState.TASK_STATE_COMPLETED };
    await tasks.save(task('s1'));
    await tasks.save({ ...task('c1'), status: { ...task('c1').status!, state: TaskState.TASK_STATE_INPUT_REQUIRED }, metadata: noSession });
    await tasks.save({ ...task('q1'), status: finished, metadata: noSession });
    const { queryMs, conversationMs } = DEFAULT_TASK_LIFETIMES;
    expect([queryMs, conversationMs]).toEqual([10 * 60_000, 60 * 60_000]);
    now += queryMs - 1;
    expect(await tasks.load('q1')).toBeDefined();
    now += 2;
    expect(await tasks.load('q1')).toBeUndefined();
    expect(await tasks.load('c1')).toBeDefined();
    now += conversationMs - queryMs;
    expect(await tasks.load('c1')).toBeUndefined();
    expect(await tasks.load('s1')).toBeDefined();
    now += TASK_TTL_MS - conversationMs;
    expect(await tasks.load('s1')).toBeUndefined();
  });

  it('keeps of a finished query only its answer: status and artifacts, not the messages (a status question holds a session token)', async () => {
    const store = new MemoryStore();
    const tasks = new KeyValueTaskStore(store, new SealedValues(secret, 'a2a-task'), undefined, { queryMs: 5_000, conversationMs: 60_000 });
    const token = 'eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..iv.secret-body.tag';
    const asked = {
      messageId: 'm1',
      contextId: 'c1',
      taskId: 'q2',
      role: 1,
      parts: [{ content: { $case: 'data', value: { intent: 'status', sessionToken: token } }, metadata: undefined, filename: '', mediaType: '' }],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    } as unknown as Task['history'][number];
    const answered: Task = {
      ...task('q2'),
      status: { ...task('q2').status!, state: TaskState.TASK_STATE_COMPLETED },
      history: [asked],
      artifacts: [{ artifactId: 'a1', name: 'status-answer', description: '', parts: [], metadata: undefined, extensions: [] }],
      metadata: { registryInput: { intent: 'status', fields: { sessionToken: token }, missing: [] } },
    };
    await tasks.saveNew(answered, as('203.0.113.9'));
    expect(await tasks.load('q2')).toEqual({ ...answered, history: [], metadata: {} });
    // a conversation that still waits keeps everything, for its next turn
    const waiting: Task = { ...answered, id: 'q3', status: { ...answered.status!, state: TaskState.TASK_STATE_INPUT_REQUIRED } };
    await tasks.save(waiting, as('203.0.113.9'));
    expect(await tasks.load('q3')).toEqual(waiting);
  });

  it("one client's many queries push neither its own session task nor another's out of listing and resuming", async () => {
    const store = new MemoryStore();
    const tasks = new KeyValueTaskStore(store, new SealedValues(secret, 'a2a-task'));
    const listed = async (address: string) => (await tasks.list(listRequest, as(address))).tasks.map((t) => t.id);
    const { registrySession: _session, ...noSession } = task('q').metadata ?? {};
    const query = (id: string, at: number): Task => ({
      ...task(id),
      metadata: noSession,
      status: { ...task(id).status!, timestamp: new Date(at).toISOString() },
    });
    await tasks.save({ ...task('session-a'), status: { ...task('session-a').status!, timestamp: new Date(5).toISOString() } }, as('203.0.113.1'));
    await tasks.save(query('query-a', 10), as('203.0.113.1'));
    for (let i = 0; i < 1_100; i++) await tasks.save(query(`query-b${i}`, 100 + i), as('203.0.113.2'));
    expect((await tasks.openTasks()).map((t) => t.id)).toEqual(['session-a']);
    // newest status first
    expect(await listed('203.0.113.1')).toEqual(['query-a', 'session-a']);
    const other = await listed('203.0.113.2');
    expect(other).toHaveLength(CLIENT_INDEX_LIMIT);
    expect(other[0]).toBe('query-b1099');
  });
});
