// The app served twice over real HTTP: through the response cache in front of express (as main.ts serves it), and
// by express alone; and raw exchanges with either, headers as sent (names as cased, in order), body as bytes.
import { request as httpRequest, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { ExpressMessages } from '../../src/http/express-messages.js';
import { ResponseCache } from '../../src/http/response-cache.js';
import { createLimitedServer } from '../../src/http/server-limits.js';
import type { QueryTestApp } from './queries.js';

export interface CachedServing {
  /** Base URL of the server whose 'request' listener is the response cache's front. */
  cached: string;
  /** Base URL of the server of express alone. */
  direct: string;
  cache: ResponseCache;
  close(): Promise<void>;
}

/**
 * A server as main.ts makes it (its limits, JSON for what Node answers itself, requests built with `app`'s
 * prototypes when given), with `listener` for requests.
 */
export async function listen(listener: RequestListener, app?: Express): Promise<{ server: Server; base: string }> {
  const messages = new ExpressMessages();
  const server = createLimitedServer({ requestTimeoutMs: 30_000, headersTimeoutMs: 10_000, maxConnections: 0 }, messages);
  if (app) messages.adopt(app);
  server.on('request', listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

export async function serveWithResponseCache(q: QueryTestApp, options: { logger: Logger; maxEntries?: number }): Promise<CachedServing> {
  const cache = new ResponseCache({ maxEntries: options.maxEntries ?? 1_000, metrics: q.metrics, logger: options.logger });
  const unsubscribe = q.services.queries.onChange((key) => cache.drop(key));
  const cached = await listen(cache.front(q.app), q.app);
  const direct = await listen(q.app, q.app);
  return {
    cached: cached.base,
    direct: direct.base,
    cache,
    close: async () => {
      unsubscribe();
      for (const { server } of [cached, direct]) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    },
  };
}

export interface Exchange {
  status: number;
  /** Name and value of each header line, as sent. */
  headers: [string, string][];
  body: Buffer;
}

/** One request on a connection of its own; `body` is sent as given (with its Content-Length). */
export function exchange(
  base: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method: options.method ?? 'GET', headers: options.headers ?? {}, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const headers: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) headers.push([res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string]);
        resolve({ status: res.statusCode as number, headers, body: Buffer.concat(chunks) });
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** The value of a header of an exchange (the first line of that name). */
export const headerOf = (exchange: Exchange, name: string): string | undefined =>
  exchange.headers.find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1];

/** What two answers to the same request share: status, every header line but X-Request-Id and Date, body bytes (hex). */
export const comparable = (exchange: Exchange) => ({
  status: exchange.status,
  headers: exchange.headers.filter(([name]) => !['x-request-id', 'date'].includes(name.toLowerCase())),
  body: exchange.body.toString('hex'),
});
