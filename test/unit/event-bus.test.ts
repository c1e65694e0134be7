// The events port: the in-process adapter, and Redis pub/sub between two buses as two instances hold them (each
// its own connections) on a real redis-server: delivery, key-prefix isolation, unsubscribing, the resubscription
// after the subscriber connection is cut, and the wake-up latency from one instance's publish to the other's listener.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessEventBus } from '../../src/store/event-bus.js';
import { RECONNECTED, RedisEventBus } from '../../src/store/redis-event-bus.js';
import { hasRedisServer, REDIS_MISSING, type RedisServer, startRedisServer } from '../support/redis-server.js';

const run = promisify(execFile);
const SAMPLES = 300;

const until = async (check: () => boolean, ms = 5_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describe('InProcessEventBus', () => {
  it("delivers a topic's messages to its listeners only, until they unsubscribe", async () => {
    const bus = new InProcessEventBus();
    const heard: string[] = [];
    const off = bus.subscribe('a', (m) => heard.push(`a1:${m}`));
    bus.subscribe('a', () => {
      throw new Error('a listener that fails');
    });
    bus.subscribe('a', (m) => heard.push(`a3:${m}`));
    bus.subscribe('b', (m) => heard.push(`b:${m}`));
    await bus.publish('a', 'x');
    off();
    off();
    await bus.publish('a', 'y');
    expect(heard).toEqual(['a1:x', 'a3:x', 'a3:y']);
    await bus.close();
  });
});

describe.skipIf(!hasRedisServer())(
  `RedisEventBus (two instances on one redis-server)${hasRedisServer() ? '' : ` (skipped: ${REDIS_MISSING})`}`,
  () => {
    let redis: RedisServer;
    const buses: RedisEventBus[] = [];
    /** A bus whose connections are up: a publish while the publisher's is still coming up fails at once, by design. */
    const bus = async (keyPrefix = 'registry-test:') => {
      const created = new RedisEventBus({ url: redis.url, keyPrefix });
      buses.push(created);
      await created.ready();
      return created;
    };

    beforeAll(async () => {
      redis = await startRedisServer();
    });

    afterAll(async () => {
      await Promise.all(buses.map((b) => b.close()));
      await redis?.stop();
    });

    it("carries a message to the other instance's listeners, and to its own once", async () => {
      const [a, b] = await Promise.all([bus(), bus()]);
      const onA: string[] = [];
      const onB: string[] = [];
      a.subscribe('session:1', (m) => onA.push(m));
      b.subscribe('session:1', (m) => onB.push(m));
      b.subscribe('session:2', (m) => onB.push(`other:${m}`));
      await Promise.all([a.flush(), b.flush()]);
      await a.publish('session:1', 'completed');
      await until(() => onB.length === 1);
      // the copy Redis sends back to A is dropped: A heard it at once, and only then
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(onA).toEqual(['completed']);
      expect(onB).toEqual(['completed']);
    });

    it('keeps services under another key prefix apart, and stops delivering after the last unsubscribe', async () => {
      const [a, b, elsewhere] = await Promise.all([bus(), bus(), bus('another-service:')]);
      const onB: string[] = [];
      const onElsewhere: string[] = [];
      const off = b.subscribe('session:3', (m) => onB.push(m));
      elsewhere.subscribe('session:3', (m) => onElsewhere.push(m));
      await Promise.all([b.flush(), elsewhere.flush()]);
      await a.publish('session:3', 'proof-received');
      await until(() => onB.length === 1);
      off();
      await b.flush();
      const admin = new Redis(redis.url);
      expect(await admin.pubsub('NUMSUB', 'registry-test:events:session:3')).toEqual(['registry-test:events:session:3', 0]);
      admin.disconnect();
      await a.publish('session:3', 'completed');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(onB).toEqual(['proof-received']);
      expect(onElsewhere).toEqual([]);
    });

    it('subscribes again after its connection is cut, telling its listeners that messages may have been missed', async () => {
      const [a, b] = await Promise.all([bus(), bus()]);
      const onB: string[] = [];
      b.subscribe('session:4', (m) => onB.push(m));
      await b.flush();
      const admin = new Redis(redis.url);
      // every subscriber connection of the server: B's, and the other tests' buses'
      await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
      admin.disconnect();
      await until(() => onB.includes(RECONNECTED));
      // the SUBSCRIBE of the reconnect is under way; a publish is heard once it is in place
      await until(() => {
        void a.publish('session:4', 'completed').catch(() => undefined);
        return onB.includes('completed');
      });
      expect(onB[0]).toBe(RECONNECTED);
    });

    it('fails a publish at once while Redis is away, and ready() resolves once it is back', async () => {
      const late = await startRedisServer();
      await late.stop();
      const errors: Error[] = [];
      const early = new RedisEventBus({ url: late.url, keyPrefix: 'registry-test:', onError: (error) => errors.push(error) });
      buses.push(early);
      let ready = false;
      const readied = early.ready().then(() => {
        ready = true;
      });
      await expect(early.publish('session:5', 'completed')).rejects.toThrow();
      await until(() => errors.length > 0);
      expect(ready).toBe(false);
      await late.restart();
      try {
        await readied;
        await early.publish('session:5', 'completed');
      } finally {
        await late.stop();
      }
    });

    it('wakes a listener in another process with every publish, in order', async () => {
      // instance A is a process of its own (its event loop and connection apart from B's), publishing numbered
      // messages 2 ms apart
      const b = await bus();
      const received: number[] = [];
      b.subscribe('session:order', (sent) => {
        if (sent !== 'connected') received.push(Number(sent));
      });
      await b.flush();
      const publisher = [
        `import { RedisEventBus } from './src/store/redis-event-bus.ts';`,
        `const a = new RedisEventBus({ url: ${JSON.stringify(redis.url)}, keyPrefix: 'registry-test:' });`,
        // a publish fails at once until the connection is up: the first one that passes is not counted
        `while (!(await a.publish('session:order', 'connected').then(() => true, () => false))) await new Promise((r) => setTimeout(r, 10));`,
        `for (let i = 0; i < ${SAMPLES}; i++) { await a.publish('session:order', String(i)); await new Promise((r) => setTimeout(r, 2)); }`,
        'await a.close();',
      ].join('\n');
      await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', publisher]);
      await until(() => received.length === SAMPLES);
      expect(received).toEqual(Array.from({ length: SAMPLES }, (_, i) => i));
    }, 30_000);
  },
);
