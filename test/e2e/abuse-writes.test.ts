// The security review's attacks on writes, against the service as users start it (`node dist/main.js`, its own
// DATA_DIR, default limits), one test per finding:
//   - an A2A flood and a chat flood at the scale that worked (190 kB bodies, as fast as possible for a few seconds;
//     before, 70 MB in 15 s and 78 MB in 10 s) are stopped (413, then the per-client budget: -32602 / 429), the store
//     grows by a bounded amount (the sqlite file and its write-ahead log measured before and after, and the rows
//     themselves), and another client is served meanwhile (health 200, its A2A query answered);
//   - a chat status question carrying a session token leaves no token in the store (its rows and its file's bytes);
//   - a deregistered agent's census entry is not counted.
// The floods also measure what one client at the limits adds to the store per hour (bytes kept per accepted message ×
// the rate), printed and checked against the bound computed from the limits (README, Operations).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TASK_LIFETIMES } from '../../src/a2a/task-store.js';
import { type RequestSigner, signedHeaders } from '../../src/core/signed-request.js';
import { DEFAULT_CHAT_HISTORY } from '../../src/demo/chat.js';
import { DEFAULT_AGENT_MESSAGE_LIMITS } from '../../src/services/agent-message-limits.js';
import { startServiceProcess, tsxBin as tsx } from '../support/service-process.js';

const run = promisify(execFile);
type Json = Record<string, unknown>;

/** The body size that filled the disk. */
const ATTACK_BODY_BYTES = 190 * 1024;
const FLOOD_MS = 3_000;
const FLOOD_WORKERS = 8;
const { perMinute, maxMessageBytes } = DEFAULT_AGENT_MESSAGE_LIMITS;
/**
 * The most one accepted message adds to the store, from the limits. An A2A conversation waiting for input (the
 * longest-kept kind after a session) holds the message (at most maxMessageBytes as JSON, plus the ids the task gives
 * it), the request fields it gave, kept for the next turn (at most the message again), the agent's question twice
 * (status and history; its words at most 1,000 characters, also in its data part's error, with the list of intents:
 * about 2.5 kB each) and its ids and status; sealed (base64url, 4/3), in a row with its key and creator. A chat
 * history holds the question and the answer, each at most maxMessageBytes. 18 kB at the defaults.
 */
const MAX_KEPT_PER_MESSAGE = Math.ceil((4 / 3) * (2 * maxMessageBytes + 5_200)) + 256;
/** The write-ahead log between checkpoints (sqlite's 1,000 pages), which a flood of refused requests also fills. */
const WAL_CEILING = 1_000 * 4_096 + 64 * 1_024;
const HOUR_PER_MINUTE = 60;

describe('abuse of writes, against a started service', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'abuse-writes-'));
  const storePath = join(dataDir, 'store.sqlite');
  let base: string;
  let stop: () => Promise<void>;
  let db: Database.Database;

  beforeAll(async () => {
    ({ base, stop } = await startServiceProcess(dataDir));
    db = new Database(storePath, { readonly: true, fileMustExist: true });
  }, 60_000);

  afterAll(async () => {
    db?.close();
    await stop?.();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The store on disk: the database file and its write-ahead log. */
  const fileBytes = (): number => statSync(storePath).size + (statSync(`${storePath}-wal`, { throwIfNoEntry: false })?.size ?? 0);
  /** What the rows under `prefix` hold (keys and values), as the store keeps them. */
  const rowBytes = (prefix: string): number =>
    db
      .prepare<[string, string], number>(
        'SELECT COALESCE(SUM(LENGTH(CAST(key AS BLOB)) + LENGTH(CAST(value AS BLOB))), 0) FROM kv WHERE key >= ? AND key < ?',
      )
      .pluck()
      .get(prefix, `${prefix}\uffff`) ?? 0;
  const rows = (prefix: string): number =>
    db.prepare<[string, string], number>('SELECT COUNT(*) FROM kv WHERE key >= ? AND key < ?').pluck().get(prefix, `${prefix}\uffff`) ?? 0;

  const post = async (
    path: string,
    body: string,
    from: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: unknown; retryAfter: string | null }> => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': from, ...headers },
      body,
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined, retryAfter: res.headers.get('retry-after') };
  };

  /** `send` from FLOOD_WORKERS workers at once, each again as soon as answered, for FLOOD_MS: every outcome, by kind. */
  async function flood(send: () => Promise<string>): Promise<Map<string, number>> {
    const outcomes = new Map<string, number>();
    const until = Date.now() + FLOOD_MS;
    await Promise.all(
      Array.from({ length: FLOOD_WORKERS }, async () => {
        while (Date.now() < until) {
          // a server that answers 413 before reading may close the connection under a body still being sent
          const outcome = await send().catch((error: unknown) => `closed: ${(error as Error).cause ?? (error as Error).message}`);
          outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
        }
      }),
    );
    return outcomes;
  }
  /**
   * Waits, if need be, for a minute window with room for a whole flood. The rate's sliding window is estimated from two
   * aligned one-minute windows (sliding-window-limiter.ts): a flood that straddles their boundary may let a couple
   * more through than the budget, so a flood counted exactly must stay within one.
   */
  async function inOneWindow(): Promise<void> {
    const left = 60_000 - (Date.now() % 60_000);
    if (left < FLOOD_MS + 10_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
  }
  const total = (outcomes: Map<string, number>, kind?: string): number =>
    [...outcomes].filter(([outcome]) => kind === undefined || outcome === kind).reduce((sum, [, count]) => sum + count, 0);

  /** A v0.3 message/send of one part. */
  const a2aSend = (part: object, id: string | number = 1): string =>
    JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'message/send',
      params: { message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [part] } },
    });
  const a2aMessage = (text: string): string => a2aSend({ kind: 'text', text });
  /** What an A2A answer was: a task in some state, or a JSON-RPC error with its REST status. */
  const a2aOutcome = ({ status, body }: { status: number; body: unknown }): string => {
    const answer = body as { result?: { status?: { state?: string } }; error?: { code: number; data?: { status?: number } } };
    if (answer?.result) return `${status} task ${answer.result.status?.state}`;
    return `${status} error ${answer?.error?.code}${answer?.error?.data?.status ? ` (${answer.error.data.status})` : ''}`;
  };

  /** Another client, meanwhile: health, and an A2A query of the demo agent. */
  async function victimServed(): Promise<void> {
    expect((await fetch(`${base}/api/health`)).status).toBe(200);
    const lookup = await post(
      '/api/a2a',
      a2aSend({ kind: 'data', data: { intent: 'lookup', agentId: 1, network: 'testnet' } }, 'victim'),
      '192.0.2.200',
    );
    expect(a2aOutcome(lookup), JSON.stringify(lookup.body)).toBe('200 task completed');
  }

  /** Prints what one client at the limits adds per hour, from what the flood kept per accepted message. */
  function report(path: string, accepted: number, keptBytes: number, fileGrowth: number, ttlMs: number): number {
    const perMessage = keptBytes / accepted;
    const perHour = perMessage * perMinute * HOUR_PER_MINUTE;
    const bound = MAX_KEPT_PER_MESSAGE * perMinute * HOUR_PER_MINUTE;
    console.log(
      `${path}: ${accepted} accepted in the flood, ${Math.round(perMessage)} bytes kept per message (bound ${MAX_KEPT_PER_MESSAGE}); ` +
        `at ${perMinute}/min one client adds ${(perHour / 1e6).toFixed(1)} MB/h (bound ${(bound / 1e6).toFixed(1)} MB/h), ` +
        `kept ${ttlMs / 60_000} min, so at most ${((perHour * Math.min(ttlMs, 3_600_000)) / 3_600_000 / 1e6).toFixed(1)} MB at any time; ` +
        `the file (with its write-ahead log) grew ${(fileGrowth / 1e6).toFixed(2)} MB during the flood`,
    );
    return perMessage;
  }

  it('an A2A flood of 190 kB bodies is refused unread (413), one of full-size messages stops at the budget; the store grows a bounded amount; another client is served', async () => {
    const attacker = '203.0.113.66';
    const [fileBefore, tasksBefore, bytesBefore] = [fileBytes(), rows('a2a:task:'), rowBytes('a2a:')];

    const huge = a2aMessage('x'.repeat(ATTACK_BODY_BYTES));
    const hugeFlood = flood(async () => a2aOutcome(await post('/api/a2a', huge, attacker)));
    await victimServed();
    const hugeOutcomes = await hugeFlood;
    expect(total(hugeOutcomes), JSON.stringify([...hugeOutcomes])).toBeGreaterThan(20);
    // every answer a 413 (with its JSON-RPC error object): nothing read, nothing stored
    expect([...hugeOutcomes.keys()].filter((outcome) => !outcome.startsWith('413 error -32600') && !outcome.startsWith('closed'))).toEqual([]);
    expect(rows('a2a:task:')).toBe(tasksBefore + 1); // the victim's lookup alone

    // the largest message allowed, made to be kept twice: a lookup without its agent leaves a conversation waiting
    // for input (the longest-kept kind), which keeps the message and, for the next turn, the fields it gave
    const full = () => a2aSend({ kind: 'data', data: { intent: 'lookup', network: 'testnet', humanAddress: 'x'.repeat(maxMessageBytes - 250) } });
    await inOneWindow();
    const fullFlood = flood(async () => a2aOutcome(await post('/api/a2a', full(), attacker)));
    await victimServed();
    const outcomes = await fullFlood;
    const accepted = total(outcomes, '200 task input-required');
    expect(accepted, JSON.stringify([...outcomes])).toBeGreaterThanOrEqual(perMinute);
    // the sliding window lets at most the budget through within the minute
    expect(accepted).toBeLessThanOrEqual(perMinute);
    expect(total(outcomes, '200 error -32602 (429)')).toBe(total(outcomes) - accepted);
    await victimServed();

    const kept = rowBytes('a2a:') - bytesBefore;
    const fileGrowth = fileBytes() - fileBefore;
    expect(rows('a2a:task:') - tasksBefore).toBe(accepted + 3); // the victim's three lookups too
    const perMessage = report('POST /api/a2a', accepted, kept, fileGrowth, DEFAULT_TASK_LIFETIMES.conversationMs);
    expect(perMessage).toBeLessThanOrEqual(MAX_KEPT_PER_MESSAGE);
    expect(fileGrowth).toBeLessThanOrEqual((accepted + 3) * MAX_KEPT_PER_MESSAGE + WAL_CEILING);
  }, 60_000);

  it('a chat flood of 190 kB bodies and of full-size queries stops at 413 and the budget (429 with Retry-After); the store grows a bounded amount; another client is served', async () => {
    const attacker = '203.0.113.77';
    const [fileBefore, bytesBefore] = [fileBytes(), rowBytes('demo:chat:')];
    let session = 0;
    const chat = async (query: string) => {
      const answer = await post('/api/demo/chat?network=testnet', JSON.stringify({ query, session_id: `flood-${++session}` }), attacker);
      if (answer.status === 429) expect(Number(answer.retryAfter)).toBeGreaterThan(0);
      return `${answer.status}`;
    };

    const hugeFlood = flood(() => chat('x'.repeat(ATTACK_BODY_BYTES)));
    await victimServed();
    const huge = await hugeFlood;
    // each is counted before its body is read: 413 while the budget lasts, 429 after
    expect([...huge.keys()].filter((outcome) => outcome !== '413' && outcome !== '429' && !outcome.startsWith('closed'))).toEqual([]);
    expect(total(huge, '429')).toBeGreaterThan(0);
    expect(rows('demo:chat:')).toBe(0);

    // a fresh client with the largest query allowed, a new session each time
    const other = '203.0.113.78';
    let fresh = 0;
    await inOneWindow();
    const fullFlood = flood(async () => {
      const answer = await post(
        '/api/demo/chat?network=testnet',
        JSON.stringify({ query: 'q'.repeat(maxMessageBytes), session_id: `full-${++fresh}` }),
        other,
      );
      return `${answer.status}`;
    });
    await victimServed();
    const outcomes = await fullFlood;
    const accepted = total(outcomes, '200');
    expect(accepted, JSON.stringify([...outcomes])).toBe(perMinute);
    expect(total(outcomes, '429')).toBe(total(outcomes) - accepted);
    await victimServed();

    const kept = rowBytes('demo:chat:') - bytesBefore;
    const fileGrowth = fileBytes() - fileBefore;
    expect(rows('demo:chat:')).toBe(accepted);
    const perMessage = report('POST /api/demo/chat', accepted, kept, fileGrowth, DEFAULT_CHAT_HISTORY.ttlMs);
    expect(perMessage).toBeLessThanOrEqual(MAX_KEPT_PER_MESSAGE);
    expect(fileGrowth).toBeLessThanOrEqual(accepted * MAX_KEPT_PER_MESSAGE + WAL_CEILING);
  }, 60_000);

  it("a chat status question with a session token stores no token: not in the store's rows, not in its file's bytes", async () => {
    const opened = await post('/api/agent/register', JSON.stringify({ mode: 'wallet-free', network: 'testnet' }), '192.0.2.31');
    expect(opened.status).toBe(200);
    const token = (opened.body as { sessionToken: string }).sessionToken;
    const asked = await post('/api/demo/chat?network=testnet', JSON.stringify({ query: `status token ${token}`, session_id: 'mine' }), '192.0.2.31');
    expect(asked.status).toBe(200);
    expect(asked.body).toMatchObject({ reply: 'Session stage: qr-ready' });
    // the same question over A2A: its task keeps the answer alone
    const overA2a = await post('/api/a2a', a2aMessage(`status token ${token}`), '192.0.2.31');
    expect(a2aOutcome(overA2a)).toBe('200 task completed');

    const history = db.prepare<[], string>("SELECT value FROM kv WHERE key = 'demo:chat:testnet:anonymous:mine'").pluck().get();
    expect(history).toContain('status token [redacted token]');
    // the token, and the part of it that holds the generated key (its ciphertext), are nowhere
    const ciphertext = token.split('.')[3] as string;
    const values = db.prepare<[], { key: string; value: string }>('SELECT key, value FROM kv').all();
    for (const { key, value } of values) {
      expect(value.includes(token) || key.includes(token), key).toBe(false);
      expect(value.includes(ciphertext), key).toBe(false);
    }
    for (const file of [storePath, `${storePath}-wal`]) {
      const bytes = readFileSync(file, { flag: 'r' });
      expect(bytes.includes(ciphertext), file).toBe(false);
    }
  });

  it("a deregistered agent's census entry is not counted", async () => {
    const documentNumber = `ABUSE${Date.now() % 1_000_000}`;
    const cli = async (...args: string[]): Promise<Json> => {
      const { stdout } = await run(tsx, ['src/identity-app/cli.ts', ...args], { env: { ...process.env, DATA_DIR: dataDir } });
      return JSON.parse(stdout.trim().split('\n').at(-1) as string) as Json;
    };
    const status = async (kind: string, token: string): Promise<Json> =>
      (await (await fetch(`${base}/api/agent/${kind}/status?token=${encodeURIComponent(token)}`)).json()) as Json;

    const opened = (
      await post(
        '/api/agent/register',
        JSON.stringify({ mode: 'wallet-free', network: 'testnet', disclosures: { nationality: true, minimumAge: 18 } }),
        '192.0.2.41',
      )
    ).body as Json;
    expect(await cli('approve', opened['deepLink'] as string, '--document-number', documentNumber, '--nationality', 'NLD')).toMatchObject({
      status: 'submitted',
      callback: 200,
    });
    expect(await status('register', opened['sessionToken'] as string)).toMatchObject({ stage: 'completed' });
    const exported = (await post('/api/agent/register/export', JSON.stringify({ token: opened['sessionToken'] }), '192.0.2.41')).body as Json;
    const agent: RequestSigner = { type: 'secp256k1', account: privateKeyToAccount(exported['privateKey'] as `0x${string}`) };
    // the service's own demo agent reads the census
    const demoKey = (JSON.parse(readFileSync(join(dataDir, 'demo-agent-testnet.json'), 'utf8')) as { privateKey: `0x${string}` }).privateKey;
    const reader: RequestSigner = { type: 'secp256k1', account: privateKeyToAccount(demoKey) };
    const path = '/api/demo/census?network=testnet';
    const census = async (method: 'GET' | 'POST', signer: RequestSigner) => {
      const body = method === 'POST' ? '{}' : '';
      const headers = await signedHeaders(signer, { method, url: path, body });
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body } : {}),
      });
      return { status: res.status, body: (await res.json()) as Json };
    };

    expect(await census('POST', agent)).toMatchObject({ status: 200, body: { recorded: true, totalAgents: 1 } });
    expect(await census('GET', reader)).toMatchObject({ status: 200, body: { totalAgents: 1, topCountries: [{ country: 'NLD', count: 1 }] } });

    const removal = (
      await post('/api/agent/deregister', JSON.stringify({ network: 'testnet', agentAddress: exported['agentAddress'] }), '192.0.2.41')
    ).body as Json;
    expect(await cli('approve', removal['deepLink'] as string, '--document-number', documentNumber, '--nationality', 'NLD')).toMatchObject({
      status: 'submitted',
      callback: 200,
    });
    expect(await status('deregister', removal['sessionToken'] as string)).toMatchObject({ stage: 'completed' });

    // answers follow the chain within a log poll (200 ms on the local chains): the burn is seen by then
    let after = await census('GET', reader);
    for (let i = 0; i < 20 && after.body['totalAgents'] !== 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = await census('GET', reader);
    }
    expect(after).toMatchObject({ status: 200, body: { totalAgents: 0, topCountries: [], verifiedOver18: 0 } });
    // and its entry left the stored census
    const stored = db.prepare<[], string>("SELECT value FROM kv WHERE key = 'demo:census:testnet'").pluck().get() ?? '{}';
    expect(stored.toLowerCase()).not.toContain((exported['agentAddress'] as string).toLowerCase().slice(2));
  }, 60_000);
});
