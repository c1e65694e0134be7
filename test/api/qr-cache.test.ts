// A session's deep link and QR image are made once and served from then on: eight requests at once for the QR of
// one session get the very same link and image as the session's own answer (rendering one costs about 10 ms of CPU,
// and eight at once slowed every other request tenfold).
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { newAccount } from '../support/agents.js';
import { type TestApp, testApp } from '../support/app.js';
import { deployTestNetworks } from '../support/registration-flow.js';

describe('QR codes', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = testApp((await deployTestNetworks()).chains);
  });

  it("eight requests at once for a session's QR get the session's own deep link and image", async () => {
    const opened = await request(t.app).post('/api/agent/register').send({ mode: 'linked', network: 'testnet', humanAddress: newAccount().address });
    expect(opened.status).toBe(200);
    const watchToken = new URL(opened.body.scanUrl as string).searchParams.get('token') as string;
    const answers = await Promise.all(Array.from({ length: 8 }, () => request(t.app).get('/api/agent/register/qr').query({ token: watchToken })));
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ deepLink: opened.body.deepLink, qrImageBase64: opened.body.qrImageBase64 });
    }
    // another session: its own link and image
    const other = await request(t.app).post('/api/agent/register').send({ mode: 'linked', network: 'testnet', humanAddress: newAccount().address });
    expect(other.body.deepLink).not.toBe(opened.body.deepLink);
    expect(other.body.qrImageBase64).not.toBe(opened.body.qrImageBase64);
  });
});
