import { exportJWK, generateKeyPair } from 'jose';
import { parseEther } from 'viem';
import { describe, expect, it } from 'vitest';
import { CELO_DEPLOYMENTS } from '../../src/chain/celo-deployments.js';
import { loadConfig, metricsExposure } from '../../src/config.js';

describe('loadConfig', () => {
  it('runs embedded chains on defaults when no RPC URL is set', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 3000, host: '127.0.0.1', dataDir: '.data', publicUrl: 'http://127.0.0.1:3000' });
    expect(config.networks.mainnet).toEqual({ kind: 'embedded' });
    expect(config.networks.testnet).toEqual({ kind: 'embedded' });
  });

  it('points a network at an RPC with the Celo deployment as default addresses', () => {
    const config = loadConfig({ MAINNET_RPC_URL: 'https://forno.celo.org', PORT: '8080' });
    expect(config.port).toBe(8080);
    expect(config.networks.testnet).toEqual({ kind: 'embedded' });
    expect(config.networks.mainnet).toEqual({
      kind: 'external',
      rpcUrl: 'https://forno.celo.org',
      contracts: {
        registry: CELO_DEPLOYMENTS.mainnet.registry,
        proofProvider: CELO_DEPLOYMENTS.mainnet.proofProvider,
        hub: CELO_DEPLOYMENTS.mainnet.hub,
        demoVerifier: CELO_DEPLOYMENTS.mainnet.demoVerifier,
        demoVerifierEd25519: null,
        multicall: CELO_DEPLOYMENTS.mainnet.multicall,
      },
      registryDeployBlock: 59_965_405n,
    });
  });

  it('takes addresses from the environment over the defaults', () => {
    const registry = '0x1111111111111111111111111111111111111111';
    const config = loadConfig({ TESTNET_RPC_URL: 'http://127.0.0.1:8545', TESTNET_REGISTRY_ADDRESS: registry, TESTNET_REGISTRY_DEPLOY_BLOCK: '7' });
    expect(config.networks.testnet).toMatchObject({ kind: 'external', contracts: { registry }, registryDeployBlock: 7n });
  });

  it('limits the HTTP server and leaves /metrics open on the main port by default', () => {
    const config = loadConfig({});
    expect(config.http).toEqual({ requestTimeoutMs: 30_000, headersTimeoutMs: 10_000, maxConnections: 1_000 });
    expect(config.metrics).toEqual({ host: '127.0.0.1' });
    expect(config.reportedTxTimeoutMs).toBeUndefined();
    const set = loadConfig({
      REQUEST_TIMEOUT_MS: '5000',
      HEADERS_TIMEOUT_MS: '2000',
      MAX_CONNECTIONS: '0',
      METRICS_TOKEN: 'a-token-of-16-chars',
      METRICS_PORT: '9464',
      METRICS_HOST: '10.0.0.5',
      CALLBACK_TX_TIMEOUT_MS: '120000',
    });
    expect(set.http).toEqual({ requestTimeoutMs: 5_000, headersTimeoutMs: 2_000, maxConnections: 0 });
    expect(set.metrics).toEqual({ token: 'a-token-of-16-chars', port: 9464, host: '10.0.0.5' });
    expect(set.reportedTxTimeoutMs).toBe(120_000);
  });

  it('refuses a headers timeout above the request timeout, a metrics port equal to PORT, a short metrics token', () => {
    expect(() => loadConfig({ REQUEST_TIMEOUT_MS: '5000', HEADERS_TIMEOUT_MS: '6000' })).toThrow(
      /HEADERS_TIMEOUT_MS: must not exceed REQUEST_TIMEOUT_MS/,
    );
    expect(() => loadConfig({ PORT: '3000', METRICS_PORT: '3000' })).toThrow(/METRICS_PORT: must differ from PORT/);
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN: must be at least 16 characters/);
  });

  it("reads the local paymasters' sponsorship policy: allowed targets, budgets in gas and native value, the low deposit", () => {
    const defaults = loadConfig({}).aaSponsorship;
    expect(defaults).toEqual({
      allowedTargets: [],
      budgets: {
        perToken: { gas: 10_000_000n, wei: parseEther('0.05') },
        perClient: { gas: 20_000_000n, wei: parseEther('0.1') },
        global: { gas: 400_000_000n, wei: parseEther('2') },
      },
      lowDeposit: parseEther('10'),
    });
    const set = loadConfig({
      AA_SPONSOR_ALLOWED_TARGETS: ' 0x5aeda56215b167893e80b4fe645ba6d5bab767de, ,0x1111111111111111111111111111111111111111',
      AA_SPONSOR_TOKEN_GAS_PER_HOUR: '0',
      AA_SPONSOR_CLIENT_VALUE_PER_HOUR: '0.000000000000000001',
      AA_SPONSOR_GLOBAL_VALUE_PER_HOUR: '25',
      AA_PAYMASTER_LOW_DEPOSIT: '2.5',
    }).aaSponsorship;
    expect(set.allowedTargets).toEqual(['0x5AEDA56215b167893e80B4fE645BA6d5Bab767DE', '0x1111111111111111111111111111111111111111']);
    expect(set.budgets.perToken.gas).toBe(0n);
    expect(set.budgets.perClient.wei).toBe(1n);
    expect(set.budgets.global.wei).toBe(parseEther('25'));
    expect(set.lowDeposit).toBe(parseEther('2.5'));
    expect(() =>
      loadConfig({
        AA_SPONSOR_ALLOWED_TARGETS: '0x12',
        AA_SPONSOR_CLIENT_GAS_PER_HOUR: '1e6',
        AA_SPONSOR_CLIENT_VALUE_PER_HOUR: '-1',
        AA_PAYMASTER_LOW_DEPOSIT: '0.0000000000000000001',
      }),
    ).toThrow(
      /AA_SPONSOR_ALLOWED_TARGETS.*0x12 is not a 0x-prefixed 20-byte hex address[\s\S]*AA_SPONSOR_CLIENT_GAS_PER_HOUR: must be a whole amount of gas[\s\S]*AA_SPONSOR_CLIENT_VALUE_PER_HOUR: must be an amount of the native token[\s\S]*AA_PAYMASTER_LOW_DEPOSIT/,
    );
  });

  it('bounds what clients can write: messages to the agent, query tasks, chat history', () => {
    const config = loadConfig({});
    expect(config.agentMessages).toEqual({ perMinute: 60, maxMessageBytes: 4_096, maxBodyBytes: 32_768 });
    expect(config.a2aTasks).toEqual({ queryMs: 600_000, conversationMs: 3_600_000 });
    expect(config.chatHistory).toEqual({ ttlMs: 3_600_000, maxBytes: 16_384 });
    const set = loadConfig({
      AGENT_MESSAGES_PER_MINUTE: '5',
      AGENT_MESSAGE_MAX_BYTES: '1000',
      AGENT_MESSAGE_BODY_LIMIT_BYTES: '2048',
      A2A_QUERY_TASK_TTL_MS: '60000',
      A2A_CONVERSATION_TTL_MS: '120000',
      CHAT_HISTORY_TTL_MS: '30000',
      CHAT_HISTORY_MAX_BYTES: '4096',
    });
    expect(set.agentMessages).toEqual({ perMinute: 5, maxMessageBytes: 1_000, maxBodyBytes: 2_048 });
    expect(set.a2aTasks).toEqual({ queryMs: 60_000, conversationMs: 120_000 });
    expect(set.chatHistory).toEqual({ ttlMs: 30_000, maxBytes: 4_096 });
    expect(() => loadConfig({ AGENT_MESSAGE_MAX_BYTES: '8192', AGENT_MESSAGE_BODY_LIMIT_BYTES: '4096' })).toThrow(
      /AGENT_MESSAGE_BODY_LIMIT_BYTES: must be at least AGENT_MESSAGE_MAX_BYTES \(8192\)/,
    );
    expect(() => loadConfig({ AGENT_MESSAGE_BODY_LIMIT_BYTES: '300000' })).toThrow(/AGENT_MESSAGE_BODY_LIMIT_BYTES: must be at most 204800/);
    expect(() => loadConfig({ AGENT_MESSAGES_PER_MINUTE: '0' })).toThrow(/AGENT_MESSAGES_PER_MINUTE/);
  });

  it('reads the signing key: generated Ed25519 by default, SIGNING_KEY as given, a replaced key listed for a day', async () => {
    expect(loadConfig({}).signingKey).toEqual({ alg: 'EdDSA', retireAfterMs: 86_400_000 });
    expect(loadConfig({ SIGNING_KEY_ALG: 'ES256', SIGNING_KEY_RETIRE_AFTER_MS: '0' }).signingKey).toEqual({ alg: 'ES256', retireAfterMs: 0 });
    const jwk = await exportJWK((await generateKeyPair('EdDSA', { extractable: true })).privateKey);
    expect(loadConfig({ SIGNING_KEY: JSON.stringify({ ...jwk, kid: 'ops-1' }) }).signingKey.given).toEqual({
      kty: 'OKP',
      crv: 'Ed25519',
      x: jwk.x,
      d: jwk.d,
      alg: 'EdDSA',
      kid: 'ops-1',
    });
  });

  it('refuses a malformed SIGNING_KEY, naming it and what is wrong, never echoing it', async () => {
    const jwk = await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey);
    const other = await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey);
    const cases: [string, RegExp][] = [
      ['{"kty":', /SIGNING_KEY: must be a private JWK as JSON/],
      [JSON.stringify({ ...jwk, d: undefined }), /SIGNING_KEY: holds no private part \(d\)/],
      [JSON.stringify({ ...jwk, x: other.x, y: other.y }), /SIGNING_KEY: has a public part \(x, y\) that is not its private part's/],
      [JSON.stringify({ ...jwk, crv: 'P-384' }), /SIGNING_KEY: must be an Ed25519 .* or P-256/],
    ];
    const refusal = (value: string): string => {
      try {
        loadConfig({ SIGNING_KEY: value });
        return 'accepted';
      } catch (error) {
        return (error as Error).message;
      }
    };
    for (const [value, message] of cases) {
      expect(refusal(value)).toMatch(message);
      expect(refusal(value)).not.toContain(jwk.d);
    }
    expect(() => loadConfig({ SIGNING_KEY_ALG: 'RS256' })).toThrow(/SIGNING_KEY_ALG: must be EdDSA \(Ed25519\) or ES256 \(P-256\)/);
    expect(() => loadConfig({ SIGNING_KEY_RETIRE_AFTER_MS: '-1' })).toThrow(/SIGNING_KEY_RETIRE_AFTER_MS/);
  });

  it("reads the stored index writer's lease: 15 s by default, at least a second", () => {
    expect(loadConfig({}).registryIndex.leaseMs).toBe(15_000);
    expect(loadConfig({ INDEX_LEASE_MS: '2000' }).registryIndex.leaseMs).toBe(2_000);
    expect(() => loadConfig({ INDEX_LEASE_MS: '500' })).toThrow(/INDEX_LEASE_MS: must be at least 1000/);
    expect(() => loadConfig({ INDEX_LEASE_MS: 'soon' })).toThrow(/INDEX_LEASE_MS/);
  });

  it('names every invalid variable in one error', () => {
    expect(() => loadConfig({ PORT: 'eighty', MAINNET_RPC_URL: 'not a url', TESTNET_RPC_URL: 'http://x', TESTNET_HUB_ADDRESS: '0x12' })).toThrow(
      /PORT[\s\S]*MAINNET_RPC_URL[\s\S]*TESTNET_HUB_ADDRESS/,
    );
  });

  it('names /metrics reachable beyond loopback without a token, and nothing else', () => {
    expect(metricsExposure(loadConfig({}))).toBeUndefined();
    expect(metricsExposure(loadConfig({ HOST: '0.0.0.0' }))).toMatchObject({ host: '0.0.0.0', message: expect.stringMatching(/METRICS_TOKEN/) });
    expect(metricsExposure(loadConfig({ HOST: '0.0.0.0', METRICS_TOKEN: 'a'.repeat(32) }))).toBeUndefined();
    // a metrics listener of its own on loopback keeps it private whatever HOST is
    expect(metricsExposure(loadConfig({ HOST: '0.0.0.0', METRICS_PORT: '9100' }))).toBeUndefined();
    expect(metricsExposure(loadConfig({ METRICS_PORT: '9100', METRICS_HOST: '::' }))).toMatchObject({ host: '::' });
  });
});
