// A response cache in front of express, as a reverse proxy's microcache is: it answers exact repeats of cacheable
// GET and HEAD requests from responses express already sent, and hands everything else to express unchanged.
//
// What it holds: per request target (path and query exactly as sent; GET and HEAD share it), and per value of the
// request headers the response Varies on, a prepared response: its header block as express sent it, its body, its
// ETag, and express's answers to the conditional requests seen (by If-None-Match and Cache-Control as sent: the 304
// it sent, or the same 200). A hit is written from those with Node's writeHead and end; only the request id
// (X-Request-Id, echoed when sane or made, as the request log does) and Node's own Date and connection headers are
// the request's. A hit is logged and counted like any request, under the route template of the answer it repeats.
//
// How it is filled: a route handler marks its answer cacheable (keepResponse) with what the service said of its
// reuse (services/answer-reuse.ts): the keys it depends on, until when it holds, and whether the service can hear of
// changes now. The response is then recorded as express writes it, and stored when it is a complete 200 (or a 304 of
// a stored response), unless one of its keys changed after the request arrived (a generation check: a change
// announced meanwhile may not be in the answer). So a hit is byte for byte what express answered to that request.
//
// How it is emptied: the query service announces every key whose answers change (registry events, provider
// changes, reorganisations: drop()); an entry also goes at its validUntilMs (a proof's expiry), is passed over
// while its service cannot hear of changes (live() false), and the least recently used goes first past maxEntries.
//
// What goes to express: every method but GET and HEAD, every target without an entry, and any request the
// prepared answer might not fit: no Host (the edge refuses it), a body, a range, conditions other than
// If-None-Match, an If-None-Match not seen yet.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Response } from 'express';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics.js';
import type { Reuse } from '../services/answer-reuse.js';
import { type HttpMetrics, httpMetrics } from './middleware/metrics.js';
import { type RequestLog, requestIdFrom, requestLog } from './middleware/request-log.js';
import { routeLabel } from './middleware/route-label.js';

/** Reuse of an answer that never changes while the process runs (discovery documents, the API document, the A2A card). */
export const UNCHANGING: Reuse = { keys: [], validUntilMs: Number.POSITIVE_INFINITY, live: () => true };

/** Header variants per target, and conditional answers per variant, held at most (oldest out). */
const MAX_VARIANTS = 8;
/**
 * Key changes remembered for the generation check while answers are under way; past this many they are all
 * forgotten at once, and the answers under way then are not stored.
 */
const MAX_REMEMBERED_CHANGES = 10_000;

/** A header block: names and values in turn, as res.writeHead takes it, and where the request id's value sits. */
interface Head {
  head: readonly string[];
  /** Index of X-Request-Id's value in `head`, -1 when none. */
  idAt: number;
}

/** express's 200 answered a conditional request: the prepared response itself. */
const SAME = 'same';

interface Prepared extends Head {
  body: Buffer;
  etag: string | undefined;
  /** The route template its requests are counted under. */
  route: string;
  validUntilMs: number;
  live: () => boolean;
  /** express's answers to conditional requests, by conditionOf(). */
  conditional: Map<string, Head | typeof SAME>;
}

interface Slot {
  target: string;
  /** The request headers the response Varies on, lower case. */
  vary: readonly string[];
  keys: readonly string[];
  /** By the values of `vary` in the request (variantOf). */
  variants: Map<string, Prepared>;
}

/** What a request express answers carries for its fill: set when it arrives, the reuse when a handler marks it. */
interface Fill {
  cache: ResponseCache;
  target: string;
  /** The change count when the request arrived. */
  seq: number;
  reuse?: Reuse;
}

const FILL = Symbol('response cache fill');
type Filled = IncomingMessage & { [FILL]?: Fill };

/**
 * Marks the answer `res` is about to send as cacheable with `reuse`; nothing happens when no response cache is in
 * front (an app served alone) or the request is not one it could answer.
 */
export function keepResponse(res: ServerResponse, reuse: Reuse): void {
  const fill = (res.req as Filled)[FILL];
  if (fill === undefined || fill.reuse !== undefined) return;
  fill.reuse = reuse;
  fill.cache.record(res, fill);
}

/** Whether a GET or HEAD carries nothing a prepared answer might not fit (see the top of the file). */
function answerable(headers: IncomingMessage['headers']): boolean {
  const length = headers['content-length'];
  return (
    headers.host !== undefined &&
    (length === undefined || length === '0') &&
    headers['transfer-encoding'] === undefined &&
    headers.range === undefined &&
    headers['if-range'] === undefined &&
    headers['if-match'] === undefined &&
    headers['if-unmodified-since'] === undefined &&
    headers['if-modified-since'] === undefined
  );
}

/** The request's values of the varying headers (an absent header differs from an empty one). */
function variantOf(vary: readonly string[], headers: IncomingMessage['headers']): string {
  let variant = '';
  for (const name of vary) {
    const value = headers[name];
    variant += value === undefined ? '\u0000\n' : `${String(value)}\n`;
  }
  return variant;
}

/** What decides express's answer to a conditional request besides the entry: its If-None-Match and Cache-Control. */
const conditionOf = (ifNoneMatch: string, cacheControl: string | undefined): string => `${ifNoneMatch}\n${cacheControl ?? '\u0000'}`;

/** The header names a Vary value lists, lower case; undefined for `*` (varies on more than headers). */
function varyOf(value: ReturnType<ServerResponse['getHeader']>): string[] | undefined {
  if (value === undefined) return [];
  const names = (Array.isArray(value) ? value.join(',') : String(value))
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  return names.includes('*') ? undefined : [...new Set(names)].sort();
}

/** OutgoingMessage's getRawHeaderNames (Node's public header methods; @types/node declares it on ClientRequest only). */
type WithRawNames = ServerResponse & { getRawHeaderNames(): string[] };

/** The header block `res` sent, names as cased, as writeHead takes it (Date and the connection's headers are Node's). */
function headOf(res: ServerResponse): Head {
  const head: string[] = [];
  let idAt = -1;
  for (const name of (res as WithRawNames).getRawHeaderNames()) {
    const value = res.getHeader(name);
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [String(value)]) head.push(name, one);
    if (name.toLowerCase() === 'x-request-id') idAt = head.length - 1;
  }
  return { head, idAt };
}

const sameList = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((item, i) => item === b[i]);

/** Keeps a map's size at most `max` by dropping its oldest entries. */
function bound<K, V>(map: Map<K, V>, max: number): void {
  while (map.size > max) map.delete(map.keys().next().value as K);
}

export interface ResponseCacheOptions {
  /** Most request targets held (the least recently used goes first); 0: none, every request goes to express. */
  maxEntries: number;
  /** Where hits are counted (http_requests_total and the rest, as express's answers are; cache_lookups_total{cache="response"}). */
  metrics: Metrics;
  /** Where hits are logged (one line each, as express's answers are). */
  logger: Logger;
  /** The clock of the answers' validUntilMs (the services'); default Date.now. */
  clock?: () => number;
}

export class ResponseCache {
  readonly #max: number;
  readonly #clock: () => number;
  readonly #metrics: HttpMetrics;
  readonly #log: RequestLog;
  readonly #hits: { inc(): void };
  readonly #misses: { inc(): void };
  /** By target, least recently used first. */
  readonly #slots = new Map<string, Slot>();
  /** The slots depending on each key. */
  readonly #byKey = new Map<string, Set<Slot>>();
  /** Changes announced so far. */
  #seq = 0;
  /** The change count of the latest change of each key changed while answers were under way. */
  readonly #changed = new Map<string, number>();
  /** The change at which #changed was last emptied with answers under way: those that arrived before it are not stored. */
  #forgotten = 0;
  /**
   * GET misses not yet answered: only they can hold an answer that predates a change. With none, a change need not
   * be remembered (any later request counts from after it), which spares a backfill's thousands of changes a second.
   */
  #unanswered = 0;
  /**
   * The change count when the newest GET miss arrived. Once every answer under way arrived before #forgotten (none of
   * them will be stored), a backfill's further changes need not be remembered either, until another one arrives.
   */
  #newestArrival = 0;

  constructor(options: ResponseCacheOptions) {
    this.#max = options.maxEntries;
    this.#clock = options.clock ?? Date.now;
    this.#metrics = httpMetrics(options.metrics);
    this.#log = requestLog(options.logger);
    this.#hits = options.metrics.cacheLookups.labels({ cache: 'response', result: 'hit' });
    this.#misses = options.metrics.cacheLookups.labels({ cache: 'response', result: 'miss' });
  }

  /** Targets held. */
  get size(): number {
    return this.#slots.size;
  }

  /** Whether an answer to `target` is held (tests and diagnostics). */
  has(target: string): boolean {
    return this.#slots.has(target);
  }

  /** The 'request' listener: a hit answered here, everything else handed to `app` as it came. */
  front(app: RequestListener): RequestListener {
    if (this.#max === 0) return app;
    return (req, res) => {
      const { method } = req;
      if (method === 'GET' || method === 'HEAD') {
        const target = req.url as string;
        if (answerable(req.headers)) {
          const slot = this.#slots.get(target);
          if (slot !== undefined && this.#answer(slot, req, res, method, performance.now())) return;
          this.#misses.inc();
          if (method === 'GET') {
            (req as Filled)[FILL] = { cache: this, target, seq: this.#seq };
            this.#newestArrival = this.#seq;
            this.#unanswered++;
            res.once('close', () => {
              // no answer under way predates anything: the changes need not be remembered
              if (--this.#unanswered === 0) this.#changed.clear();
            });
          }
        }
      }
      app(req, res);
    };
  }

  /** Drops what depends on `key`, and keeps answers under way that may predate the change from being stored. */
  drop(key: string): void {
    const seq = ++this.#seq;
    if (this.#unanswered > 0 && this.#newestArrival >= this.#forgotten) {
      if (this.#changed.size >= MAX_REMEMBERED_CHANGES) {
        // a backfill's thousands of changes a second: the answers under way now are not stored
        this.#changed.clear();
        this.#forgotten = seq;
      }
      this.#changed.set(key, seq);
    }
    const slots = this.#byKey.get(key);
    if (slots) for (const slot of [...slots]) this.#remove(slot);
  }

  #answer(slot: Slot, req: IncomingMessage, res: ServerResponse, method: string, started: number): boolean {
    const { headers } = req;
    const prepared = slot.variants.get(slot.vary.length === 0 ? '' : variantOf(slot.vary, headers));
    if (prepared === undefined) return false;
    if (prepared.validUntilMs !== Number.POSITIVE_INFINITY && this.#clock() >= prepared.validUntilMs) {
      this.#remove(slot);
      return false;
    }
    if (!prepared.live()) return false;
    let answer: Head = prepared;
    let status = 200;
    const ifNoneMatch = headers['if-none-match'];
    if (ifNoneMatch !== undefined) {
      const known = prepared.conditional.get(conditionOf(ifNoneMatch, headers['cache-control']));
      if (known === undefined) return false;
      if (known !== SAME) {
        answer = known;
        status = 304;
      }
    }
    const id = requestIdFrom(headers['x-request-id']);
    const head = answer.head.slice();
    if (answer.idAt >= 0) head[answer.idAt] = id;
    res.writeHead(status, head);
    if (status === 304 || method === 'HEAD') res.end();
    else res.end(prepared.body);
    // most recently used last
    this.#slots.delete(slot.target);
    this.#slots.set(slot.target, slot);
    this.#hits.inc();
    const ms = performance.now() - started;
    this.#metrics.count(prepared.route, method, status, ms);
    this.#log.line(id, method, req.url as string, status, ms);
    return true;
  }

  /** Records what express writes on `res` (marked by keepResponse), to store it once sent. */
  record(res: ServerResponse, fill: Fill): void {
    const chunks: Buffer[] = [];
    const take = (chunk: unknown, encoding: unknown): void => {
      if (typeof chunk === 'string') chunks.push(Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
      else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
    };
    const { write, end } = res;
    res.write = function (this: ServerResponse, ...args: Parameters<ServerResponse['write']>) {
      take(args[0], args[1]);
      return write.apply(this, args);
    } as ServerResponse['write'];
    res.end = function (this: ServerResponse, ...args: Parameters<ServerResponse['end']>) {
      take(args[0], args[1]);
      return end.apply(this, args);
    } as ServerResponse['end'];
    res.once('finish', () => this.#fill(res, fill, chunks));
  }

  /** Whether no key of the answer changed since its request arrived. */
  #current(fill: Fill, reuse: Reuse): boolean {
    if (fill.seq < this.#forgotten) return false;
    for (const key of reuse.keys) if ((this.#changed.get(key) ?? 0) > fill.seq) return false;
    return true;
  }

  #fill(res: ServerResponse, fill: Fill, chunks: Buffer[]): void {
    const { reuse } = fill;
    const status = res.statusCode;
    if (reuse === undefined || (status !== 200 && status !== 304)) return;
    if (!this.#current(fill, reuse) || !reuse.live() || this.#clock() >= reuse.validUntilMs) return;
    if (res.getHeader('transfer-encoding') !== undefined) return;
    const vary = varyOf(res.getHeader('vary'));
    if (vary === undefined) return;
    const { headers } = res.req;
    const variant = vary.length === 0 ? '' : variantOf(vary, headers);
    const etag = res.getHeader('etag');
    const body = Buffer.concat(chunks);
    const ifNoneMatch = headers['if-none-match'];
    if (ifNoneMatch !== undefined) {
      // express's answer to this condition, for the response it repeats (the same ETag)
      const slot = this.#slots.get(fill.target);
      const prepared = slot && sameList(slot.vary, vary) ? slot.variants.get(variant) : undefined;
      if (prepared === undefined || etag === undefined || etag !== prepared.etag) return;
      if (status === 200 && !body.equals(prepared.body)) return;
      prepared.conditional.set(conditionOf(ifNoneMatch, headers['cache-control']), status === 304 ? headOf(res) : SAME);
      bound(prepared.conditional, MAX_VARIANTS);
      return;
    }
    if (status !== 200 || Number(res.getHeader('content-length')) !== body.length) return;
    let slot = this.#slots.get(fill.target);
    if (slot === undefined || !sameList(slot.vary, vary) || !sameList(slot.keys, reuse.keys)) {
      if (slot !== undefined) this.#remove(slot);
      slot = { target: fill.target, vary, keys: reuse.keys, variants: new Map() };
      this.#add(slot);
    }
    slot.variants.delete(variant);
    slot.variants.set(variant, {
      ...headOf(res),
      body,
      etag: etag === undefined ? undefined : String(etag),
      route: routeLabel(res as Response),
      validUntilMs: reuse.validUntilMs,
      live: reuse.live,
      conditional: new Map(),
    });
    bound(slot.variants, MAX_VARIANTS);
  }

  #add(slot: Slot): void {
    this.#slots.set(slot.target, slot);
    for (const key of slot.keys) {
      let slots = this.#byKey.get(key);
      if (slots === undefined) {
        slots = new Set();
        this.#byKey.set(key, slots);
      }
      slots.add(slot);
    }
    while (this.#slots.size > this.#max) this.#remove(this.#slots.values().next().value as Slot);
  }

  #remove(slot: Slot): void {
    if (this.#slots.get(slot.target) === slot) this.#slots.delete(slot.target);
    for (const key of slot.keys) {
      const slots = this.#byKey.get(key);
      slots?.delete(slot);
      if (slots?.size === 0) this.#byKey.delete(key);
    }
  }
}
