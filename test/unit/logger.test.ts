import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { routeConsoleTo } from '../../src/logger.js';

describe('routeConsoleTo', () => {
  const original = { debug: console.debug, log: console.log, info: console.info, warn: console.warn, error: console.error };
  afterEach(() => Object.assign(console, original));

  it('turns console calls into JSON log lines at the matching level, errors as err', () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino(
      { level: 'debug' },
      new Writable({
        write(chunk: Buffer, _encoding, next) {
          lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
          next();
        },
      }),
    );
    routeConsoleTo(logger);
    console.error('Unhandled error in JSON-RPC POST handler:', new Error('boom'));
    console.warn('Reference task %s not found.', 't-1');
    console.log('plain', 42);
    Object.assign(console, original);

    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({ level: 50, source: 'console', msg: 'Unhandled error in JSON-RPC POST handler:', err: { message: 'boom' } });
    expect(lines[1]).toMatchObject({ level: 40, msg: 'Reference task t-1 not found.' });
    expect(lines[2]).toMatchObject({ level: 30, msg: 'plain 42' });
  });
});
