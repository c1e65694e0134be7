// The operations settings as the service applies them when it starts: the main server's timeouts and connection
// cap, and /metrics on a listener of its own (with its token), absent from the main port.
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { type RunningService, startService } from '../../src/main.js';

const connect = (port: number): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const socket = createConnection({ port, host: '127.0.0.1' }, () => resolve(socket));
    socket.once('error', reject);
  });

/** Whether the server closes `socket` (sending nothing) within `ms`. */
const closedWithin = (socket: Socket, ms: number): Promise<boolean> =>
  new Promise((resolve) => {
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(false);
    }, ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
    socket.on('error', () => undefined);
  });

describe('operations settings, in process', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'registry-ops-'));
  let service: RunningService | undefined;
  afterAll(async () => {
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('limits the main server and serves /metrics only on METRICS_PORT, behind METRICS_TOKEN', { timeout: 180_000 }, async () => {
    const token = 'ops-test-token-0123456789';
    const config = loadConfig({
      DATA_DIR: dataDir,
      PORT: '0',
      REQUEST_TIMEOUT_MS: '4000',
      HEADERS_TIMEOUT_MS: '2000',
      MAX_CONNECTIONS: '64',
      METRICS_PORT: '0',
      METRICS_TOKEN: token,
    });
    service = await startService(config, createLogger('silent'));
    expect(service.server.requestTimeout).toBe(4_000);
    expect(service.server.headersTimeout).toBe(2_000);
    // 64 idle connections fill the cap: the 65th is closed as it arrives, and a freed place serves again
    const { port } = new URL(service.url);
    const idle = await Promise.all(Array.from({ length: 64 }, () => connect(Number(port))));
    const refused = await connect(Number(port));
    // within a second: before the 2 s headers timeout would close any idle connection
    expect(await closedWithin(refused, 1_000)).toBe(true);
    for (const socket of idle) socket.destroy();
    await expect.poll(async () => (await fetch(`${service?.url}/api/health`).catch(() => undefined))?.status).toBe(200);

    expect(service.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect((await fetch(`${service.url}/api/health`)).status).toBe(200);
    expect((await fetch(`${service.url}/metrics`)).status).toBe(404);
    const metricsUrl = service.metricsUrl as string;
    expect((await fetch(metricsUrl)).status).toBe(401);
    const res = await fetch(metricsUrl, { headers: { Authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/http_requests_total\{[^}]*route="\/api\/health"/);

    await service.stop();
    await expect(fetch(metricsUrl)).rejects.toThrow();
    service = undefined;
  });
});
