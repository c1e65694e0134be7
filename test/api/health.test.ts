import { createServer } from 'node:net';
import { Ajv2020 } from 'ajv/dist/2020.js';
import request from 'supertest';
import { formatEther, parseEther } from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LowDepositReport } from '../../src/aa/paymaster-deposits.js';
import { ChainGateway, createNetworkGateway } from '../../src/chain/gateway.js';
import { type AccountAbstractionAddresses, deployAccountAbstraction } from '../../src/devnet/aa/deploy-aa.js';
import type { OpenApiDocument } from '../../src/http/openapi/document.js';
import { testApp } from '../support/app.js';
import { deployTestSystem, LOCAL, type TestSystem } from '../support/chain.js';

/** A loopback port with nothing listening on it: a chain that is down. */
async function deadRpcUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

describe('GET /api/health', () => {
  let mainnet: TestSystem;
  let testnet: TestSystem;

  beforeAll(async () => {
    [mainnet, testnet] = await Promise.all([deployTestSystem('mainnet'), deployTestSystem('testnet')]);
  });

  /** GET /api/health of an app serving both test systems, the testnet one through `testnetGateway`. */
  const health = (testnetGateway = testnet.gateway) => {
    const chains = new ChainGateway({ mainnet: mainnet.gateway, testnet: testnetGateway });
    return request(testApp(chains, { version: '1.2.3' }).app).get('/api/health');
  };

  /** The testnet network configured with an external RPC at `rpcUrl` (the testnet system's contracts). */
  const externalTestnet = (rpcUrl: string) =>
    createNetworkGateway('testnet', {
      clientOptions: { rpcUrl, ...LOCAL },
      contracts: testnet.deployment.contracts,
      registryDeployBlock: 0n,
      embedded: false,
    });

  it('answers 200 with chain id, latest block and registry of both networks', async () => {
    const res = await health();

    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.status).toBe('ok');
    expect(res.body.version).toBe('1.2.3');
    const latest = Number(await testnet.client.getBlockNumber({ cacheTime: 0 }));
    expect(res.body.networks).toEqual([
      expect.objectContaining({ network: 'mainnet', chainId: 42220, up: true, registry: mainnet.deployment.contracts.registry }),
      expect.objectContaining({ network: 'testnet', chainId: 11142220, up: true, registry: testnet.deployment.contracts.registry }),
    ]);
    expect(res.body.networks[1].blockNumber).toBeGreaterThanOrEqual(latest);
  });

  it('says indexing, with blocks done and to go, pace and time left, while a first backfill runs; ok once it is live', async () => {
    // a history of 400 blocks read one block per eth_getLogs: long enough to be seen under way
    // in four calls: one long anvil_mine may outlast the client's timeout on a loaded machine
    for (let i = 0; i < 4; i++) await mainnet.client.request({ method: 'anvil_mine' as never, params: ['0x64'] as never });
    const { app, services } = testApp(new ChainGateway({ mainnet: mainnet.gateway, testnet: testnet.gateway }), { maxLogRange: 1n });
    const started = services.queries.start();
    try {
      let indexing: { status: number; body: { status: string; networks: { network: string; indexing?: Record<string, unknown> }[] } } | undefined;
      for (let i = 0; i < 200 && indexing === undefined; i++) {
        const res = await request(app).get('/api/health');
        if (res.body.status === 'indexing') indexing = res;
      }
      expect(indexing?.status).toBe(200);
      const progress = indexing?.body.networks.find((n) => n.network === 'mainnet')?.indexing;
      expect(progress).toEqual({
        blocksDone: expect.any(Number),
        blocksToGo: expect.any(Number),
        blocksPerSecond: expect.any(Number),
        etaSeconds: progress?.['blocksPerSecond'] ? expect.any(Number) : null,
      });
      expect((progress?.['blocksToGo'] as number) + (progress?.['blocksDone'] as number)).toBeGreaterThanOrEqual(400);
      await started;
      const live = await request(app).get('/api/health');
      expect(live.body.status).toBe('ok');
      expect(live.body.networks.every((n: { indexing?: unknown }) => n.indexing === undefined)).toBe(true);
    } finally {
      await services.queries.stop();
    }
  });

  it('answers 503 and names the network whose chain does not answer', async () => {
    const res = await health(externalTestnet(await deadRpcUrl()));

    expect(res.status).toBe(503);
    expect(res.body.status).toBe('degraded');
    expect(res.body.networks[0]).toMatchObject({ network: 'mainnet', up: true });
    expect(res.body.networks[1]).toMatchObject({ network: 'testnet', up: false, blockNumber: null, rpc: 'external' });
    expect(typeof res.body.networks[1].error).toBe('string');
  });

  it('reports a chain that answers with the wrong chain id as down', async () => {
    // the mainnet anvil (42220) configured as the testnet network
    const res = await health(externalTestnet(mainnet.rpcUrl));

    expect(res.status).toBe(503);
    expect(res.body.networks[1]).toMatchObject({ up: false, error: 'RPC answers for chain 42220' });
  });
});

describe("GET /api/health: the local paymaster's deposit", () => {
  let mainnet: TestSystem;
  let system: TestSystem;
  let aa: AccountAbstractionAddresses;

  beforeAll(async () => {
    [mainnet, system] = await Promise.all([deployTestSystem('mainnet'), deployTestSystem('testnet')]);
    aa = await deployAccountAbstraction({ client: system.client, wallet: system.operator, paymasterSigner: system.operator.account.address });
  });

  const appWith = (paymasterLowDeposit: bigint, onLowPaymasterDeposit?: (report: LowDepositReport) => void) =>
    testApp(new ChainGateway({ mainnet: mainnet.gateway, testnet: system.gateway }), {
      accountAbstraction: { testnet: aa },
      paymasterLowDeposit,
      ...(onLowPaymasterDeposit ? { onLowPaymasterDeposit } : {}),
    });

  it('shows it on the network that runs one, low under the threshold (still 200), in the metrics, and reports a low one once', async () => {
    const deposit = await system.client.readContract({
      address: aa.entryPoint,
      abi: entryPoint07Abi,
      functionName: 'balanceOf',
      args: [aa.paymaster],
    });
    const fine = await request(appWith(parseEther('10')).app).get('/api/health');
    expect(fine.status).toBe(200);
    expect(fine.body.networks[0].paymaster, 'no paymaster of ours on mainnet').toBeUndefined();
    expect(fine.body.networks[1].paymaster).toEqual({ deposit: formatEther(deposit), low: false, threshold: '10' });

    const reports: LowDepositReport[] = [];
    const low = appWith(deposit + 1n, (report) => reports.push(report));
    const res = await request(low.app).get('/api/health');
    expect(res.status, 'a low deposit does not take the instance out').toBe(200);
    expect(res.body).toMatchObject({ status: 'ok' });
    expect(res.body.networks[1].paymaster).toEqual({ deposit: formatEther(deposit), low: true, threshold: formatEther(deposit + 1n) });
    await request(low.app).get('/api/health');
    expect(reports).toEqual([{ network: 'testnet', deposit, threshold: deposit + 1n }]);
    // the documented schema (the OpenAPI document the fuzzer checks answers against) holds the new member
    const doc = (await request(low.app).get('/openapi.json')).body as OpenApiDocument;
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
    ajv.addKeyword('components');
    ajv.addSchema({ $id: 'api', components: doc.components });
    const validate = ajv.compile({
      $ref: `api${String(doc.paths['/api/health']?.get?.responses['200']?.content?.['application/json']?.schema?.['$ref'])}`,
    });
    expect(validate(res.body) ? [] : validate.errors).toEqual([]);
    expect(validate({ ...res.body, networks: [{ ...res.body.networks[1], paymaster: { deposit: 1, low: 'no' } }] })).toBe(false);
    const metrics = (await request(low.app).get('/metrics')).text;
    expect(metrics).toContain(`aa_paymaster_deposit{network="testnet"} ${Number(formatEther(deposit))}`);
    expect(metrics).toContain('aa_paymaster_deposit_low{network="testnet"} 1');
  });
});

describe('unknown paths and bad bodies', () => {
  let chains: ChainGateway;
  beforeAll(async () => {
    const system = await deployTestSystem('testnet');
    chains = new ChainGateway({ mainnet: system.gateway, testnet: system.gateway });
  });

  it('answers 404 with an error body for an unknown /api path', async () => {
    const res = await request(testApp(chains).app).get('/api/no/such/thing');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: expect.stringContaining('GET /api/no/such/thing') });
  });

  it('answers 400 with an error body for malformed JSON where a body is taken; an unknown path stays a 404', async () => {
    const { app } = testApp(chains);
    const res = await request(app).post('/api/agent/register').set('content-type', 'application/json').send('{"mode": ');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Request body is not valid JSON' });
    const unknown = await request(app).post('/api/anything').set('content-type', 'application/json').send('{"mode": ');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'No endpoint POST /api/anything' });
  });
});
