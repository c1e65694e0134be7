// A real redis-server for the tests of the shared store, the rate limits and the event bus: spawned on a free
// loopback port without persistence, answered PING before it is handed out, stopped by its own pid. CI installs
// Redis; a machine without /usr/bin/redis-server skips those suites (describe.skipIf(!redisAvailable)).
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Redis } from 'ioredis';
import { freePort } from './service-process.js';

export const REDIS_SERVER = '/usr/bin/redis-server';
/** The binary is here; the suites that need it name it when it is not. */
export const redisAvailable = existsSync(REDIS_SERVER);
export const hasRedisServer = (): boolean => redisAvailable;
export const REDIS_MISSING = `${REDIS_SERVER} not installed (apt-get install redis-server)`;

export interface RedisServer {
  url: string;
  port: number;
  /** The running server's pid. */
  readonly pid: number;
  /** SIGTERM, then waits for it to end. */
  stop(): Promise<void>;
  /** SIGKILL (a crash): the clients see the connection drop. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: it keeps nothing). */
  restart(): Promise<void>;
}

async function answersPing(port: number): Promise<boolean> {
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

async function spawnOn(port: number): Promise<{ child: ChildProcess; exited: Promise<void> }> {
  const child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let ended = false;
  void exited.then(() => {
    ended = true;
  });
  for (let attempt = 0; attempt < 200; attempt++) {
    if (ended) throw new Error(`redis-server on port ${port} exited at start`);
    if (await answersPing(port)) return { child, exited };
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server on port ${port} did not answer PING`);
}

export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  let running = await spawnOn(port);
  const end = async (signal: NodeJS.Signals): Promise<void> => {
    if (running.child.exitCode === null && running.child.signalCode === null) running.child.kill(signal);
    await running.exited;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      return running.child.pid as number;
    },
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
    async restart() {
      await end('SIGTERM');
      running = await spawnOn(port);
    },
  };
}
