// The service as a user starts it (`node dist/main.js`, what `npm start` runs once its prestart check has built
// dist/; the test setup runs that check), on a free port with its own DATA_DIR, for end-to-end tests.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';

export const tsxBin = join(process.cwd(), 'node_modules/.bin/tsx');

/** What `npm start` runs, without npm and its shell: one process, which a test can stop or kill hard. */
export const serviceCommand: readonly [string, string[]] = [process.execPath, [join(process.cwd(), 'dist/main.js')]];

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface ServiceProcess {
  base: string;
  /** SIGINT, then waits for the process (and its chains) to end. */
  stop(): Promise<void>;
}

/** Starts the service (with `env` beside its DATA_DIR and port) and resolves once GET /api/health answers 200. */
export async function startServiceProcess(dataDir: string, env: Record<string, string> = {}): Promise<ServiceProcess> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(serviceCommand[0], serviceCommand[1], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    child.kill('SIGINT');
    await exited;
  };
  for (let i = 0; i < 300; i++) {
    const res = await fetch(`${base}/api/health`).catch(() => undefined);
    if (res?.status === 200) return { base, stop };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop();
  throw new Error('the service did not become healthy');
}

/** A started `dist/main.js` whose output is kept for a failure's message. */
export interface SpawnedService {
  base: string;
  child: ChildProcess;
  /** Resolves once the process has ended. */
  exited: Promise<void>;
  /** The last 8,000 characters it printed. */
  output: () => string;
}

/** Spawns the service with exactly `env` (PORT included, on `port`); does not wait for it to be healthy. */
export function spawnService(env: NodeJS.ProcessEnv, port: number): SpawnedService {
  const child = spawn(serviceCommand[0], serviceCommand[1], { env: { ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = `${output}${chunk.toString()}`.slice(-8_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { base: `http://127.0.0.1:${port}`, child, exited, output: () => output };
}
