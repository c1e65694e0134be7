// npm run bench:sdk-verifier: microseconds per warm verification of the client SDK's verifyAgentRequest, called
// in-process with a WHATWG Request (no HTTP server: the verifier's own cost), per scheme: x-svc-agent and ERC-8128
// from one secp256k1 agent, x-svc-agent and Web Bot Auth from one Ed25519 agent; then the same with the policies these agents
// can pass and a per-human quota. And the RPC round trips the timed verifications made, through a counting front before the
// local chain: a warm verification should make none.
//
// Each request carries a fresh signature (the replay guard takes each once), made before the runs: signing is the
// client's work. The agents are warm (one verification each before the runs). Each figure is the median of ROUNDS
// rounds of REQUESTS sequential verifications.
// Environment: REQUESTS (default 2000), ROUNDS (default 5).
import {
  type AgentPolicyInput,
  type AgentVerifier,
  createAgentVerifier,
  keyDirectoryUrl,
  type RequestSigner,
  signRequest,
} from '../src/client/index.js';
import { NETWORKS } from '../src/core/networks.js';
import { rpcCounter } from '../test/support/rpc-counter.js';
import { registerEd25519Agent, registerLinkedAgent, startLocalSystem } from './local-system.js';

const REQUESTS = Number(process.env['REQUESTS'] ?? 2000);
const ROUNDS = Number(process.env['ROUNDS'] ?? 5);
const URL_ = 'https://svc.example/orders?size=large';
const BODY = '{"item":"tea"}';
const CHAIN_ID = NETWORKS.testnet.chainId;

// every policy these agents can pass (they disclosed nothing: no age, OFAC or nationality to check)
const FULL_POLICY: AgentPolicyInput = {
  maxAgentsPerHuman: 5,
  maxProofAgeS: 30 * 86_400,
  minimumStrength: 80,
  quota: { limit: 1_000_000_000, windowS: 3600 },
};

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

const system = await startLocalSystem();
const rpc = await rpcCounter(system.chain.rpcUrl);
try {
  const { agent } = await registerLinkedAgent(system);
  const edAgent = await registerEd25519Agent(system);
  const secp: RequestSigner = { type: 'secp256k1', account: agent };
  const ed: RequestSigner = { type: 'ed25519', seed: edAgent.seed };
  const signatureAgent = keyDirectoryUrl('https://registry.example', CHAIN_ID, edAgent.agentId);
  const schemes = [
    ['x-svc-agent, secp256k1', secp, {}],
    ['ERC-8128 (RFC 9421), secp256k1', secp, { scheme: 'rfc9421', chainId: CHAIN_ID }],
    ['x-svc-agent, Ed25519', ed, {}],
    ['Web Bot Auth (RFC 9421), Ed25519', ed, { scheme: 'rfc9421', signatureAgent }],
  ] as const;

  // x-svc-agent timestamps a millisecond apart, so that each request is its own message (all well within the window)
  let tick = Date.now();
  /** Fresh signed requests' headers. */
  const signed = (signer: RequestSigner, options: object, count: number): Promise<Record<string, string>[]> => {
    tick = Math.max(tick, Date.now());
    return Promise.all(
      Array.from({ length: count }, () => signRequest(signer, { method: 'POST', url: URL_, body: BODY, timestamp: String(tick++) }, options)),
    );
  };

  const run = async (verify: AgentVerifier, headers: Record<string, string>[]): Promise<number> => {
    const start = process.hrtime.bigint();
    for (const h of headers) {
      const verified = await verify(new Request(URL_, { method: 'POST', headers: h, body: BODY }));
      if (!verified.ok) throw new Error(`refused: ${verified.response.status} ${await verified.response.text()}`);
    }
    return Number(process.hrtime.bigint() - start) / 1000 / headers.length;
  };

  const rows: [string, number, number][] = [];
  for (const [policyName, policy] of [
    ['no policy', undefined],
    ['full policy + quota', FULL_POLICY],
  ] as const) {
    for (const [name, signer, options] of schemes) {
      const verify = createAgentVerifier({
        network: 'testnet',
        rpcUrl: rpc.url,
        registry: system.deployment.contracts.registry,
        ...(policy ? { policy } : {}),
      });
      await run(verify, await signed(signer, options, 1)); // warm: the agent's state is read once
      const batches = await Promise.all(Array.from({ length: ROUNDS }, () => signed(signer, options, REQUESTS)));
      rpc.reset();
      const perRequest: number[] = [];
      for (const batch of batches) perRequest.push(await run(verify, batch));
      rows.push([`${name}, ${policyName}`, median(perRequest), rpc.count]);
    }
  }

  console.log(`node ${process.version}, ${REQUESTS} verifications x ${ROUNDS} rounds, median, warm agents`);
  for (const [what, us, trips] of rows) console.log(`${what.padEnd(56)} ${us.toFixed(1).padStart(8)} us   RPC round trips: ${trips}`);
  // RFC 9421 against x-svc-agent with the same key, without and with policies
  for (const at of [0, 4]) {
    const pairs: [number, number][] = [
      [at + 1, at],
      [at + 3, at + 2],
    ];
    for (const [rfc, xSvc] of pairs) {
      const [name, us] = rows[rfc]!;
      console.log(`${name.padEnd(56)} ${(us / rows[xSvc]![1]).toFixed(2)}x ${rows[xSvc]![0]}`);
    }
  }
} finally {
  await rpc.close();
  await system.chain.stop();
}
