// The proxied call's body, read with its size limit applied to the bytes as they arrive: a Content-Length that
// claims too much is refused before reading, and a body that runs past the limit (whatever Content-Length said, or
// chunked without one) is refused at the first byte over it. Nothing beyond the limit is kept.
import type { Readable } from 'node:stream';
import { badRequest, ServiceError } from '../core/errors.js';

/** The interface's limit: 200 KB, counted in bytes. */
export const MAX_BODY_BYTES = 200_000;

const tooLarge = (): ServiceError => new ServiceError(413, 'Request too large');

/** The body as UTF-8 text; 413 past `limit` bytes, 400 if the client stops sending or the bytes are not UTF-8. */
export function readBodyText(body: Readable, declaredLength: string | undefined, limit: number = MAX_BODY_BYTES): Promise<string> {
  if (declaredLength !== undefined && /^\d+$/.test(declaredLength) && Number(declaredLength) > limit) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (): void => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onAbort);
      body.off('close', onAbort);
    };
    const onData = (chunk: Buffer | string): void => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      size += bytes.length;
      if (size > limit) {
        stop();
        chunks.length = 0;
        // the rest is read and dropped, so the answer reaches a client that is still sending
        body.resume();
        reject(tooLarge());
        return;
      }
      chunks.push(bytes);
    };
    const onEnd = (): void => {
      stop();
      try {
        resolve(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(Buffer.concat(chunks, size)));
      } catch {
        reject(badRequest('Invalid JSON body: the body is not UTF-8 text'));
      }
    };
    const onAbort = (): void => {
      stop();
      reject(badRequest('Failed to read request body'));
    };
    body.on('data', onData);
    body.once('end', onEnd);
    body.once('error', onAbort);
    body.once('close', onAbort);
  });
}
