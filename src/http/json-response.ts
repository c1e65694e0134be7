// res.json for the app's answers, without express's general machinery where it has nothing to decide. Express's
// res.json goes through res.send, which re-parses the Content-Type it just set to add a charset, makes a hash object
// for the weak ETag, and parses the request's conditional headers through `fresh`, for every answer. The common
// answer (a JSON value, no Content-Type or ETag of the handler's own, a 2xx status other than 204 and 205, a request
// without If-None-Match or If-Modified-Since) needs none of that, and is written here with the same headers, the same
// weak ETag and the same body. Every other answer goes through express's own res.json, unchanged.
import { hash } from 'node:crypto';
import type { Express, Response } from 'express';

const JSON_TYPE = 'application/json; charset=utf-8';

/** Express's weak ETag of a body (the `etag` package's format): its length in hex and its SHA-1, in base64. */
export const weakEtag = (body: string): string => `W/"${Buffer.byteLength(body).toString(16)}-${hash('sha1', body, 'base64').slice(0, 27)}"`;

/**
 * Installs the fast res.json on `app`'s response prototype. Call it once the app's `etag` setting is final: with
 * express's weak ETags (the default) the fast path sends the same, with ETags off none; with strong ETags or an ETag
 * function of the app's own every answer goes through express. The app must not set express's `json replacer`,
 * `json spaces` or `json escape` (this service sets none), which the fast path does not apply.
 */
export function fastJson(app: Express): void {
  const response = app.response as Response;
  const expressJson = response.json;
  const setting: unknown = app.get('etag');
  if (setting !== true && setting !== 'weak' && setting !== false) return;
  const etags = setting !== false;
  response.json = function json(this: Response, value: unknown) {
    const { req, statusCode } = this;
    const body: unknown = JSON.stringify(value);
    if (
      typeof body !== 'string' ||
      statusCode < 200 ||
      statusCode > 299 ||
      statusCode === 204 ||
      statusCode === 205 ||
      this.hasHeader('Content-Type') ||
      this.hasHeader('ETag') ||
      this.hasHeader('Transfer-Encoding') ||
      req.headers['if-none-match'] !== undefined ||
      req.headers['if-modified-since'] !== undefined
    )
      return expressJson.call(this, value);
    this.setHeader('Content-Type', JSON_TYPE);
    this.setHeader('Content-Length', Buffer.byteLength(body));
    if (etags) this.setHeader('ETag', weakEtag(body));
    if (req.method === 'HEAD') this.end();
    else this.end(body, 'utf8');
    return this;
  };
}
