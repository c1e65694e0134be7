// The operations settings as the service applies them when it starts: the main server's timeouts and connection
// cap, and /metrics on a listener of its own (with its token), absent from the main port.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { type RunningService, startService } from '../../src/main.js';

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
    expect(service.server.maxConnections).toBe(64);

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
