// The human-backed-agent credential on the agent's side: ask a registry for one (requestCredential), present it to a
// verifier with a key-binding JWT over the verifier's nonce and audience, disclosing only what it chooses
// (presentCredential), or prove HTTP requests with it (credentialAuthorization, presentingFetch: the nonce is
// derived from each request). Verifiers check it offline: credential-verification.ts, and verifyAgentRequest.
import { createHash, createPrivateKey, randomBytes } from 'node:crypto';
import { digest } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import type { Hex } from 'viem';
import { type SelectiveClaim, secp256k1Jwk } from '../core/agent-credential.js';
import { type BoundRequest, CREDENTIAL_AUTH_SCHEME, requestBinding, requestNonce } from '../core/credential-request-binding.js';
import { CREDENTIAL_PATH } from '../core/endpoints.js';
import { type JwsAlg, jwsSign } from '../core/jws-crypto.js';
import { keyDirectoryUrl } from '../core/key-directory.js';
import { NETWORKS } from '../core/networks.js';
import type { RequestSigner } from '../core/signed-request.js';
import { CredentialError } from './credential-error.js';
import { type SignRequestOptions, signingFetch } from './signing.js';

export type { SelectiveClaim } from '../core/agent-credential.js';
export { AGENT_CREDENTIAL_VCT, SELECTIVE_CLAIMS } from '../core/agent-credential.js';

type Fetch = typeof fetch;

export interface RequestCredentialOptions extends SignRequestOptions {
  /** The registry service's base URL, e.g. https://registry.example. */
  registryUrl: string;
  /** The verifier the credential is for (e.g. its origin); the same string it will check the KB-JWT's aud against. */
  audience: string;
  /** The agent's network; default testnet (and with RFC 9421, the chain an ERC-8128 keyid names). */
  network?: 'mainnet' | 'testnet';
  /** With RFC 9421, an Ed25519 agent's id: its key directory here is the Signature-Agent (or give signatureAgent). */
  agentId?: bigint;
  fetch?: Fetch;
}

export interface AgentCredential {
  credential: string;
  vct: string;
  sub: string;
  expiresAt: number;
  status: { idx: number; uri: string };
}

/** Asks the registry for a credential for `audience`, signing the request as the agent (either scheme). */
export async function requestCredential(signer: RequestSigner, options: RequestCredentialOptions): Promise<AgentCredential> {
  const { registryUrl, audience, network = 'testnet', agentId, fetch: base = fetch, ...rest } = options;
  const { chainId } = NETWORKS[network];
  const signing: SignRequestOptions = {
    ...rest,
    chainId: rest.chainId ?? chainId,
    ...(rest.signatureAgent === undefined && agentId !== undefined ? { signatureAgent: keyDirectoryUrl(registryUrl, chainId, agentId) } : {}),
  };
  const body = JSON.stringify({ audience, ...(signer.type === 'secp256k1' ? { jwk: secp256k1Jwk(signer.account.publicKey) } : {}) });
  const url = `${registryUrl.replace(/\/$/, '')}${CREDENTIAL_PATH}?network=${network}`;
  const res = await signingFetch(signer, base, signing)(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const answer = (await res.json().catch(() => ({}))) as AgentCredential & { error?: string };
  if (!res.ok) throw new CredentialError('request', `The registry refused the credential (${res.status}): ${answer.error ?? 'no reason given'}`);
  return answer;
}

export interface PresentOptions {
  /** The verifier's identifier: the credential's audience. */
  audience: string;
  /** The verifier's nonce for this presentation. */
  nonce: string;
  /** The selectively disclosable claims to show; every other one stays hidden. Default none. */
  disclose?: readonly SelectiveClaim[];
  /** Unix seconds of the KB-JWT's iat; default now. */
  now?: number;
  /** The KB-JWT's jti: a verifier that spends each presentation once keys it so. Default none. */
  jti?: string;
}

/** The credential as presented: the disclosures chosen and a KB-JWT signed by the agent's key for `nonce` and `audience`. */
export async function presentCredential(credential: string | AgentCredential, signer: RequestSigner, options: PresentOptions): Promise<string> {
  const compact = typeof credential === 'string' ? credential : credential.credential;
  const { alg, sign } = kbSignerOf(signer);
  const holder = new SDJwtVcInstance({ hasher: digest, hashAlg: 'sha-256', kbSigner: sign, kbSignAlg: alg });
  const frame = Object.fromEntries((options.disclose ?? []).map((claim) => [claim, true]));
  const payload = {
    iat: options.now ?? Math.floor(Date.now() / 1000),
    aud: options.audience,
    nonce: options.nonce,
    ...(options.jti === undefined ? {} : { jti: options.jti }),
  };
  return holder.present(compact, frame, { kb: { payload } });
}

export interface CredentialRequestOptions {
  /** The verifier's identifier, as the credential was issued for it. */
  audience: string;
  /** The selectively disclosable claims to show (those the verifier's policy reads); default none. */
  disclose?: readonly SelectiveClaim[];
  /** Unix seconds of the KB-JWT's iat; default now. */
  now?: number;
}

/**
 * The Authorization field value that proves one request with the credential: `SD-JWT <presentation>`, its KB-JWT's
 * nonce derived from the request (method, authority, path and query, Content-Digest of the body:
 * credential-request-binding.ts), with a fresh jti so that the verifier spends it once. `request.url` is absolute.
 */
export function credentialAuthorization(
  credential: string | AgentCredential,
  signer: RequestSigner,
  request: BoundRequest,
  options: CredentialRequestOptions,
): Promise<string> {
  if (!URL.canParse(request.url)) {
    return Promise.reject(new TypeError(`A credential proves a request to one host: pass the absolute URL (https://host/path), not ${request.url}`));
  }
  return presentCredential(credential, signer, {
    ...options,
    nonce: requestNonce(requestBinding(request)),
    jti: randomBytes(16).toString('base64url'),
  }).then((presentation) => `${CREDENTIAL_AUTH_SCHEME} ${presentation}`);
}

/** A credential, or where to get the current one (a credential lasts 15 minutes at most: ask again when it is near its end). */
export type CredentialSource = string | AgentCredential | (() => string | AgentCredential | Promise<string | AgentCredential>);

/**
 * A fetch that proves each request it sends with the credential (see credentialAuthorization): string bodies only,
 * as the nonce covers the exact body text.
 */
export function presentingFetch(credential: CredentialSource, signer: RequestSigner, options: CredentialRequestOptions, base: Fetch = fetch): Fetch {
  return async (input, init = {}) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = init.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET');
    if (init.body !== undefined && init.body !== null && typeof init.body !== 'string') {
      throw new TypeError('A presenting fetch proves string bodies only: pass JSON.stringify(...) as the body');
    }
    const current = typeof credential === 'function' ? await credential() : credential;
    const headers = new Headers(init.headers);
    headers.set('authorization', await credentialAuthorization(current, signer, { method, url, body: init.body ?? '' }, options));
    return base(input, { ...init, method, headers });
  };
}

/** The DER prefix of an Ed25519 private key in PKCS #8 (RFC 8410): the 32-byte seed follows. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const kbSigners = new WeakMap<RequestSigner, { alg: JwsAlg; sign: (data: string) => Promise<string> }>();

/** The KB-JWT signer of an agent key, made once per signer object. */
function kbSignerOf(signer: RequestSigner): { alg: JwsAlg; sign: (data: string) => Promise<string> } {
  let made = kbSigners.get(signer);
  if (made === undefined) {
    made = makeKbSigner(signer);
    kbSigners.set(signer, made);
  }
  return made;
}

function makeKbSigner(signer: RequestSigner): { alg: JwsAlg; sign: (data: string) => Promise<string> } {
  if (signer.type === 'ed25519') {
    const seed = typeof signer.seed === 'string' ? Buffer.from(signer.seed.slice(2), 'hex') : Buffer.from(signer.seed);
    if (seed.length !== 32) throw new TypeError('An Ed25519 seed is 32 bytes');
    const key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
    return { alg: 'EdDSA', sign: async (data) => jwsSign('EdDSA', key, data) };
  }
  const { account } = signer;
  const signHash = account.sign;
  if (signHash === undefined) throw new Error('This secp256k1 account cannot sign a raw hash (account.sign): ES256K needs it');
  return {
    alg: 'ES256K',
    sign: async (data) => {
      const hash = `0x${createHash('sha256').update(data).digest('hex')}` as Hex;
      // r ‖ s of the recoverable signature viem returns (r ‖ s ‖ v): the JWS form of ES256K
      const signature = await signHash({ hash });
      return Buffer.from(signature.slice(2, 130), 'hex').toString('base64url');
    },
  };
}
