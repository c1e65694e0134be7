// A data part naming a network the service does not serve (chainId 1, an unknown name) is refused with a message
// naming the field, as the A2A agent reports a refused value: the task waits for input (input-required) and nothing
// is asked of any chain; it was read as mainnet before. v0.3 and v1.0 alike, and a register opens no session.
import type { Express } from 'express';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { ChainGateway } from '../../src/chain/gateway.js';
import { legacyDataOf, rpc } from '../support/a2a.js';
import { testApp } from '../support/app.js';
import { deployTestSystem } from '../support/chain.js';

const SUPPORTED = 'use network "mainnet" (chain id 42220) or "testnet" (chain id 11142220)';

describe('A2A data parts naming an unsupported network', () => {
  let app: Express;
  let sessionsOpened: () => number;

  beforeAll(async () => {
    const system = await deployTestSystem('testnet');
    const t = testApp(new ChainGateway({ mainnet: system.gateway, testnet: system.gateway }));
    app = t.app;
    let opened = 0;
    const open = t.services.sessions.open.bind(t.services.sessions);
    t.services.sessions.open = (...args) => {
      opened++;
      return open(...args);
    };
    sessionsOpened = () => opened;
  });

  const send = (data: Record<string, unknown>) =>
    rpc(app, 'message/send', { message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'data', data }] } });

  it.each([
    ['chainId 1', { chainId: 1 }, `Unsupported chainId 1: ${SUPPORTED}`],
    ['chainId "137"', { chainId: '137' }, `Unsupported chainId "137": ${SUPPORTED}`],
    ['network "ethereum"', { network: 'ethereum' }, `Unsupported network "ethereum": ${SUPPORTED}`],
    [
      'network testnet with chainId 42220',
      { network: 'testnet', chainId: 42220 },
      'network "testnet" and chainId 42220 name different networks: send one of them',
    ],
  ])('verify with %s: input-required, saying which networks there are', async (_name, fields, error) => {
    const res = await send({ intent: 'verify', agentId: 1, ...fields });
    expect(res.status).toBe(200);
    expect(res.body.result).toMatchObject({ kind: 'task', status: { state: 'input-required' } });
    expect(legacyDataOf(res.body.result)).toMatchObject({ error, missing: [], intent: 'verify' });
  });

  it('register with chainId 1 opens no session', async () => {
    const before = sessionsOpened();
    const res = await send({ intent: 'register', mode: 'wallet-free', chainId: 1 });
    expect(res.body.result).toMatchObject({ kind: 'task', status: { state: 'input-required' } });
    expect(legacyDataOf(res.body.result)['error']).toMatch(/^Unsupported chainId 1/);
    expect(sessionsOpened()).toBe(before);
  });

  it('v1.0: the same refusal', async () => {
    const res = await request(app)
      .post('/api/a2a')
      .set('A2A-Version', '1.0')
      .send({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ data: { intent: 'lookup', agentId: 1, chainId: 1 } }] } },
      });
    expect(res.body.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(JSON.stringify(res.body.result.task.status.message)).toContain('Unsupported chainId 1');
  });

  it('a supported chain id still answers', async () => {
    const res = await send({ intent: 'lookup', agentId: 1, chainId: 11142220 });
    expect(res.body.result.status.state).not.toBe('input-required');
  });
});
