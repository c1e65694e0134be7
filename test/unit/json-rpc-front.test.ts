// The front's body limit, as the front is given it (a number of bytes or a size as express takes it): a body at the
// limit is answered, one byte over is 413 with a JSON-RPC error object, unread.
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { jsonRpcFront } from '../../src/http/json-rpc-front.js';

/** An app whose one JSON-RPC method echoes its params; bodies over `limit` are refused. */
function echoApp(limit: string | number) {
  const app = express();
  app.post(
    '/rpc',
    jsonRpcFront({
      limit,
      methodsOf: () => undefined,
      single: (_req, res) => {
        res.status(500).json({ error: 'not used' });
      },
      call: async (call) => ({ jsonrpc: '2.0', id: call.id ?? null, result: call.params }),
    }),
  );
  return app;
}

/** A request whose body is exactly `size` bytes long. */
function bodyOf(size: number): string {
  const empty = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'echo', params: { text: '' } });
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'echo', params: { text: 'x'.repeat(size - empty.length) } });
}

describe('JSON-RPC front body limit', () => {
  it.each([
    ['a number of bytes', 100],
    ['a size as express takes it', '100b'],
  ])('given as %s: a body at the limit is answered, one byte over is 413', async (_name, limit) => {
    const app = echoApp(limit);
    const at = await request(app).post('/rpc').type('application/json').send(bodyOf(100));
    expect(at.status).toBe(200);
    expect(at.body).toMatchObject({ id: 1, result: { text: expect.stringMatching(/^x+$/) } });

    const over = await request(app).post('/rpc').type('application/json').send(bodyOf(101));
    expect(over.status).toBe(413);
    expect(over.body).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: `Invalid Request: the body is too large (at most ${limit})` },
    });
  });
});
