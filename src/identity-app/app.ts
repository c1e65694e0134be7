// The mock identity app as a program: from a deep link alone it plays the human's phone on the service's
// local chains (attest a mock document, submit verifySelfProof, report to the deep link's callback) or
// declines (a failure callback). The CLI (cli.ts) is a thin shell over approve() and reject().
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Hex } from 'viem';
import { type ClientOptions, createChainClient, createChainWallet } from '../chain/clients.js';
import { agentRegistryAbi, localIdentityHubAbi } from '../contracts/artifacts/index.js';
import { type SelfApp, selfAppFromDeepLink } from '../core/deep-link.js';
import { chainIdOf, type NetworkName, resolveNetwork } from '../core/networks.js';
import { DURABLE_BLOCK_FILE } from '../devnet/chain-state.js';
import { type DevAccounts, loadDevAccounts } from '../devnet/embedded.js';
import { DEFAULT_MOCK_DOCUMENT, type MockDocument, parseIsoDate } from './document.js';
import { decodeRevert, prove } from './prove.js';
import { type ProofRequest, proofRequestFromSelfApp } from './request.js';

/** The input is wrong (the deep link, a document field): nothing was attempted. The CLI exits 2. */
export class InputError extends Error {
  override readonly name = 'InputError';
}

/** The app cannot work here (no local chain, no dev accounts, wrong chain): nothing was submitted. */
export class SetupError extends Error {
  override readonly name = 'SetupError';
}

// ----- documents -----

/** What the human holds: a mock passport (default), a non-mock passport, or a mock EU identity card. */
export const DOCUMENT_KINDS = ['mock-passport', 'passport', 'eu-id'] as const;
export type DocumentKind = (typeof DOCUMENT_KINDS)[number];

export interface DocumentOptions {
  kind?: DocumentKind;
  /** The person: the same number (and kind) gives the same nullifier. Default: the one fixed default document. */
  documentNumber?: string;
  /** ISO 3166-1 alpha-3. */
  nationality?: string;
  /** YYYY-MM-DD */
  birthdate?: string;
  /** "FIRST LAST": the last word is the surname. */
  name?: string;
}

/** The EU id card's issuer: a fixed one, so that the nullifier depends on the card's number alone. */
const EU_ID_ISSUER = 'DEU';

/**
 * The document the app "scans". Starts from DEFAULT_MOCK_DOCUMENT (a valid adult mock passport); the
 * issuing state stays fixed per kind, so --nationality never changes who the holder is.
 * Throws InputError on a malformed field.
 */
export function documentFrom(options: DocumentOptions = {}, today: Date = new Date()): MockDocument {
  const kind = options.kind ?? 'mock-passport';
  if (!DOCUMENT_KINDS.includes(kind)) throw new InputError(`--document must be one of ${DOCUMENT_KINDS.join(', ')}, got ${JSON.stringify(kind)}`);
  const document: MockDocument = { ...DEFAULT_MOCK_DOCUMENT };
  if (kind === 'passport') document.mock = false;
  if (kind === 'eu-id') Object.assign(document, { documentType: 'eu-id-card', issuingState: EU_ID_ISSUER, nationality: EU_ID_ISSUER });

  if (options.documentNumber !== undefined) {
    const number = options.documentNumber.trim().toUpperCase();
    if (!/^[A-Z0-9<]{1,20}$/.test(number)) {
      throw new InputError(`--document-number must be 1 to 20 letters or digits, got ${JSON.stringify(options.documentNumber)}`);
    }
    document.documentNumber = number;
  }
  if (options.nationality !== undefined) {
    const nationality = options.nationality.trim().toUpperCase();
    if (!/^[A-Z<]{3}$/.test(nationality)) {
      throw new InputError(`--nationality must be an ISO 3166-1 alpha-3 code such as GBR, got ${JSON.stringify(options.nationality)}`);
    }
    document.nationality = nationality;
  }
  if (options.birthdate !== undefined) {
    try {
      parseIsoDate(options.birthdate);
    } catch (error) {
      throw new InputError(`--birthdate: ${(error as Error).message}`);
    }
    if (options.birthdate > today.toISOString().slice(0, 10)) {
      throw new InputError(`--birthdate must not be in the future, got ${options.birthdate}`);
    }
    document.dateOfBirth = options.birthdate;
  }
  if (options.name !== undefined) {
    const words = options.name.trim().toUpperCase().split(/\s+/).filter(Boolean);
    if (words.length < 2) throw new InputError(`--name must be "FIRST LAST", got ${JSON.stringify(options.name)}`);
    document.lastName = words[words.length - 1]!;
    document.firstNames = words.slice(0, -1).join(' ');
  }
  return document;
}

// ----- the deep link -----

export interface DeepLinkRequest {
  app: SelfApp;
  /** Where the outcome goes (the SelfApp's deeplinkCallback). */
  callbackUrl: string;
}

function readDeepLink(deepLink: string): DeepLinkRequest {
  if (typeof deepLink !== 'string' || deepLink.trim() === '') throw new InputError('no deep link given');
  let app: SelfApp;
  try {
    app = selfAppFromDeepLink(deepLink.trim());
  } catch (error) {
    const message = error instanceof SyntaxError ? `its selfApp parameter is not JSON (${error.message})` : (error as Error).message;
    throw new InputError(`unreadable deep link: ${message}`);
  }
  if (typeof app !== 'object' || app === null) throw new InputError('unreadable deep link: its selfApp parameter is not an object');
  const callbackUrl = app.deeplinkCallback;
  let url: URL;
  try {
    if (typeof callbackUrl !== 'string') throw new Error();
    url = new URL(callbackUrl);
  } catch {
    throw new InputError('the deep link has no usable deeplinkCallback URL: the app would have nowhere to report');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InputError(`the deep link's deeplinkCallback must be an http(s) URL, got ${callbackUrl}`);
  }
  return { app, callbackUrl };
}

function readProofRequest(app: SelfApp): { request: ProofRequest; network: NetworkName } {
  let request: ProofRequest;
  try {
    request = proofRequestFromSelfApp({ ...app, disclosures: { ...app.disclosures } });
  } catch (error) {
    throw new InputError(`unreadable deep link: ${(error as Error).message}`);
  }
  let network: NetworkName;
  try {
    network = resolveNetwork(request.chainId);
  } catch (error) {
    throw new InputError(`the deep link's chain: ${(error as Error).message}`);
  }
  return { request, network };
}

// ----- the callback -----

export interface CallbackOutcome {
  url: string;
  /** The HTTP status of the callback, or null when no answer came. */
  status: number | null;
  /** 2xx */
  ok: boolean;
  /** Why the callback failed (no answer, or a non-2xx status with the body's start). */
  error?: string;
}

export type CallbackBody = { status: 'success'; txHash: Hex } | { status: 'error'; error: string };

export interface CallbackOptions {
  /** Default: the global fetch. */
  fetch?: typeof fetch;
  /** Default 10 s. */
  callbackTimeoutMs?: number;
}

/** POSTs the outcome as JSON to the deep link's callback URL; never throws. */
export async function sendCallback(url: string, body: CallbackBody, options: CallbackOptions = {}): Promise<CallbackOutcome> {
  const doFetch = options.fetch ?? fetch;
  try {
    const response = await doFetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(options.callbackTimeoutMs ?? 10_000),
    });
    const text = await response.text().catch(() => '');
    if (response.ok) return { url, status: response.status, ok: true };
    const detail = text.trim().replace(/\s+/g, ' ').slice(0, 200);
    return { url, status: response.status, ok: false, error: `callback answered ${response.status}${detail ? `: ${detail}` : ''}` };
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause?.message;
    const message = (error as Error).message + (cause ? ` (${cause})` : '');
    return { url, status: null, ok: false, error: `callback failed: ${message}` };
  }
}

// ----- the local chain -----

export interface LocalChainOptions {
  /** The service's DATA_DIR: dev-accounts.json and chains/<network>/rpc-url. */
  dataDir: string;
  /** Overrides chains/<network>/rpc-url. */
  rpcUrl?: string;
}

const LOCAL_CLIENT = { timeoutMs: 5_000, pollingIntervalMs: 50 } as const;

function localRpcUrl(network: NetworkName, options: LocalChainOptions): string {
  if (options.rpcUrl) return options.rpcUrl;
  const file = join(options.dataDir, 'chains', network, 'rpc-url');
  const url = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  if (!url) {
    throw new SetupError(
      `no local ${network} chain (chain id ${chainIdOf(network)}) is running under ${options.dataDir} (${file} is missing): ` +
        `the mock identity app only serves the service's local chains, not Celo. Start the service with its embedded ` +
        `${network} chain (npm start without ${network.toUpperCase()}_RPC_URL), or pass --data-dir or --rpc-url`,
    );
  }
  return url;
}

/** How long the app waits for the service to write its transaction's block to the chain's state file. */
const DURABLE_TIMEOUT_MS = 10_000;

/**
 * Resolves true once the service running the local chain has written block `block` to the chain's state file (its
 * supervisor keeps the number in `durable-block`): from then on a restart of the service cannot take the app's
 * transaction back. The service's own answer to the callback usually waited for that already. False when the
 * chain is not the service's (an --rpc-url of another node) or the service did not write it in time.
 */
async function waitDurable(network: NetworkName, block: bigint, options: LocalChainOptions): Promise<boolean> {
  if (options.rpcUrl) return false;
  const file = join(options.dataDir, 'chains', network, DURABLE_BLOCK_FILE);
  for (const deadline = Date.now() + DURABLE_TIMEOUT_MS; Date.now() < deadline; ) {
    const text = await readFile(file, 'utf8').catch(() => '');
    if (/^\d+\s*$/.test(text) && BigInt(text.trim()) >= block) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return false;
}

function devAccounts(dataDir: string): DevAccounts {
  const file = join(dataDir, 'dev-accounts.json');
  if (!existsSync(file)) {
    throw new SetupError(
      `${file} not found: the mock identity app signs with the local chains' document attester, whose key the ` +
        `service keeps in its DATA_DIR; run from the service's directory, set DATA_DIR or pass --data-dir`,
    );
  }
  try {
    return loadDevAccounts(dataDir).accounts;
  } catch (error) {
    throw new SetupError(`${file} is unreadable: ${(error as Error).message}`);
  }
}

/** One transaction at a time per sender in this process, so concurrent approvals do not race for nonces. */
const senderQueues = new Map<string, Promise<unknown>>();
function serialized<T>(sender: string, task: () => Promise<T>): Promise<T> {
  const previous = senderQueues.get(sender) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(task);
  senderQueues.set(sender, next);
  void next
    .finally(() => {
      if (senderQueues.get(sender) === next) senderQueues.delete(sender);
    })
    .catch(() => undefined);
  return next;
}

// ----- approve and reject -----

export interface ApproveOptions extends LocalChainOptions, CallbackOptions {
  deepLink: string;
  /** The document the human holds; default DEFAULT_MOCK_DOCUMENT (a phone holds one passport). */
  document?: MockDocument;
}

export type ApproveResult =
  | {
      status: 'submitted';
      network: NetworkName;
      txHash: Hex;
      blockNumber: bigint;
      nullifier: bigint;
      /** The service has written the transaction's block to the chain's state file: a restart keeps it. */
      durable: boolean;
      callback: CallbackOutcome;
    }
  | {
      status: 'reverted';
      network: NetworkName;
      /** The registry's or hub's error, e.g. TooManyAgentsForHuman(<nullifier>, 1). */
      reason: string;
      /** Set when the transaction was mined and reverted (rather than refused in simulation). */
      txHash?: Hex;
      /** What to do about it, when the app knows. */
      hint?: string;
      callback: CallbackOutcome;
    };

function hintFor(reason: string, network: NetworkName, document: MockDocument): string | undefined {
  if (reason.startsWith('MockDocumentsNotAccepted')) {
    return `the local hub on chain ${chainIdOf(network)} accepts only real documents: pass --document passport`;
  }
  if (reason.startsWith('TooManyAgentsForHuman')) {
    return `document ${document.documentNumber} already holds the maximum number of agents: pass another --document-number to be another human`;
  }
  return undefined;
}

/**
 * The human approves: attests the document's disclosure for the deep link's request, submits it through
 * the registry's verifySelfProof on the local chain, and reports the outcome to the deep link's callback
 * (success with the txHash, or error with the registry's or hub's reason). Throws InputError or
 * SetupError (nothing submitted, no callback) when the link or the local set-up is unusable.
 */
export async function approve(options: ApproveOptions): Promise<ApproveResult> {
  const { app, callbackUrl } = readDeepLink(options.deepLink);
  const { request, network } = readProofRequest(app);
  const document = options.document ?? { ...DEFAULT_MOCK_DOCUMENT };
  const rpcUrl = localRpcUrl(network, options);
  const accounts = devAccounts(options.dataDir);

  const clientOptions: ClientOptions = { rpcUrl, ...LOCAL_CLIENT };
  const client = createChainClient(network, clientOptions);
  const wallet = createChainWallet(network, accounts.identityApp, clientOptions);

  let chainId: number;
  try {
    chainId = await client.getChainId();
  } catch (error) {
    throw new SetupError(`cannot reach the local ${network} chain at ${rpcUrl} (${decodeRevert(error).name}): is the service running?`);
  }
  if (chainId !== request.chainId) {
    throw new SetupError(`the chain at ${rpcUrl} has chain id ${chainId}, the deep link asks for ${request.chainId}`);
  }
  const code = await client.getCode({ address: request.registry });
  if (!code || code === '0x') {
    throw new SetupError(
      `no registry at ${request.registry} on the local ${network} chain (${rpcUrl}): the mock identity app only serves ` +
        `the service's local chains, and this deep link is for another deployment`,
    );
  }
  const hub = await client.readContract({ address: request.registry, abi: agentRegistryAbi, functionName: 'hubV2' });
  const trusted = await client
    .readContract({ address: hub, abi: localIdentityHubAbi, functionName: 'isTrustedAttester', args: [accounts.attester.address] })
    .catch(() => false);
  if (!trusted) {
    throw new SetupError(
      `the hub ${hub} on the local ${network} chain does not trust the attester ${accounts.attester.address} of ` +
        `${join(options.dataDir, 'dev-accounts.json')}: is this the service's DATA_DIR?`,
    );
  }

  const result = await serialized(accounts.identityApp.address, () => prove({ client, wallet, attester: accounts.attester, request, document, hub }));
  if (result.status === 'submitted') {
    const callback = await sendCallback(callbackUrl, { status: 'success', txHash: result.txHash }, options);
    const durable = await waitDurable(network, result.blockNumber, options);
    return {
      status: 'submitted',
      network,
      txHash: result.txHash,
      blockNumber: result.blockNumber,
      nullifier: result.nullifier,
      durable,
      callback,
    };
  }
  const callback = await sendCallback(callbackUrl, { status: 'error', error: result.reason }, options);
  const hint = hintFor(result.reason, network, document);
  return {
    status: 'reverted',
    network,
    reason: result.reason,
    ...(result.txHash ? { txHash: result.txHash } : {}),
    ...(hint ? { hint } : {}),
    callback,
  };
}

export interface RejectOptions extends CallbackOptions {
  deepLink: string;
  /** Sent as the callback's error; default DEFAULT_REJECT_REASON. */
  reason?: string;
}

export const DEFAULT_REJECT_REASON = 'the user rejected the verification request';

export interface RejectResult {
  status: 'rejected';
  reason: string;
  callback: CallbackOutcome;
}

/** The human declines: only a failure callback, nothing on chain. Throws InputError on an unusable link. */
export async function reject(options: RejectOptions): Promise<RejectResult> {
  const { callbackUrl } = readDeepLink(options.deepLink);
  const reason = options.reason?.trim() || DEFAULT_REJECT_REASON;
  const callback = await sendCallback(callbackUrl, { status: 'error', error: reason }, options);
  return { status: 'rejected', reason, callback };
}
