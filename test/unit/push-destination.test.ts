// Where A2A push notifications may go: the address rules, the URL check with a controlled resolver, and the
// connect-time guard that refuses a name which resolves to an internal address after the config was saved.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { StreamResponse } from '@a2a-js/sdk';
import { ServerCallContext, type StoredPushNotificationConfig } from '@a2a-js/sdk/server';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPushUrl, guardedLookup, PushTargetRefused, type Resolver, refusalOf } from '../../src/a2a/push-destination.js';
import { WebhookPushSender } from '../../src/a2a/push-sender.js';

const strict = { allowPrivateNetworks: false };
const lenient = { allowPrivateNetworks: true };

/** A resolver answering from a table, as DNS would. */
const resolverOf =
  (table: Record<string, string[]>): Resolver =>
  async (hostname) =>
    (table[hostname] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('refusalOf', () => {
  const notPublic = [
    '127.0.0.1',
    '127.8.9.10',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '198.18.0.1',
    '192.0.2.1',
    '::1',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    '::ffff:10.0.0.1',
    '::ffff:127.0.0.1',
    '::ffff:169.254.169.254',
    '64:ff9b::a00:1',
    '2002:a00:1::1',
    '2001:0:a00:1::1',
    '2001:db8::1',
    // IPv6 outside global unicast: IPv4-compatible, SIIT, deprecated site-local, discard
    '::127.0.0.1',
    '::ffff:0:10.0.0.1',
    'fec0::1',
    '100::1',
  ];
  const never = ['0.0.0.0', '0.1.2.3', '224.0.0.1', '239.255.255.250', '255.255.255.255', '240.0.0.1', '::', 'ff02::1'];
  const publicAddresses = ['8.8.8.8', '1.1.1.1', '93.184.215.14', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'];

  it.each(notPublic)('refuses %s unless private networks are allowed', (address) => {
    expect(refusalOf(address, strict)).toMatch(/not a public address/);
    expect(refusalOf(address, lenient)).toBeUndefined();
  });

  it.each(never)('always refuses %s', (address) => {
    expect(refusalOf(address, strict)).toMatch(/not a unicast address/);
    expect(refusalOf(address, lenient)).toMatch(/not a unicast address/);
  });

  it.each(publicAddresses)('accepts the public address %s', (address) => {
    expect(refusalOf(address, strict)).toBeUndefined();
  });

  it('refuses what is not an address', () => {
    expect(refusalOf('example.com', lenient)).toMatch(/not an IP address/);
  });
});

describe('checkPushUrl', () => {
  const resolve = resolverOf({
    'hooks.example': ['93.184.215.14'],
    'mixed.example': ['93.184.215.14', '10.0.0.7'],
    'internal.example': ['192.168.0.10'],
    localhost: ['127.0.0.1', '::1'],
  });

  it('accepts an https URL whose host resolves to public addresses only', async () => {
    const url = await checkPushUrl('https://hooks.example/a2a?x=1', strict, resolve);
    expect(url.href).toBe('https://hooks.example/a2a?x=1');
  });

  it.each([
    ['http://hooks.example/a2a', /must use https, not http/],
    ['ftp://hooks.example/a2a', /must use https/],
    ['not a url', /absolute http\(s\) URL/],
    ['https://user:pw@hooks.example/a2a', /must not carry credentials/],
    ['https://mixed.example/a2a', /cannot go to mixed\.example: 10\.0\.0\.7 is not a public address/],
    ['https://internal.example/a2a', /not a public address/],
    ['https://localhost:8443/a2a', /not a public address/],
    ['https://127.0.0.1/a2a', /127\.0\.0\.1 is not a public address/],
    ['https://[::1]/a2a', /::1 is not a public address/],
    ['https://[::ffff:a9fe:a9fe]/latest/meta-data', /not a public address/],
    ['https://169.254.169.254/latest/meta-data', /not a public address/],
    ['https://nowhere.example/a2a', /does not resolve/],
    [`https://hooks.example/${'a'.repeat(2100)}`, /longer than 2048/],
  ])('refuses %s', async (url, message) => {
    const check = checkPushUrl(url, strict, resolve);
    await expect(check).rejects.toBeInstanceOf(PushTargetRefused);
    await expect(check).rejects.toThrow(message);
  });

  it('allows private destinations and plain http when the operator allows private networks', async () => {
    await expect(checkPushUrl('http://localhost:9999/hook', lenient, resolve)).resolves.toBeInstanceOf(URL);
    await expect(checkPushUrl('http://0.0.0.0:9999/hook', lenient, resolve)).rejects.toThrow(/not a unicast address/);
  });
});

describe('guardedLookup', () => {
  const lookup = (hostname: string, all: boolean, resolve: Resolver, policy = strict) =>
    new Promise<unknown>((done, fail) =>
      guardedLookup(policy, resolve)(hostname, { all }, (error: Error | null, address: unknown) => (error ? fail(error) : done(address))),
    );

  it('answers public addresses in both call shapes', async () => {
    const resolve = resolverOf({ 'hooks.example': ['93.184.215.14', '2606:4700:4700::1111'] });
    expect(await lookup('hooks.example', false, resolve)).toBe('93.184.215.14');
    expect(await lookup('hooks.example', true, resolve)).toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:4700:4700::1111', family: 6 },
    ]);
  });

  it('refuses a name that now resolves to an internal address', async () => {
    await expect(lookup('rebound.example', true, resolverOf({ 'rebound.example': ['10.0.0.5'] }))).rejects.toThrow(/not a public address/);
  });
});

describe('WebhookPushSender refuses at connect time what the policy refuses', () => {
  let receiver: Server;
  let port: number;
  const received: IncomingMessage[] = [];

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      received.push(req);
      req.resume();
      req.on('end', () => res.end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    port = (receiver.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

  const statusUpdate: StreamResponse = {
    payload: { $case: 'statusUpdate', value: { taskId: 'task-1', contextId: 'ctx-1', status: undefined, metadata: undefined } },
  };

  const senderFor = (url: string, policy: typeof strict, logs: string[]) => {
    const config: StoredPushNotificationConfig = {
      config: { tenant: '', id: 'c1', taskId: 'task-1', url, token: 'secret-token', authentication: undefined },
      wireVersion: '1.0',
    };
    const logger = pino(
      { level: 'debug' },
      new Writable({
        write(chunk: Buffer, _encoding, next) {
          logs.push(chunk.toString());
          next();
        },
      }),
    );
    return new WebhookPushSender({
      configs: { loadWithMetadata: async () => [config] },
      policy,
      logger,
      userAgent: 'test',
      retryDelaysMs: [],
      // the name a caller registered while it pointed elsewhere now resolves to this machine
      resolve: resolverOf({ 'rebound.example': ['127.0.0.1'] }),
    });
  };

  it('does not connect to a name rebound to loopback, and logs it with the origin only, without the token', async () => {
    const logs: string[] = [];
    await senderFor(`http://rebound.example:${port}/hooks/T0001/SECRET?key=abc`, strict, logs).send(statusUpdate, new ServerCallContext());
    expect(received).toHaveLength(0);
    const line = JSON.parse(logs.find((l) => l.includes('not delivered'))!) as Record<string, unknown>;
    expect(line).toMatchObject({ taskId: 'task-1', target: `http://rebound.example:${port}`, attempts: 1 });
    expect(String(line['reason'])).toMatch(/127\.0\.0\.1 is not a public address/);
    expect(logs.join('')).not.toMatch(/SECRET|key=abc|secret-token/);
  });

  it('delivers to the same name when private networks are allowed, with the token header', async () => {
    const logs: string[] = [];
    await senderFor(`http://rebound.example:${port}/hook`, lenient, logs).send(statusUpdate, new ServerCallContext());
    expect(received).toHaveLength(1);
    expect(received[0]!.headers['x-a2a-notification-token']).toBe('secret-token');
    expect(received[0]!.headers['content-type']).toBe('application/a2a+json');
    expect(logs.some((l) => l.includes('push notification delivered'))).toBe(true);
  });
});
