// A registration reaches its A2A register task and its session's watchers through the node's WebSocket alone: the
// identity app never calls back, and the log follower and the session watches poll once in ten minutes, so only the
// chain's announcements (new heads, the registry's logs) can tell the service in time. Without them the stream
// stays open and the test runs out of time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainGateway, createNetworkGateway } from '../../src/chain/gateway.js';
import { localWebSocketUrl } from '../../src/chain/new-heads.js';
import { REGISTER_TESTNET, rpcStream } from '../support/a2a.js';
import { type TestApp, testApp } from '../support/app.js';
import { LOCAL } from '../support/chain.js';
import { approveDeepLink, deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';
import { serveOnLoopback } from '../support/service-http.js';

/** Far longer than the test may take: a poll never comes in time. */
const TEN_MINUTES = 600_000;

describe('completion over the chain WebSocket, with no callback and no poll in time', () => {
  let networks: TestNetworks;
  let service: TestApp;
  let served: Awaited<ReturnType<typeof serveOnLoopback>>;

  beforeAll(async () => {
    networks = await deployTestNetworks();
    const { testnet } = networks;
    const followed = createNetworkGateway('testnet', {
      clientOptions: { rpcUrl: testnet.rpcUrl, ...LOCAL },
      contracts: testnet.deployment.contracts,
      registryDeployBlock: testnet.deployment.registryDeployBlock,
      embedded: false,
      newHeadsUrl: localWebSocketUrl(testnet.rpcUrl),
    });
    served = await serveOnLoopback((req, res) => service.app(req, res));
    service = testApp(new ChainGateway({ mainnet: networks.mainnet.gateway, testnet: followed }), {
      publicUrl: served.base,
      eventPollIntervalMs: TEN_MINUTES,
      sessionWatch: { pollIntervalMs: TEN_MINUTES },
    });
    await service.services.queries.start();
  });

  afterAll(async () => {
    service?.services.watcher.stopAll();
    service?.a2a.close();
    await service?.services.queries.stop();
    await served?.close();
  });

  it('completes the A2A register stream and the session status', async () => {
    const stream = await rpcStream(served.base, 'message/stream', {
      message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'data', data: REGISTER_TESTNET }] },
    });
    const task = (await stream.next()) as { kind: string; id: string; artifacts: { parts: { data?: Record<string, unknown> }[] }[] };
    expect(task.kind).toBe('task');
    const session = task.artifacts[0]?.parts[0]?.data as { deepLink: string; sessionToken: string };

    // the scan page's live updates: the session's watchers, as a browser follows them
    const scanPage = new URL(String((session as Record<string, unknown>)['scanPageUrl']));
    const events = await fetch(`${served.base}${scanPage.pathname}/events`, { headers: { accept: 'text/event-stream' } });
    expect(events.status).toBe(200);

    const { proof } = await approveDeepLink(service.app, networks, session.deepLink, { callback: false });
    expect(proof.status).toBe('submitted');

    let final: Record<string, unknown> | undefined;
    for (let event = await stream.next(); event !== undefined; event = await stream.next()) final = event;
    expect(final).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });

    expect(await stageAnnounced(events, 'completed')).toBe(true);

    // the REST status, read after the watchers completed the session, says the same, with the registering
    // transaction the WebSocket's Registered log named
    const status = await fetch(`${served.base}/api/agent/register/status`, { headers: { authorization: `Bearer ${session.sessionToken}` } });
    expect(await status.json()).toMatchObject({ stage: 'completed', agentId: expect.any(Number), txHash: proof.txHash });
  });
});

/** Reads the scan page's server-sent events until one says `stage`; false if the stream ends first. */
async function stageAnnounced(events: Response, stage: string): Promise<boolean> {
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of events.body as unknown as AsyncIterable<Uint8Array>) {
    text += decoder.decode(chunk, { stream: true });
    if (text.includes(`"stage":"${stage}"`)) {
      await events.body?.cancel().catch(() => undefined);
      return true;
    }
  }
  return false;
}
