import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger, flushLogger, routeConsoleTo, TurnBatchedDestination } from '../../src/logger.js';

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

// The service's log destination: pino's asynchronous file destination (sonic-boom) behind TurnBatchedDestination,
// on a real file. What reaches the file is read back; the writes that reach the file destination are counted by
// wrapping its write, which is how the batching shows (one write per event-loop turn, whatever the number of lines).
describe('TurnBatchedDestination', () => {
  const dir = mkdtempSync(join(tmpdir(), 'registry-log-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let files = 0;

  /** A logger on a new file through a TurnBatchedDestination, the file destination open, its writes counted. */
  async function fileLogger() {
    const file = join(dir, `${++files}.log`);
    const sink = pino.destination({ dest: file, sync: false });
    await once(sink, 'ready');
    const writes: string[] = [];
    const write = sink.write.bind(sink);
    sink.write = (data: string) => {
      writes.push(data);
      return write(data);
    };
    return { file, writes, logger: createLogger('info', new TurnBatchedDestination(sink)) };
  }

  const linesIn = (file: string): Record<string, unknown>[] =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  /** The `i` of each line once the file holds `count` lines: sonic-boom calls flush back before its write is done. */
  const written = async (file: string, count: number): Promise<unknown[]> => {
    await vi.waitFor(() => expect(linesIn(file)).toHaveLength(count), { timeout: 5_000, interval: 5 });
    return linesIn(file).map((line) => line['i']);
  };

  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
  const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => from + k);

  it('hands the lines of one turn to the file destination as one write, after the turn, in order', async () => {
    const { file, writes, logger } = await fileLogger();
    for (let i = 0; i < 100; i++) logger.info({ i }, 'line');
    // nothing is written while the turn runs
    expect(writes).toHaveLength(0);
    await nextTurn();
    expect(writes).toHaveLength(1);
    expect(writes[0]?.split('\n').filter((line) => line !== '')).toHaveLength(100);
    expect(await written(file, 100)).toEqual(range(0, 100));
  });

  it('flushLogger hands the pending lines over at once, and the end of the turn writes nothing more', async () => {
    const { file, writes, logger } = await fileLogger();
    logger.info({ i: 0 }, 'line');
    logger.warn({ i: 1, session: { token: 'secret' } }, 'line');
    logger.error({ i: 2 }, 'line');
    await flushLogger(logger);
    expect(writes).toHaveLength(1);
    await nextTurn();
    expect(writes).toHaveLength(1);
    expect(await written(file, 3)).toEqual([0, 1, 2]);
    expect(linesIn(file).map((line) => line['level'])).toEqual([30, 40, 50]);
    // the service's redaction still applies
    expect(readFileSync(file, 'utf8')).not.toContain('secret');
  });

  it('loses nothing across many turns, one write per turn that logged, in order', async () => {
    const { file, writes, logger } = await fileLogger();
    let i = 0;
    for (let turn = 0; turn < 50; turn++) {
      for (let k = 0; k < 20; k++) logger.info({ i: i++, pad: 'x'.repeat(200) }, 'line');
      // the next turn: the file destination may still be writing an earlier one, and queues what it is handed
      await nextTurn();
    }
    await nextTurn();
    expect(writes).toHaveLength(50);
    expect(await written(file, 1000)).toEqual(range(0, 1000));
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
          [
            `import { once } from 'node:events';`,
            `import { openSync, readFileSync } from 'node:fs';`,
            `import { pino } from 'pino';`,
            `import { createLogger, logDestination, TurnBatchedDestination } from './src/logger.ts';`,
            body,
          ].join('\n'),
        ],
        { cwd: ROOT },
      );

    it('the lines logged right before process.exit(0) are in the file once the process has exited', async () => {
      const file = join(dir, 'exit.log');
      // the service's own destination (logDestination) on an open file descriptor, as on standard output: lines
      // logged in the very first turn, then exit
      await child(
        [
          `const logger = createLogger('info', logDestination(openSync(${JSON.stringify(file)}, 'a')));`,
          `for (let i = 0; i < 100; i++) logger.info({ i }, 'line');`,
          'process.exit(0);',
        ].join('\n'),
      );
      expect(linesIn(file).map((line) => line['i'])).toEqual(range(0, 100));
    });

    it('the lines pending at exit follow what the file already had, on a file the destination opened itself', async () => {
      const file = join(dir, 'exit-path.log');
      await child(
        [
          `const file = ${JSON.stringify(file)};`,
          `const sink = pino.destination({ dest: file, sync: false });`,
          `await once(sink, 'ready');`,
          `const logger = createLogger('info', new TurnBatchedDestination(sink));`,
          `for (let i = 0; i < 1000; i++) logger.info({ i }, 'line');`,
          // until that turn's write has landed (one still under way at exit can land after the lines written at exit:
          // sonic-boom's flushSync cannot wait for it)
          `while (readFileSync(file, 'utf8').split('\\n').length <= 1000) await new Promise((resolve) => setTimeout(resolve, 5));`,
          `for (let i = 1000; i < 1100; i++) logger.info({ i }, 'line');`,
          'process.exit(0);',
        ].join('\n'),
      );
      expect(linesIn(file).map((line) => line['i'])).toEqual(range(0, 1100));
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
      const seen = stdout
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => (JSON.parse(line) as { i: number }).i);
      expect(seen).toEqual(range(0, 2000));
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
