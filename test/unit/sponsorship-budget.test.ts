// The local paymaster's sponsorship budgets: the bucket arithmetic (no 60-minute span ever holds more than the
// limit, whatever the timing; when a refused charge fits again), the three budgets charged together or not at all,
// the refusals naming their rule, and the ledger on the store (kept across a restart, per chain).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { parseEther } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import { DIRECT_CLIENT } from '../../src/aa/sponsoree-header.js';
import {
  BUDGET_BUCKET_MS,
  BUDGET_WINDOW_MS,
  type BudgetBucket,
  chargeBuckets,
  createMemoryBudgetLedger,
  sponsorshipBudgets,
} from '../../src/devnet/aa/sponsorship-budget.js';
import { storeBudgetLedger } from '../../src/devnet/aa/sponsorship-budget-ledger.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';

const SENDER = '0x00000000000000000000000000000000000000aA';
const HOUR = BUDGET_WINDOW_MS;
const T0 = 1_700_000_000_000 - (1_700_000_000_000 % BUDGET_BUCKET_MS);

describe('chargeBuckets', () => {
  const limit = { gas: 10_000_000n, wei: parseEther('0.05') };

  it('charges while gas and value both fit, then refuses saying what was used and when the cost fits again', () => {
    let buckets: BudgetBucket[] = [];
    const cost = { gas: 4_000_000n, wei: parseEther('0.01') };
    for (const at of [T0, T0 + 30_000]) {
      const charged = chargeBuckets(buckets, cost, limit, at);
      expect(charged.outcome).toEqual({ charged: true, bucket: T0 });
      buckets = charged.buckets;
    }
    const third = chargeBuckets(buckets, { gas: 4_000_000n, wei: 0n }, limit, T0 + 90_000);
    // the gas would be 12M: the first minute's two charges must leave first, 61 minutes after that minute began
    expect(third.outcome).toEqual({ charged: false, used: { gas: 8_000_000n, wei: parseEther('0.02') }, retryAt: T0 + HOUR + BUDGET_BUCKET_MS });
    expect(chargeBuckets(buckets, { gas: 1_000_000n, wei: parseEther('0.031') }, limit, T0 + 90_000).outcome).toMatchObject({ charged: false });
    expect(chargeBuckets(buckets, { gas: 2_000_000n, wei: parseEther('0.03') }, limit, T0 + 90_000).outcome).toMatchObject({ charged: true });
    expect(chargeBuckets(buckets, cost, limit, T0 + HOUR + BUDGET_BUCKET_MS - 1).outcome).toMatchObject({ charged: false });
    expect(chargeBuckets(buckets, cost, limit, T0 + HOUR + BUDGET_BUCKET_MS).outcome).toMatchObject({ charged: true });
    expect(chargeBuckets(buckets, { gas: 10_000_001n, wei: 0n }, limit, T0).outcome, 'never fits').toMatchObject({
      charged: false,
      retryAt: undefined,
    });
  });

  it('keeps at most 61 buckets, however many charges', () => {
    let buckets: BudgetBucket[] = [];
    for (let at = T0; at < T0 + 3 * HOUR; at += 7_000) {
      buckets = chargeBuckets(buckets, { gas: 1n, wei: 1n }, { gas: 10n ** 12n, wei: 10n ** 12n }, at).buckets;
    }
    expect(buckets.length).toBe(61);
  });

  it('never lets any 60-minute span hold more than the limit (random charges, every span checked)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            // gaps within a minute, of minutes, and of about an hour (where a window's edges are)
            after: fc.oneof(
              fc.integer({ min: 0, max: 70_000 }),
              fc.integer({ min: 0, max: 900_000 }),
              fc.integer({ min: HOUR - 120_000, max: HOUR }),
            ),
            gas: fc.oneof(fc.integer({ min: 1, max: 4_000_000 }), fc.constant(10_000_000)),
          }),
          { maxLength: 120 },
        ),
        (attempts) => {
          let buckets: BudgetBucket[] = [];
          let now = T0 + 12_345;
          const charged: { at: number; gas: bigint }[] = [];
          for (const { after, gas } of attempts) {
            now += after;
            const result = chargeBuckets(buckets, { gas: BigInt(gas), wei: 0n }, limit, now);
            buckets = result.buckets;
            if (result.outcome.charged) charged.push({ at: now, gas: BigInt(gas) });
          }
          // the worst span starts at some charge
          for (const start of charged) {
            const inSpan = charged.filter((c) => c.at >= start.at && c.at < start.at + HOUR).reduce((sum, c) => sum + c.gas, 0n);
            if (inSpan > limit.gas) return false;
          }
          return true;
        },
      ),
      { numRuns: 300, seed: 24 },
    );
  });
});

describe('sponsorshipBudgets', () => {
  const limits = {
    perToken: { gas: 3_000_000n, wei: parseEther('1') },
    perClient: { gas: 5_000_000n, wei: parseEther('1') },
    global: { gas: 10_000_000n, wei: parseEther('0.004') },
  };
  const cost = { gas: 2_000_000n, wei: parseEther('0.001') };

  it('charges the token, the client and the paymaster together, and a refusal names its budget and charges none', async () => {
    const budgets = sponsorshipBudgets(createMemoryBudgetLedger(), limits);
    const alice = { client: '203.0.113.1', token: 'token-a' };
    await budgets.charge(alice, SENDER, cost, T0);
    await expect(budgets.charge(alice, SENDER, cost, T0)).rejects.toMatchObject({
      code: -32001,
      data: { rule: 'token budget' },
      shortMessage:
        `Sponsorship refused: token budget: this proxy token was sponsored 2000000 gas and 0.001 in the last hour, and ${SENDER}'s ` +
        'operation may cost 2000000 gas and 0.001: over the budget of 3000000 gas and 1 per hour; try again in 3660 s or with a new token',
    });
    await budgets.charge({ ...alice, token: 'token-b' }, SENDER, cost, T0 + 1_000);
    await expect(budgets.charge({ ...alice, token: 'token-c' }, SENDER, cost, T0 + 2_000)).rejects.toMatchObject({
      data: { rule: 'client budget' },
      shortMessage: expect.stringMatching(
        /^Sponsorship refused: client budget: client 203\.0\.113\.1 was sponsored 4000000 gas .*try again in 3658 s$/,
      ),
    });
    // token-c was charged before the client refused: given back, so it still holds its whole budget
    await budgets.charge({ client: '203.0.113.2', token: 'token-c' }, SENDER, { gas: 3_000_000n, wei: 0n }, T0 + 3_000);
    // another client fits its own budget, until the paymaster's is spent (0.004 in all)
    await budgets.charge({ client: '203.0.113.3' }, SENDER, cost, T0 + 4_000);
    await expect(budgets.charge({ client: DIRECT_CLIENT }, SENDER, cost, T0 + 5_000)).rejects.toMatchObject({
      data: { rule: 'global budget' },
      shortMessage: expect.stringMatching(/^Sponsorship refused: global budget: this paymaster was sponsored 9000000 gas and 0\.003 /),
    });
    await expect(budgets.charge({ client: DIRECT_CLIENT }, SENDER, { gas: 6_000_000n, wei: 0n }, T0 + 5_000)).rejects.toMatchObject({
      shortMessage: expect.stringMatching(/^Sponsorship refused: client budget: callers without the proxy .*; this operation alone is over it$/),
    });
  });
});

describe('storeBudgetLedger', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sponsorship-budget-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('charges per chain and key, and keeps the spending across a restart of the store', async () => {
    const path = join(dir, 'store.sqlite');
    const limit = { gas: 5_000_000n, wei: parseEther('1') };
    const cost = { gas: 2_000_000n, wei: parseEther('0.5') };
    const first = new SqliteStore(path);
    const ledger = storeBudgetLedger(first, 11142220);
    expect(await ledger.charge('client:203.0.113.9', cost, limit, T0)).toEqual({ charged: true, bucket: T0 });
    expect(await ledger.charge('client:203.0.113.9', cost, limit, T0 + 61_000)).toEqual({ charged: true, bucket: T0 + BUDGET_BUCKET_MS });
    expect(await storeBudgetLedger(first, 42220).charge('client:203.0.113.9', cost, limit, T0), 'another chain').toMatchObject({ charged: true });
    await first.close();

    const second = new SqliteStore(path);
    const reopened = storeBudgetLedger(second, 11142220);
    expect(await reopened.charge('client:203.0.113.9', cost, limit, T0 + 62_000)).toEqual({
      charged: false,
      used: { gas: 4_000_000n, wei: parseEther('1') },
      retryAt: T0 + HOUR + BUDGET_BUCKET_MS,
    });
    await reopened.refund('client:203.0.113.9', cost, T0 + BUDGET_BUCKET_MS);
    expect(await reopened.charge('client:203.0.113.9', cost, limit, T0 + 62_000)).toMatchObject({ charged: true });
    await second.close();
  });
});
