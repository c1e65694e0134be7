// npx tsx scripts/bench-rfc9421-verify.ts: the pure signature checks alone, in process, warm: microseconds per
// verification of an RFC 9421 request signature (ERC-8128 for a secp256k1 agent, Web Bot Auth for an Ed25519 agent)
// next to today's x-svc-agent-* check of the same request by the same key. No service, store or chain: what the
// verifiers add on top is the same for both schemes. ECDSA recovery is the service's (native libsecp256k1); the
// Ed25519 key comes from a resolver that answers at once, as the service's warm agent cache does.
//
// Signatures are made before the runs, one per verification. ROUNDS rounds interleave the schemes (background load
// hits all alike); per round, N verifications each; the median of the per-round ratios is reported.
// Environment: N (default 3000), ROUNDS (default 5).
import { loadavg } from 'node:os';
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { recoverPersonalSigner } from '../src/core/ecrecover.js';
import { signRfc9421 } from '../src/core/rfc9421-sign.js';
import { verifyRfc9421 } from '../src/core/rfc9421-verify.js';
import { type RequestSigner, recoverRequestSigner, signedHeaders } from '../src/core/signed-request.js';

const N = Number(process.env['N'] ?? 3000);
const ROUNDS = Number(process.env['ROUNDS'] ?? 5);
const URL_ = 'http://127.0.0.1:3000/api/demo/verify?network=testnet';
const PATH = '/api/demo/verify?network=testnet';
const BODY = '{"hello":"registry"}';

const secp: RequestSigner = { type: 'secp256k1', account: privateKeyToAccount(generatePrivateKey()) };
const seed = ed25519.utils.randomSecretKey();
const ed: RequestSigner = { type: 'ed25519', seed };
const edKey = bytesToHex(ed25519.getPublicKey(seed));

type Run = (headers: Record<string, string>) => Promise<boolean>;

const xsvc =
  (recover?: typeof recoverPersonalSigner): Run =>
  async (headers) =>
    (await recoverRequestSigner(headers, { method: 'POST', url: PATH, body: BODY }, Date.now(), recover)).ok;
const rfc9421: Run = async (headers) =>
  (
    await verifyRfc9421(
      { method: 'POST', url: URL_, headers, body: BODY },
      { authorities: ['127.0.0.1:3000'], now: Date.now(), resolveEd25519Key: async () => edKey, recover: recoverPersonalSigner },
    )
  ).ok;

const targets: { name: string; sign: () => Promise<Record<string, string>>; run: Run }[] = [
  { name: 'x-svc-agent secp256k1', sign: () => signedHeaders(secp, { method: 'POST', url: PATH, body: BODY }), run: xsvc(recoverPersonalSigner) },
  { name: 'RFC 9421 ERC-8128', sign: () => signRfc9421(secp, { method: 'POST', url: URL_, body: BODY }), run: rfc9421 },
  { name: 'x-svc-agent Ed25519', sign: () => signedHeaders(ed, { method: 'POST', url: PATH, body: BODY }), run: xsvc() },
  {
    name: 'RFC 9421 Web Bot Auth',
    sign: () => signRfc9421(ed, { method: 'POST', url: URL_, body: BODY }, { signatureAgent: 'https://127.0.0.1:3000/agents/1' }),
    run: rfc9421,
  },
];

async function measure(target: (typeof targets)[number]): Promise<number> {
  const signed = await Promise.all(Array.from({ length: N }, () => target.sign()));
  const started = process.hrtime.bigint();
  for (const headers of signed) if (!(await target.run(headers))) throw new Error(`${target.name}: a good signature was refused`);
  return Number(process.hrtime.bigint() - started) / 1000 / N;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

for (const target of targets) await measure(target); // warm-up
const results = new Map<string, number[]>(targets.map((t) => [t.name, []]));
for (let round = 0; round < ROUNDS; round++) for (const target of targets) results.get(target.name)!.push(await measure(target));

console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}, ${N} verifications x ${ROUNDS} rounds`,
);
for (const [name, values] of results) console.log(`${name.padEnd(24)} ${median(values).toFixed(1).padStart(8)} µs median`);
const ratio = (a: string, b: string) => median(results.get(a)!.map((value, i) => value / results.get(b)![i]!)).toFixed(2);
console.log(`ERC-8128 / x-svc-agent secp256k1: ${ratio('RFC 9421 ERC-8128', 'x-svc-agent secp256k1')}x`);
console.log(`Web Bot Auth / x-svc-agent Ed25519: ${ratio('RFC 9421 Web Bot Auth', 'x-svc-agent Ed25519')}x`);
