// fastJson writes the common JSON answer itself instead of going through express's res.send, so each answer here
// comes from two apps with the same handler, one with fastJson and one stock express 5, and the two must be the
// same on the wire: status, body bytes and every header but Date, in the same order. Counting the calls of express's
// res.send on both apps shows which path answered: the fast one for a plain answer, express's own for everything
// fastJson leaves to it (conditional requests, statuses without a body or other than 2xx, a handler's own
// Content-Type, ETag or Transfer-Encoding, a value JSON.stringify does not turn into text).
import type { IncomingMessage } from 'node:http';
import express, { type Express, type RequestHandler, type Response } from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { fastJson, weakEtag } from '../../src/http/json-response.js';

interface Counted {
  app: Express;
  /** Calls of express's res.send: 0 when the fast path answered, 1 when express's res.json did. */
  sends: () => number;
}

function counted(app: Express): Counted {
  let sends = 0;
  const response = app.response as Response;
  const send = response.send;
  response.send = function countedSend(this: Response, body?: unknown) {
    sends++;
    return send.call(this, body);
  };
  return { app, sends: () => sends };
}

/** The same handler on a fastJson app and a stock one; `setup` runs on both before fastJson is installed. */
function pair(handler: RequestHandler, setup?: (app: Express) => void): { fast: Counted; stock: Counted } {
  const build = (withFastJson: boolean): Counted => {
    const app = express();
    setup?.(app);
    const result = counted(app);
    if (withFastJson) fastJson(app);
    app.get('/answer', handler);
    app.post('/answer', handler);
    return result;
  };
  return { fast: build(true), stock: build(false) };
}

/** The raw body bytes (supertest would parse JSON), or none. */
const raw = (res: request.Response, done: (error: Error | null, body: Buffer) => void): void => {
  const stream = res as unknown as IncomingMessage;
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => done(null, Buffer.concat(chunks)));
};

type Method = 'get' | 'head' | 'post';

/** The answer of both apps to the same request: they must be identical, header order included. */
async function sameAnswer(
  { fast, stock }: { fast: Counted; stock: Counted },
  { method = 'get', headers = {} }: { method?: Method; headers?: Record<string, string> } = {},
): Promise<{ res: request.Response; fastPath: boolean }> {
  const send = (app: Express) => request(app)[method]('/answer').set(headers).buffer(true).parse(raw);
  const [before, stockBefore] = [fast.sends(), stock.sends()];
  const [ours, theirs] = [await send(fast.app), await send(stock.app)];
  const wire = (res: request.Response) => {
    const { rawHeaders } = (res as unknown as { res: IncomingMessage }).res;
    const pairs: string[] = [];
    for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]?.toLowerCase() !== 'date') pairs.push(`${rawHeaders[i]}: ${rawHeaders[i + 1]}`);
    return { status: res.status, headers: pairs, body: Buffer.isBuffer(res.body) ? res.body.toString('hex') : null };
  };
  expect(wire(ours)).toEqual(wire(theirs));
  // the stock app answered through express's res.send every time: fastJson changed only its own app
  expect(stock.sends()).toBe(stockBefore + 1);
  return { res: ours, fastPath: fast.sends() === before };
}

const BODIES: [string, unknown][] = [
  ['an object', { agentId: '7', chainId: 42220, verified: true, nested: { list: [1, 2, 3] } }],
  ['an array', [{ a: 1 }, { b: [null, 'x'] }]],
  ['unicode text', { name: 'Agent Zoë — 代理 😀', quote: 'say "hi"\n\\ </script>', controls: '\u0000\u001f\u2028' }],
  ['an empty object', {}],
  ['a body over 1000 bytes', { agents: Array.from({ length: 60 }, (_, i) => ({ id: i, address: `0x${String(i).padStart(40, '0')}` })) }],
  ['a string', 'just a string'],
  ['null', null],
  ['a number', 42],
  ['false', false],
];

describe('fastJson', () => {
  describe("the common answer, written by the fast path, is stock express 5's answer, byte for byte", () => {
    for (const [name, value] of BODIES) {
      it(name, async () => {
        const { res, fastPath } = await sameAnswer(pair((_req, res) => void res.json(value)));
        expect(fastPath).toBe(true);
        expect(res.status).toBe(200);
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(res.headers['etag']).toMatch(/^W\/"[0-9a-f]+-[A-Za-z0-9+/]{27}"$/);
        expect(JSON.parse((res.body as Buffer).toString('utf8'))).toEqual(value);
      });
    }

    it('the large body has its exact byte length and ETag', async () => {
      const value = BODIES[4]![1];
      const { res } = await sameAnswer(pair((_req, res) => void res.json(value)));
      const text = JSON.stringify(value);
      expect(Buffer.byteLength(text)).toBeGreaterThan(1000);
      expect(res.headers['content-length']).toBe(String(Buffer.byteLength(text)));
      expect(res.headers['etag']).toBe(weakEtag(text));
    });

    it('POST answers and HEAD (headers only) alike', async () => {
      const apps = pair((_req, res) => void res.json({ ok: true, text: 'é' }));
      expect((await sameAnswer(apps, { method: 'post' })).fastPath).toBe(true);
      const head = await sameAnswer(apps, { method: 'head' });
      // (no client sees a HEAD answer's body: Node's HTTP server drops it, so the headers are what there is to compare)
      expect(head.fastPath).toBe(true);
      expect(head.res.headers['content-length']).toBe(String(Buffer.byteLength('{"ok":true,"text":"é"}')));
    });

    it("with express's ETags turned off before fastJson, neither app sends one", async () => {
      const { res, fastPath } = await sameAnswer(
        pair(
          (_req, res) => void res.json({ a: 1 }),
          (app) => app.set('etag', false),
        ),
      );
      expect(fastPath).toBe(true);
      expect(res.headers['etag']).toBeUndefined();
    });
  });

  describe("everything else goes to express's res.json, with the same answer", () => {
    const value = { agentId: '7', chainId: 42220 };
    const apps = pair((_req, res) => void res.json(value));
    const etag = weakEtag(JSON.stringify(value));

    it('If-None-Match equal to the ETag: 304 without a body; another ETag: the answer', async () => {
      const fresh = await sameAnswer(apps, { headers: { 'If-None-Match': etag } });
      expect(fresh.fastPath).toBe(false);
      expect(fresh.res.status).toBe(304);
      expect((fresh.res.body as Buffer).length).toBe(0);
      const stale = await sameAnswer(apps, { headers: { 'If-None-Match': 'W/"1-other"' } });
      expect(stale.res.status).toBe(200);
      expect(stale.res.headers['etag']).toBe(etag);
    });

    it('If-Modified-Since: 304 when the answer is not newer, the answer otherwise', async () => {
      const modified = 'Tue, 01 Jul 2025 10:00:00 GMT';
      const dated = pair((_req, res) => {
        res.setHeader('Last-Modified', modified);
        res.json(value);
      });
      const notNewer = await sameAnswer(dated, { headers: { 'If-Modified-Since': 'Wed, 02 Jul 2025 10:00:00 GMT' } });
      expect({ status: notNewer.res.status, fastPath: notNewer.fastPath }).toEqual({ status: 304, fastPath: false });
      const newer = await sameAnswer(dated, { headers: { 'If-Modified-Since': 'Mon, 30 Jun 2025 10:00:00 GMT' } });
      expect(newer.res.status).toBe(200);
      // without a Last-Modified, If-Modified-Since alone never makes the answer fresh
      expect((await sameAnswer(apps, { headers: { 'If-Modified-Since': modified } })).res.status).toBe(200);
    });

    it('a status set before res.json: 204 and 205 without a body, 201 and 404 with one', async () => {
      for (const status of [204, 205, 201, 404, 500]) {
        const { res, fastPath } = await sameAnswer(pair((_req, res) => void res.status(status).json(value)));
        expect({ status: res.status, fastPath }, String(status)).toEqual({ status, fastPath: status === 201 });
        if (status === 204 || status === 205) expect((res.body as Buffer).length, String(status)).toBe(0);
      }
    });

    it("a handler's own Content-Type (with express's charset added), ETag or Transfer-Encoding", async () => {
      const problem = await sameAnswer(pair((_req, res) => void res.type('application/problem+json').status(400).json({ title: 'Bad' })));
      expect(problem.res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      const typed = await sameAnswer(pair((_req, res) => void res.setHeader('Content-Type', 'application/problem+json').json({ title: 'Bad' })));
      expect({ type: typed.res.headers['content-type'], fastPath: typed.fastPath }).toEqual({
        type: 'application/problem+json; charset=utf-8',
        fastPath: false,
      });
      const versioned = await sameAnswer(pair((_req, res) => void res.setHeader('ETag', '"v42"').json(value)));
      expect({ etag: versioned.res.headers['etag'], fastPath: versioned.fastPath }).toEqual({ etag: '"v42"', fastPath: false });
      const chunked = await sameAnswer(pair((_req, res) => void res.setHeader('Transfer-Encoding', 'chunked').json(value)));
      expect({ length: chunked.res.headers['content-length'], fastPath: chunked.fastPath }).toEqual({ length: undefined, fastPath: false });
    });

    it('res.json(undefined) and values JSON.stringify leaves undefined (a function)', async () => {
      for (const nothing of [undefined, () => 1]) {
        const { res, fastPath } = await sameAnswer(pair((_req, res) => void res.json(nothing)));
        expect(fastPath).toBe(false);
        expect(res.status).toBe(200);
        expect((res.body as Buffer).length).toBe(0);
      }
    });
  });
});

describe('weakEtag', () => {
  it('is the ETag stock express gives the same text', async () => {
    const texts = ['', '{}', 'null', 'Agent Zoë — 代理 😀', 'x'.repeat(5000), JSON.stringify(BODIES)];
    const app = express();
    app.get('/etag/:i', (req, res) => void res.send(texts[Number(req.params['i'])]));
    for (const [i, text] of texts.entries()) {
      const res = await request(app).get(`/etag/${i}`);
      expect(weakEtag(text), text.slice(0, 20)).toBe(res.headers['etag']);
    }
  });
});
