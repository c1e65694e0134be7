// JSON-RPC 2.0 at /api/a2a, against the specification's own examples (https://www.jsonrpc.org/specification,
// section 7): the methods there ("subtract", "foobar", "sum"...) are not the endpoint's, so they are -32601, and the
// rest is answered exactly as the specification shows. Then the same rules with the endpoint's real methods:
// notifications are handled and never answered, batches answer per request, a body the server will not read is a
// JSON-RPC error object under 413/415.
import { createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import type { Express } from 'express';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { ChainGateway } from '../../src/chain/gateway.js';
import { MAX_BATCH } from '../../src/http/json-rpc-front.js';
import { DEFAULT_AGENT_MESSAGE_LIMITS } from '../../src/services/agent-message-limits.js';
import { testApp } from '../support/app.js';
import { deployTestSystem } from '../support/chain.js';

const HELP = { message: { kind: 'message', messageId: 'm-help', role: 'user', parts: [{ kind: 'text', text: 'help' }] } };
const V1_HELP = { message: { messageId: 'm-help-1', role: 'ROLE_USER', parts: [{ text: 'help' }] } };
/** help's answer: a message, or a completed task (v0.3 shapes). */
const ANSWERED = expect.objectContaining({ kind: expect.stringMatching(/^(message|task)$/) });

describe('JSON-RPC 2.0 at /api/a2a', () => {
  let app: Express;

  beforeAll(async () => {
    const system = await deployTestSystem('testnet');
    app = testApp(new ChainGateway({ mainnet: system.gateway, testnet: system.gateway })).app;
  });

  /** POSTs the exact text, as JSON. */
  const post = (text: string, headers: Record<string, string> = {}) =>
    request(app).post('/api/a2a').set('Content-Type', 'application/json').set(headers).send(text);

  const notFound = (id: string | number) => ({ jsonrpc: '2.0', id, error: { code: -32601, message: expect.stringMatching(/^Method not found/) } });
  const invalid = (id: string | number | null = null) => ({
    jsonrpc: '2.0',
    id,
    error: { code: -32600, message: expect.stringMatching(/^Invalid Request/) },
  });

  describe("the specification's examples", () => {
    it('rpc call with positional parameters: a method the endpoint does not have is -32601 with the id', async () => {
      const res = await post('{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}');
      expect(res.status).toBe(200);
      expect(res.body).toEqual(notFound(1));
    });

    it('a notification gets no answer at all', async () => {
      for (const text of ['{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}', '{"jsonrpc": "2.0", "method": "foobar"}']) {
        const res = await post(text);
        expect(res.status, text).toBe(204);
        expect(res.text, text).toBe('');
      }
    });

    it('rpc call of non-existent method: -32601', async () => {
      const res = await post('{"jsonrpc": "2.0", "method": "foobar", "id": "1"}');
      expect(res.status).toBe(200);
      expect(res.body).toEqual(notFound('1'));
    });

    it('rpc call with invalid JSON: -32700, id null', async () => {
      const res = await post('{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringMatching(/^Parse error/) } });
    });

    it('rpc call with invalid Request object: -32600, id null', async () => {
      const res = await post('{"jsonrpc": "2.0", "method": 1, "params": "bar"}');
      expect(res.status).toBe(200);
      expect(res.body).toEqual(invalid());
    });

    it('rpc call Batch, invalid JSON: one -32700', async () => {
      const res = await post('[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method"\n]');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.any(String) } });
    });

    it('rpc call with an empty Array: one -32600 (not an array)', async () => {
      const res = await post('[]');
      expect(res.status).toBe(200);
      expect(res.body).toEqual(invalid());
    });

    it('rpc call with an invalid Batch (but not empty): an array of one -32600', async () => {
      const res = await post('[1]');
      expect(res.status).toBe(200);
      expect(res.body).toEqual([invalid()]);
    });

    it('rpc call with invalid Batch: an array of three -32600', async () => {
      const res = await post('[1,2,3]');
      expect(res.status).toBe(200);
      expect(res.body).toEqual([invalid(), invalid(), invalid()]);
    });

    it('rpc call Batch: one answer per request that is not a notification, in order', async () => {
      const res = await post(`[
        {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
        {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
        {"jsonrpc": "2.0", "method": "get_data", "id": "9"}
      ]`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([notFound('1'), notFound('2'), invalid(), notFound('5'), notFound('9')]);
    });

    it('rpc call Batch (all notifications): nothing', async () => {
      const res = await post(
        '[{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]}, {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}]',
      );
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
    });
  });

  describe('request objects', () => {
    it.each([
      ['null', 'null'],
      ['a number', '1'],
      ['a string', '"message/send"'],
      ['true', 'true'],
    ])('JSON that is not an object (%s) is -32600, not a parse error', async (_name, text) => {
      const res = await post(text);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(invalid());
    });

    it.each([
      ['no body', ''],
      ['blanks', '  \n '],
      ['half an object', '{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {'],
    ])('%s is -32700', async (_name, text) => {
      const res = await post(text);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    });

    it.each([
      ['no jsonrpc', { id: 7, method: 'message/send', params: HELP }, /jsonrpc must be exactly "2.0"/],
      ['jsonrpc 1.0', { jsonrpc: '1.0', id: 7, method: 'message/send', params: HELP }, /jsonrpc/],
      ['no method', { jsonrpc: '2.0', id: 7, params: HELP }, /method must be a string/],
      ['an empty method', { jsonrpc: '2.0', id: 7, method: '', params: HELP }, /method must not be empty/],
      ['params a string', { jsonrpc: '2.0', id: 7, method: 'message/send', params: 'help' }, /params must be an object or an array/],
    ])('%s: -32600 with the id, saying what is wrong', async (_name, body, message) => {
      const res = await request(app).post('/api/a2a').send(body);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(invalid(7));
      expect(res.body.error.message).toMatch(message);
    });

    it('an id that is not a string, an integer or null is -32600 with id null', async () => {
      for (const id of [1.5, true, { a: 1 }, [1]]) {
        const res = await request(app).post('/api/a2a').send({ jsonrpc: '2.0', id, method: 'message/send', params: HELP });
        expect(res.body, JSON.stringify(id)).toEqual(invalid());
        expect(res.body.error.message).toMatch(/id must be a string, an integer or null/);
      }
    });

    it('id null is a request, not a notification: it is answered with id null', async () => {
      const res = await request(app).post('/api/a2a').send({ jsonrpc: '2.0', id: null, method: 'message/send', params: HELP });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ jsonrpc: '2.0', id: null, result: ANSWERED });
    });
  });

  describe('methods', () => {
    it('an unknown method is -32601 whatever its params (the params are never checked first)', async () => {
      for (const params of [undefined, {}, [], HELP]) {
        const res = await request(app)
          .post('/api/a2a')
          .send({ jsonrpc: '2.0', id: 'u', method: 'tasks/evil', ...(params === undefined ? {} : { params }) });
        expect(res.body, JSON.stringify(params)).toEqual(notFound('u'));
      }
    });

    it('a method of the other protocol version is -32601 naming the header that selects it', async () => {
      const v1WithoutHeader = await request(app).post('/api/a2a').send({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: V1_HELP });
      expect(v1WithoutHeader.body).toEqual(notFound(1));
      expect(v1WithoutHeader.body.error.message).toContain('A2A-Version: 1.0');
      const v03WithHeader = await request(app)
        .post('/api/a2a')
        .set('A2A-Version', '1.0')
        .send({ jsonrpc: '2.0', id: 2, method: 'message/send', params: HELP });
      expect(v03WithHeader.body).toEqual(notFound(2));
      expect(v03WithHeader.body.error.message).toContain('without the A2A-Version header');
    });

    it('a known method with params that are not its own is still -32602', async () => {
      const res = await request(app)
        .post('/api/a2a')
        .send({ jsonrpc: '2.0', id: 3, method: 'message/send', params: [1, 2] });
      expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 3, error: { code: -32602 } });
    });
  });

  describe('notifications of the real methods', () => {
    it('are handled (a register task is opened) but never answered', async () => {
      const caller = '10.20.0.1';
      const register = {
        message: {
          kind: 'message',
          messageId: 'm-note',
          role: 'user',
          parts: [{ kind: 'data', data: { intent: 'register', mode: 'wallet-free', network: 'testnet' } }],
        },
      };
      const res = await request(app)
        .post('/api/a2a')
        .set('X-Forwarded-For', caller)
        .send({ jsonrpc: '2.0', method: 'message/send', params: register });
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      const tasks = await request(app)
        .post('/api/a2a')
        .set('A2A-Version', '1.0')
        .set('X-Forwarded-For', caller)
        .send({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} });
      expect(tasks.body.result.tasks).toHaveLength(1);
    });

    it('of a streaming method: handled without a stream, never answered', async () => {
      for (const [headers, method, params] of [
        [{}, 'message/stream', HELP],
        [{ 'A2A-Version': '1.0' }, 'SendStreamingMessage', V1_HELP],
        [{}, 'tasks/resubscribe', { id: 'no-such-task' }],
      ] as const) {
        const res = await request(app).post('/api/a2a').set(headers).send({ jsonrpc: '2.0', method, params });
        expect(res.status, method).toBe(204);
        expect(res.text, method).toBe('');
      }
    });

    it('with a mistake in them are not answered either', async () => {
      const res = await request(app)
        .post('/api/a2a')
        .send({ jsonrpc: '2.0', method: 'message/send', params: { message: { parts: [] } } });
      expect(res.status).toBe(204);
    });
  });

  describe('batches of the real methods', () => {
    it('v0.3: answers in order, a notification left out, a streaming method refused in its place', async () => {
      const res = await request(app)
        .post('/api/a2a')
        .send([
          { jsonrpc: '2.0', id: 'a', method: 'message/send', params: HELP },
          { jsonrpc: '2.0', id: 'b', method: 'tasks/get', params: { id: 'no-such-task' } },
          { jsonrpc: '2.0', method: 'message/send', params: HELP },
          { jsonrpc: '2.0', id: 'c', method: 'message/stream', params: HELP },
          { jsonrpc: '2.0', id: 'd', method: 'tasks/evil', params: {} },
        ]);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([
        { jsonrpc: '2.0', id: 'a', result: ANSWERED },
        { jsonrpc: '2.0', id: 'b', error: expect.objectContaining({ code: -32001 }) },
        invalid('c'),
        notFound('d'),
      ]);
      expect(res.body[2].error.message).toMatch(/message\/stream answers with a stream and cannot be part of a batch/);
    });

    it('v1.0 with the header: each request answered by the v1.0 methods', async () => {
      const res = await request(app)
        .post('/api/a2a')
        .set('A2A-Version', '1.0')
        .send([
          { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: V1_HELP },
          { jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: 'no-such-task' } },
          { jsonrpc: '2.0', id: 3, method: 'ListTasks', params: { pageSize: 500 } },
        ]);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([
        { jsonrpc: '2.0', id: 1, result: expect.any(Object) },
        expect.objectContaining({ id: 2, error: expect.objectContaining({ code: -32001 }) }),
        expect.objectContaining({ id: 3, error: expect.objectContaining({ code: -32602, message: expect.stringMatching(/pageSize/) }) }),
      ]);
    });

    it('an unsupported protocol version is refused in each answer', async () => {
      const res = await request(app)
        .post('/api/a2a')
        .set('A2A-Version', '9.9')
        .send([{ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: V1_HELP }]);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([expect.objectContaining({ id: 1, error: expect.objectContaining({ message: expect.stringMatching(/9\.9/) }) })]);
    });

    it(`at most ${MAX_BATCH} requests in one batch: more is one -32600`, async () => {
      const batch = Array.from({ length: MAX_BATCH + 1 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tasks/evil' }));
      const res = await request(app).post('/api/a2a').send(batch);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(invalid());
      expect(res.body.error.message).toContain(`at most ${MAX_BATCH}`);
    });
  });

  describe('bodies the server does not read: a JSON-RPC error object, never a REST one', () => {
    const { maxBodyBytes } = DEFAULT_AGENT_MESSAGE_LIMITS;

    it(`over its ${maxBodyBytes} bytes: 413 with -32600, id null`, async () => {
      const padded = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { ...HELP, pad: 'x'.repeat(maxBodyBytes) } });
      const res = await post(padded);
      expect(res.status).toBe(413);
      expect(res.body).toEqual(invalid());
      expect(res.body.error.message).toBe(`Invalid Request: the body is too large (at most ${maxBodyBytes / 1024}kb)`);
    });

    it('just under the limit is read and answered', async () => {
      const padded = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { ...HELP, pad: 'x'.repeat(maxBodyBytes - 200) } });
      const res = await post(padded);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ jsonrpc: '2.0', id: 1, result: ANSWERED });
    });

    it('a charset other than UTF-8 or an unknown Content-Encoding: 415 with -32600, id null', async () => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: HELP });
      const charset = await request(app).post('/api/a2a').set('Content-Type', 'application/json; charset=x-no-such').send(body);
      expect(charset.status).toBe(415);
      expect(charset.body).toEqual(invalid());
      const latin1 = await request(app).post('/api/a2a').set('Content-Type', 'application/json; charset=ISO-8859-1').send(body);
      expect(latin1.status).toBe(415);
      expect(latin1.body).toEqual(invalid());
      const utf8 = await request(app).post('/api/a2a').set('Content-Type', 'application/json; charset="UTF-8"').send(body);
      expect(utf8.status).toBe(200);
      const encoding = await request(app).post('/api/a2a').set('Content-Type', 'application/json').set('Content-Encoding', 'x-squeeze').send(body);
      expect(encoding.status).toBe(415);
      expect(encoding.body).toEqual(invalid());
    });

    it('a body that does not decode as its Content-Encoding says: -32700, HTTP 200', async () => {
      const res = await post('[]', { 'Content-Encoding': 'gzip' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringMatching(/^Parse error/) } });
    });

    it('gzip that is gzip is read', async () => {
      // over a real connection: supertest would serialize a Buffer sent as JSON
      const server = createServer(app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/a2a`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
          body: gzipSync(JSON.stringify({ jsonrpc: '2.0', id: 'z', method: 'tasks/evil' })),
        });
        expect(await res.json()).toEqual(notFound('z'));
      } finally {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });

    it('a body however it arrives: in pieces, chunked, after a byte order mark; one cut short harms nothing', async () => {
      // raw HTTP/1.1 over a socket: how the body is framed and paced is the point
      const server = createServer(app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as AddressInfo).port;
      const exchange = (head: string, pieces: (string | Buffer)[], end = false) =>
        new Promise<string>((resolve, reject) => {
          const socket = connect(port, '127.0.0.1');
          let received = '';
          socket.on('data', (data) => {
            received += data.toString();
            if (/\r\n\r\n[\s\S]*\}$/.test(received)) socket.end();
          });
          socket.on('close', () => resolve(received));
          socket.on('error', reject);
          socket.write(`POST /api/a2a HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n${head}\r\n`);
          pieces.forEach((piece, index) => {
            setTimeout(() => socket.write(piece), 20 * (index + 1));
          });
          if (end) setTimeout(() => socket.end(), 20 * (pieces.length + 1));
        });
      const body = (id: string) => Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, method: 'tasks/evil' }));
      const answerOf = (raw: string) => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
      try {
        const pieces = body('pieces');
        const paced = await exchange(`Content-Length: ${pieces.length}\r\n`, [pieces.subarray(0, 10), pieces.subarray(10, 30), pieces.subarray(30)]);
        expect(answerOf(paced)).toEqual(notFound('pieces'));

        const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body('bom')]);
        expect(answerOf(await exchange(`Content-Length: ${bom.length}\r\n`, [bom]))).toEqual(notFound('bom'));

        const chunked = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body('chunked')]);
        const framed = `${chunked.length.toString(16)}\r\n${chunked.toString('latin1')}\r\n0\r\n\r\n`;
        expect(answerOf(await exchange('Transfer-Encoding: chunked\r\n', [Buffer.from(framed, 'latin1')]))).toEqual(notFound('chunked'));

        // announced 500 bytes, sent 20, then gone: Node's parser answers 400 (the app's server edges make it JSON), no
        // JSON-RPC answer is attempted, and the service goes on
        const cut = await exchange('Content-Length: 500\r\n', [body('cut').subarray(0, 20)], true);
        expect(cut).toMatch(/^HTTP\/1\.1 400 /);
        expect(cut).not.toContain('jsonrpc');
        expect(answerOf(await exchange(`Content-Length: ${pieces.length}\r\n`, [pieces]))).toEqual(notFound('pieces'));
      } finally {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });

    it('another media type is refused as the A2A SDK refuses it (-32005), still a JSON-RPC object', async () => {
      const res = await request(app).post('/api/a2a').set('Content-Type', 'text/plain').send('{"jsonrpc": "2.0", "id": 1, "method": "message/send"}');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32005 } });
    });
  });
});
