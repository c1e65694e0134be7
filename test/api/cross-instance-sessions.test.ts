// Two instances of the services on one Redis (each its own store connection and event bus, the same session secret)
// over the same test chains, as two processes behind a load balancer hold them:
// - a watch on one instance wakes when the other records the identity app's report, with its poll set to a minute,
//   so only the events port can have woken it;
// - instances that conclude the same thing from the chain at the same moment write the session once: of two racing
//   writers the later one neither takes back nor overwrites what the first wrote;
// - a watch (an open A2A task) is followed by one instance: another takes it over only once the first let it go or
//   died (its lease expired), and an instance restarted under the same id takes its own back at once.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proofRequestFromDeepLink, prove } from '../../src/identity-app/index.js';
import { createServices, type Services } from '../../src/services/index.js';
import { newSessionId, type RegistrationRecord } from '../../src/sessions/session-record.js';
import { SessionRepository } from '../../src/sessions/session-repository.js';
import { SessionTokens } from '../../src/sessions/session-token.js';
import { WatchLeases } from '../../src/sessions/watch-leases.js';
import { RedisEventBus } from '../../src/store/redis-event-bus.js';
import { RedisStore } from '../../src/store/redis-store.js';
import { hasRedisServer, REDIS_MISSING, type RedisServer, startRedisServer } from '../support/redis-server.js';
import { callbackTokenOf, deployTestNetworks, newDocument, type TestNetworks } from '../support/registration-flow.js';

const PREFIX = 'cross-instance-test:';

interface Instance {
  store: RedisStore;
  events: RedisEventBus;
  services: Services;
}

describe.skipIf(!hasRedisServer())(`sessions across two instances sharing one Redis${hasRedisServer() ? '' : ` (skipped: ${REDIS_MISSING})`}`, () => {
  let redis: RedisServer;
  let net: TestNetworks;
  const sessionSecret = randomBytes(32);
  const instances: Instance[] = [];
  let a: Instance;
  let b: Instance;

  const instance = async (): Promise<Instance> => {
    const store = await RedisStore.connect({ url: redis.url, keyPrefix: PREFIX });
    const events = new RedisEventBus({ url: redis.url, keyPrefix: PREFIX });
    // a publish before the connection is up fails (a watch would then wait for its poll)
    await events.ready();
    const services = createServices({
      chains: net.chains,
      store,
      events,
      sessionSecret,
      publicUrl: 'http://127.0.0.1:3000',
      deepLinkScheme: 'selfapp',
      appName: 'Agent Identity Registry',
      // a minute between status reads: a watch that ends sooner was woken
      sessionWatch: { pollIntervalMs: 60_000 },
    });
    const created = { store, events, services };
    instances.push(created);
    return created;
  };

  /** Resolves once `count` instances listen to the session's channel. */
  const listening = async (sessionId: string, count: number): Promise<void> => {
    const admin = new Redis(redis.url);
    try {
      for (let i = 0; i < 500; i++) {
        const [, subscribers] = (await admin.pubsub('NUMSUB', `${PREFIX}events:session:${sessionId}`)) as [string, number];
        if (subscribers >= count) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`nobody listens to session ${sessionId}`);
    } finally {
      admin.disconnect();
    }
  };

  beforeAll(async () => {
    [redis, net] = await Promise.all([startRedisServer(), deployTestNetworks()]);
    [a, b] = await Promise.all([instance(), instance()]);
  });

  afterAll(async () => {
    for (const { services, events, store } of instances) {
      services.watcher.stopAll();
      await services.queries.stop();
      await events.close();
      await store.close();
    }
    await redis?.stop();
  });

  it("wakes a watch on instance B at once when instance A records the identity app's report", async () => {
    const session = await a.services.registration.start({ mode: 'wallet-free', network: 'testnet' });
    const { id } = await a.services.registration.peek(session.sessionToken);
    const watch = b.services.watcher.reserve('watch-on-b');
    const ended = watch.follow(session.sessionToken, 'qr-ready', () => undefined);
    await listening(id, 1);
    const reported = performance.now();
    await a.services.registration.callback(callbackTokenOf(session.deepLink), { status: 'error', error: 'The human declined in the app' });
    const end = await ended;
    const wokenAfterMs = performance.now() - reported;
    console.log(`a watch on instance B ended ${wokenAfterMs.toFixed(1)} ms after instance A recorded the report (poll: 60 s)`);
    expect(end).toMatchObject({ outcome: 'failed', status: { stage: 'failed', error: 'The human declined in the app' } });
    expect(wokenAfterMs).toBeLessThan(5_000);
  });

  it('completes a session once when both instances read the chain at the same moment', async () => {
    const session = await a.services.registration.start({ mode: 'wallet-free', network: 'testnet' });
    const { id } = await a.services.registration.peek(session.sessionToken);
    // the human proves on chain; the app's report never arrives, so only status reads move the session
    const proof = await prove({
      client: net.testnet.client,
      wallet: await net.testnet.newWallet(),
      attester: net.testnet.attester,
      request: proofRequestFromDeepLink(session.deepLink),
      document: newDocument(),
    });
    expect(proof.status).toBe('submitted');
    // a third party counts the writes as the events port tells them
    const observer = new RedisEventBus({ url: redis.url, keyPrefix: PREFIX });
    await observer.ready();
    const notices: string[] = [];
    observer.subscribe(`session:${id}`, (notice) => notices.push(notice));
    await observer.flush();

    const reads = await Promise.all(
      Array.from({ length: 8 }, (_, i) => ((i % 2 === 0 ? a : b) as Instance).services.registration.status(session.sessionToken)),
    );
    expect(new Set(reads.map((read) => read.stage))).toEqual(new Set(['completed']));
    expect(new Set(reads.map((read) => read.agentId)).size).toBe(1);
    expect(new Set(reads.map((read) => read.txHash))).toEqual(new Set([proof.status === 'submitted' ? proof.txHash : undefined]));
    const stored = (await new SessionRepository(a.store).get(id, 'register')) as RegistrationRecord;
    // the record one writer completed, and the notices of one write (published after the write: awaited, then a
    // second one given time to arrive)
    const completions = () => notices.filter((notice) => notice.startsWith('["completed"')).length;
    await expect.poll(completions, { timeout: 5_000 }).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(completions()).toBe(1);
    expect(stored).toMatchObject({ stage: 'completed', agentId: String(reads[0]?.agentId) });
    await observer.close();
  });

  it('never takes back a completion nor lets a stage move backwards, whichever of two racing writers comes first', async () => {
    const repositories = [new SessionRepository(a.store), new SessionRepository(b.store)] as const;
    const now = Date.now();
    const records = Array.from(
      { length: 30 },
      (): RegistrationRecord => ({
        id: newSessionId(),
        type: 'register',
        stage: 'proof-received',
        network: 'testnet',
        mode: 'wallet-free',
        agentAddress: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
        agentKey: '0x000000000000000000000000f39fd6e51aad88f6f4ce6ab8827279cfffb92266',
        userId: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
        userDefinedData: 'K',
        configIndex: 0,
        disclosures: { minimumAge: 0, ofac: false, nationality: false, name: false },
        exportable: true,
        callback: { receivedAt: now, outcome: 'success', txHash: '0x01' },
        createdAt: now,
        expiresAt: now + SessionTokens.LIFETIME_MS,
      }),
    );
    await Promise.all(records.map((record) => repositories[0].create(record)));
    const [first, second] = repositories;
    const results = await Promise.all(
      records.map((record, i) => {
        // which instance completes and which gives up on the report alternates, and who goes first with it
        const [completer, failer] = i % 2 === 0 ? [first, second] : [second, first];
        const complete = (completedAt: number) =>
          completer.advance(record.id, 'register', (current) => ({ ...current, stage: 'completed', agentId: String(completedAt), completedAt }));
        const fail = () =>
          failer.advance(record.id, 'register', (current) =>
            current.stage === 'proof-received' ? { ...current, stage: 'failed', failureReason: 'report timed out' } : current,
          );
        const reopen = () => failer.advance(record.id, 'register', (current) => ({ ...current, stage: 'qr-ready' }));
        const writes = [() => complete(1), fail, () => complete(2), reopen];
        if (i % 3 === 0) writes.reverse();
        return Promise.all(writes.map((write) => write()));
      }),
    );
    for (const [i, record] of records.entries()) {
      const stored = (await first.get(record.id, 'register')) as RegistrationRecord;
      expect(stored.stage, record.id).toBe('completed');
      // the first completion stands: both completers were answered with it, the later one did not overwrite it
      const completions = (results[i] as RegistrationRecord[]).filter((result) => result.stage === 'completed');
      expect(completions.length).toBeGreaterThanOrEqual(2);
      for (const completion of completions) expect(completion.completedAt).toBe(stored.completedAt);
      expect(stored.agentId).toBe(String(stored.completedAt));
    }
  });

  it('leaves a watch another instance follows to it, and takes it over once it is let go', async () => {
    const session = await a.services.registration.start({ mode: 'wallet-free', network: 'testnet' });
    const watch = a.services.watcher.reserve('task-followed-by-a');
    const followed = watch.follow(session.sessionToken, 'qr-ready', () => undefined);
    await expect.poll(() => b.services.watcher.claim('task-followed-by-a')).toBe(false);
    // A follows it already: claiming its own running watch would start a second follow
    expect(await a.services.watcher.claim('task-followed-by-a')).toBe(false);
    watch.cancel();
    expect(await followed).toEqual({ outcome: 'stopped' });
    await expect.poll(() => b.services.watcher.claim('task-followed-by-a')).toBe(true);
  });

  it("takes a dead instance's watch over once its lease expired, and a restart under the same id takes it back at once", async () => {
    const dying = await RedisStore.connect({ url: redis.url, keyPrefix: PREFIX });
    const other = await RedisStore.connect({ url: redis.url, keyPrefix: PREFIX });
    try {
      const leaseMs = 600;
      new WatchLeases({ store: dying, instanceId: 'instance-1', leaseMs }).hold('task-of-a-dying-instance');
      const elsewhere = new WatchLeases({ store: other, instanceId: 'instance-2', leaseMs });
      await expect.poll(() => elsewhere.claim('task-of-a-dying-instance')).toBe(false);
      // instance 1 restarts (its id derives from its host and DATA_DIR): its own lease is no obstacle
      expect(await new WatchLeases({ store: other, instanceId: 'instance-1', leaseMs }).claim('task-of-a-dying-instance')).toBe(true);
      // instance 1 dies for good: its renewals stop reaching the store, and its lease runs out
      await dying.close();
      await new Promise((resolve) => setTimeout(resolve, leaseMs + 100));
      expect(await elsewhere.claim('task-of-a-dying-instance')).toBe(true);
    } finally {
      await other.close();
    }
  });
});
