import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger, flushLogger, logDestination, routeConsoleTo } from '../../src/logger.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

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

// The service's log destination (logDestination): pino's asynchronous file destination, holding lines until a batch
// has gathered, on a real file or pipe. What reaches it is read back: every line, in order, whether it left because
// its batch filled, because flushLogger asked, because the destination's interval came, or because the process exited.
describe('logDestination', () => {
  const dir = mkdtempSync(join(tmpdir(), 'registry-log-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let files = 0;

  /** A logger on a new file through the service's destination. */
  function fileLogger() {
    const file = join(dir, `${++files}.log`);
    return { file, logger: createLogger('info', logDestination(file)) };
  }

  const linesIn = (file: string): Record<string, unknown>[] =>
    existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => JSON.parse(line) as Record<string, unknown>)
      : [];

  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
  const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => from + k);

  it('flushLogger resolves once the lines it held are in the file, in order, redacted', async () => {
    const { file, logger } = fileLogger();
    logger.info({ i: 0 }, 'line');
    logger.warn({ i: 1, session: { token: 'secret' } }, 'line');
    logger.error({ i: 2 }, 'line');
    await flushLogger(logger);
    expect(linesIn(file).map((line) => line['i'])).toEqual([0, 1, 2]);
    expect(linesIn(file).map((line) => line['level'])).toEqual([30, 40, 50]);
    // the service's redaction still applies
    expect(readFileSync(file, 'utf8')).not.toContain('secret');
  });

  it('loses nothing across many turns and full batches, in order', async () => {
    const { file, logger } = fileLogger();
    let i = 0;
    for (let turn = 0; turn < 50; turn++) {
      for (let k = 0; k < 20; k++) logger.info({ i: i++, pad: 'x'.repeat(200) }, 'line');
      await nextTurn();
    }
    for (let k = 0; k < 20_000; k++) logger.info({ i: i++, pad: 'x'.repeat(500) }, 'line');
    await flushLogger(logger);
    expect(linesIn(file).map((line) => line['i'])).toEqual(range(0, i));
  });

  it('a line of a quiet service, too few to fill a batch, reaches the file without a flush', async () => {
    const { file, logger } = fileLogger();
    logger.info({ i: 0 }, 'alone');
    await vi.waitFor(() => expect(linesIn(file)).toHaveLength(1), { timeout: 10_000, interval: 20 });
  });

  describe('on process exit', () => {
    /** Runs `body` in a node process of its own, with createLogger and friends imported; resolves once it has exited. */
    const child = (body: string) =>
      run(
        process.execPath,
        [
          '--import',
          'tsx',
          '--input-type=module',
          '-e',
          [`import { openSync, readFileSync } from 'node:fs';`, `import { createLogger, logDestination } from './src/logger.ts';`, body].join('\n'),
        ],
        { cwd: ROOT },
      );

    const indexes = (text: string): number[] =>
      text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => (JSON.parse(line) as { i: number }).i);

    it('the lines held at exit, fewer than a batch, are in the file in order once the process has exited', async () => {
      const file = join(dir, 'exit.log');
      // on an open file descriptor, as on standard output: lines logged in the very first turn, then exit
      await child(
        [
          `const logger = createLogger('info', logDestination(openSync(${JSON.stringify(file)}, 'a')));`,
          `for (let i = 0; i < 30; i++) logger.info({ i }, 'line');`,
          'process.exit(0);',
        ].join('\n'),
      );
      expect(indexes(readFileSync(file, 'utf8'))).toEqual(range(0, 30));
    });

    it('the lines held at exit follow what the file already had, on a file the destination opened itself', async () => {
      const file = join(dir, 'exit-path.log');
      await child(
        [
          `const file = ${JSON.stringify(file)};`,
          `const logger = createLogger('info', logDestination(file));`,
          `for (let i = 0; i < 1000; i++) logger.info({ i }, 'line');`,
          // until every batch has landed (see below for one still under way at exit)
          `while (readFileSync(file, 'utf8').split('\\n').length <= 1000) await new Promise((resolve) => setTimeout(resolve, 5));`,
          `for (let i = 1000; i < 1010; i++) logger.info({ i }, 'line');`,
          'process.exit(0);',
        ].join('\n'),
      );
      expect(indexes(readFileSync(file, 'utf8'))).toEqual(range(0, 1010));
    });

    // Batches whose asynchronous write is still under way at exit: the synchronous exit flush cannot wait for them
    // (pinojs/sonic-boom#101), so they may land after the lines it writes; none is lost.
    const everyOne = (seen: number[], count: number) => expect([...seen].sort((a, b) => a - b)).toEqual(range(0, count));

    it('many batches logged right before process.exit(0): every line is in the file', async () => {
      const file = join(dir, 'exit-batches.log');
      await child(
        [
          `const logger = createLogger('info', logDestination(openSync(${JSON.stringify(file)}, 'a')));`,
          `for (let i = 0; i < 2000; i++) logger.info({ i, pad: 'x'.repeat(200) }, 'line');`,
          'process.exit(0);',
        ].join('\n'),
      );
      everyOne(indexes(readFileSync(file, 'utf8')), 2000);
    });

    it('on standard output read through a pipe, every line logged before process.exit(0) arrives', async () => {
      // more than a pipe holds (64 KB): an asynchronous write started at exit would lose all but what the pipe took
      const { stdout } = await child(
        [
          `const logger = createLogger('info', logDestination());`,
          `for (let i = 0; i < 2000; i++) logger.info({ i, pad: 'x'.repeat(200) }, 'line');`,
          'process.exit(0);',
        ].join('\n'),
      );
      everyOne(indexes(stdout), 2000);
    });
  });

  it('flushLogger resolves when the reader of standard output has gone (EPIPE), so that a shutdown ends', async () => {
    const body = [
      `import { createLogger, logDestination, flushLogger } from './src/logger.ts';`,
      `const logger = createLogger('info', logDestination());`,
      `logger.info('first');`,
      // the parent closes its end once it has read the first line; the next writes meet EPIPE
      `await new Promise((resolve) => setTimeout(resolve, 300));`,
      `logger.info('second');`,
      `await new Promise((resolve) => setTimeout(resolve, 300));`,
      `logger.info('third');`,
      `await flushLogger(logger);`,
      `process.stderr.write('flushed');`,
    ].join('\n');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', body], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout.once('data', () => child.stdout.destroy());
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(stderr).toBe('flushed');
    expect(code).toBe(0);
  });
});
