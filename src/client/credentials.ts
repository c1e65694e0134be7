// The human-backed-agent credential on both sides: an agent asks a registry for one (requestCredential) and presents
// it to a verifier with a key-binding JWT over the verifier's nonce and audience, disclosing only what it chooses
// (presentCredential); the verifier checks it offline (verifyAgentCredential) against the registry's JWKS and status
// list, fetched once and then kept for as long as their Cache-Control allows.
import { createHash, createPrivateKey, type KeyObject } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { SDJwtInstance } from '@sd-jwt/core';
import { digest } from '@sd-jwt/crypto-nodejs';
import { getListFromStatusListJWT, type StatusList } from '@sd-jwt/jwt-status-list';
import { SDJwtVcInstance, type SdJwtVcPayload } from '@sd-jwt/sd-jwt-vc';
import type { Address, Hex } from 'viem';
import { AGENT_CREDENTIAL_VCT, type AgentCnfJwk, kbAlgOf, SELECTIVE_CLAIMS, type SelectiveClaim, secp256k1Jwk } from '../core/agent-credential.js';
import { ed25519PublicJwk } from '../core/agent-jwk.js';
import { CREDENTIAL_PATH, JWKS_PATH } from '../core/endpoints.js';
import { type JwsAlg, jwsAlgOfJwk, jwsHeaderOf, jwsSign, jwsVerify, publicKeyOfJwk } from '../core/jws-crypto.js';
import { keyDirectoryUrl } from '../core/key-directory.js';
import { NETWORKS } from '../core/networks.js';
import type { RequestSigner } from '../core/signed-request.js';
import { HttpCache } from './http-cache.js';
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

export class CredentialError extends Error {
  constructor(
    /** What failed, for a verifier's logs and answers. */
    readonly reason:
      | 'request'
      | 'malformed'
      | 'issuer'
      | 'signature'
      | 'expired'
      | 'audience'
      | 'nonce'
      | 'key-binding'
      | 'revoked'
      | 'status'
      | 'unreachable',
    message: string,
  ) {
    super(message);
    this.name = 'CredentialError';
  }
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
}

/** The credential as presented: the disclosures chosen and a KB-JWT signed by the agent's key for `nonce` and `audience`. */
export async function presentCredential(credential: string | AgentCredential, signer: RequestSigner, options: PresentOptions): Promise<string> {
  const compact = typeof credential === 'string' ? credential : credential.credential;
  const { alg, sign } = kbSignerOf(signer);
  const holder = new SDJwtVcInstance({ hasher: digest, hashAlg: 'sha-256', kbSigner: sign, kbSignAlg: alg });
  const frame = Object.fromEntries((options.disclose ?? []).map((claim) => [claim, true]));
  return holder.present(compact, frame, {
    kb: { payload: { iat: options.now ?? Math.floor(Date.now() / 1000), aud: options.audience, nonce: options.nonce } },
  });
}

function kbSignerOf(signer: RequestSigner): { alg: JwsAlg; sign: (data: string) => Promise<string> } {
  if (signer.type === 'ed25519') {
    const seed = typeof signer.seed === 'string' ? Buffer.from(signer.seed.slice(2), 'hex') : Buffer.from(signer.seed);
    const { x } = ed25519PublicJwk(ed25519.getPublicKey(seed));
    const key = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', x, d: seed.toString('base64url') }, format: 'jwk' });
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

export interface VerifyCredentialOptions {
  /** This verifier's identifier: the KB-JWT's aud must be it. */
  audience: string;
  /** The nonce this verifier gave for this presentation. */
  nonce: string;
  /** The registry's public URL (the credential's iss); its JWKS is at /.well-known/jwks.json. */
  issuer?: string;
  /** The registry's JWKS, when not at the issuer's usual place; the credential's iss must then be given as issuer too, or be this URL's base. */
  jwksUrl?: string;
  /** Unix seconds; default now. */
  now?: number;
  /** How old a KB-JWT may be, and how far in the future its iat may lie (seconds); default 300. */
  maxKbAgeS?: number;
  /** Where fetched JWKS and status lists are kept; default one shared by this process. */
  cache?: HttpCache;
}

export interface VerifiedCredential {
  /** The human's pairwise pseudonym at this audience: the same for all of the human's agents here. */
  sub: string;
  issuer: string;
  agentId: bigint;
  chainId: number;
  registry: Address;
  agentAddress: Address;
  provider: Address;
  strength: number;
  /** Unix seconds. */
  proofExpiresAt: number;
  expiresAt: number;
  /** The selectively disclosable claims the agent chose to show; nothing else is known of them. */
  disclosed: Partial<Record<SelectiveClaim, boolean | string>>;
}

const defaultCache = new HttpCache();
/** Allowed difference between the registry's clock and this one (seconds): a status list fetched now may be dated a second on. */
const CLOCK_SKEW_S = 5;
const MEMO_ENTRIES = 10_000;
/** Issuer signatures already checked (key, signed bytes, signature), and status list tokens already checked and decoded. */
const verifiedSignatures = new Set<string>();
const statusLists = new Map<string, HeldStatusList>();

interface HeldStatusList {
  list: StatusList;
  iat?: number;
  exp?: number;
}

function remember<T>(memo: Set<T>, value: T): void {
  if (memo.size >= MEMO_ENTRIES) memo.clear();
  memo.add(value);
}

const jwsKeyId = (jwk: ServiceJwk): string => `${jwk.kty}:${jwk.crv}:${jwk.x}:${jwk.y ?? ''}`;

/**
 * The status list at `uri`, as the cache holds it: its token checked (typ, the registry's signature, its subject, its
 * lifetime) and decoded once per token.
 */
async function statusListOf(
  cache: HttpCache,
  uri: string,
  nowMs: number,
  verifier: (data: string, signature: string) => Promise<boolean>,
): Promise<StatusList> {
  const { body: token } = await cache.get(uri, nowMs, { accept: 'application/statuslist+jwt' });
  const held = statusLists.get(token);
  if (held) return checkedLifetime(held, nowMs);
  const [header, payload, signature] = token.split('.');
  const signingInput = `${header}.${payload}`;
  if (jwsHeaderOf(signingInput)?.typ !== 'statuslist+jwt' || signature === undefined || !(await verifier(signingInput, signature))) {
    throw new CredentialError('status', `The status list at ${uri} is not a status list token signed by the registry`);
  }
  const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8')) as { sub?: unknown; iat?: unknown; exp?: unknown };
  if (claims.sub !== uri) throw new CredentialError('status', `The status list at ${uri} names another list (${String(claims.sub)})`);
  const decoded: HeldStatusList = {
    list: getListFromStatusListJWT(token),
    ...(typeof claims.iat === 'number' ? { iat: claims.iat } : {}),
    ...(typeof claims.exp === 'number' ? { exp: claims.exp } : {}),
  };
  if (statusLists.size >= 1_000) statusLists.clear();
  statusLists.set(token, decoded);
  return checkedLifetime(decoded, nowMs);
}

function checkedLifetime({ list, iat, exp }: HeldStatusList, nowMs: number): StatusList {
  const nowS = nowMs / 1000;
  if (typeof exp === 'number' && exp + CLOCK_SKEW_S <= nowS) throw new CredentialError('status', 'The status list has expired');
  if (typeof iat === 'number' && iat - CLOCK_SKEW_S > nowS) throw new CredentialError('status', 'The status list is dated in the future');
  return list;
}
/** A key the JWKS does not list makes it fetched again, at most this often (a forged kid costs no more than that). */
const JWKS_RELOAD_MS = 30_000;
const keyObjects = new Map<string, KeyObject>();

function keyObjectOf(jwk: { kty: string; crv: string; x: string; y?: string }): KeyObject {
  const id = `${jwk.kty}:${jwk.crv}:${jwk.x}:${jwk.y ?? ''}`;
  let key = keyObjects.get(id);
  if (key === undefined) {
    if (keyObjects.size >= 10_000) keyObjects.clear();
    key = publicKeyOfJwk(jwk);
    keyObjects.set(id, key);
  }
  return key;
}

interface ServiceJwk {
  kty: string;
  crv: string;
  x: string;
  y?: string;
  kid?: string;
  alg?: string;
}

/** The JWKS key of `kid`, fetched again (not more often than JWKS_RELOAD_MS) when the held set lacks it. */
async function serviceKey(cache: HttpCache, jwksUrl: string, kid: unknown, nowMs: number): Promise<ServiceJwk> {
  if (typeof kid !== 'string') throw new CredentialError('signature', 'The JWT names no kid');
  const find = (body: string) => ((JSON.parse(body) as { keys?: ServiceJwk[] }).keys ?? []).find((key) => key.kid === kid);
  const held = await cache.get(jwksUrl, nowMs, { accept: 'application/jwk-set+json, application/json' });
  const found = find(held.body);
  if (found) return found;
  if (nowMs - held.fetchedAt < JWKS_RELOAD_MS) throw new CredentialError('signature', `The registry's JWKS lists no key ${kid}`);
  const again = find((await cache.get(jwksUrl, nowMs, { reload: true, accept: 'application/jwk-set+json, application/json' })).body);
  if (!again) throw new CredentialError('signature', `The registry's JWKS lists no key ${kid}`);
  return again;
}

/**
 * Checks a presented credential: the registry's signature (by a key of its JWKS), its lifetime, the KB-JWT (by the
 * key in cnf, for this audience and nonce, recent), and its status list entry. Throws a CredentialError naming what
 * failed; returns the agent, the pairwise sub and what was disclosed.
 */
export async function verifyAgentCredential(presentation: string, options: VerifyCredentialOptions): Promise<VerifiedCredential> {
  const nowS = options.now ?? Math.floor(Date.now() / 1000);
  const nowMs = nowS * 1000;
  const cache = options.cache ?? defaultCache;
  const issuer = options.issuer?.replace(/\/$/, '');
  if (issuer === undefined && options.jwksUrl === undefined) throw new TypeError('verifyAgentCredential needs issuer or jwksUrl');
  const jwksUrl = options.jwksUrl ?? `${issuer}${JWKS_PATH}`;
  const maxKbAgeS = options.maxKbAgeS ?? 300;

  const issuerJwt = presentation.slice(0, presentation.indexOf('~'));
  const claimedIssuer = issuerClaimOf(issuerJwt);
  if (issuer !== undefined ? claimedIssuer !== issuer : `${claimedIssuer}${JWKS_PATH}` !== jwksUrl) {
    throw new CredentialError('issuer', `The credential was issued by ${claimedIssuer ?? 'no one named'}, not by the registry expected`);
  }
  const verifier = async (data: string, signature: string): Promise<boolean> => {
    const header = jwsHeaderOf(data);
    const jwk = await serviceKey(cache, jwksUrl, header?.kid, nowMs);
    const alg = jwsAlgOfJwk(jwk);
    if (alg === undefined || header?.alg !== alg) return false;
    // one credential is presented many times: its issuer signature (same bytes, same key) is checked once
    const memo = `${jwsKeyId(jwk)}.${data}.${signature}`;
    if (verifiedSignatures.has(memo)) return true;
    if (!jwsVerify(alg, keyObjectOf(jwk), data, signature)) return false;
    remember(verifiedSignatures, memo);
    return true;
  };
  let kbFailure: string | undefined;
  // the base SD-JWT instance, and the VC's own checks (vct, status) below: the VC instance decodes the whole status
  // list again for every credential it checks, which costs more than all the signatures together
  const instance = new SDJwtInstance<SdJwtVcPayload>({
    hasher: digest,
    hashAlg: 'sha-256',
    verifier,
    kbVerifier: (data, signature, payload) => {
      const jwk = (payload.cnf as { jwk?: AgentCnfJwk } | undefined)?.jwk;
      const alg = jwk ? jwsAlgOfJwk(jwk) : undefined;
      if (!jwk || alg === undefined || alg !== kbAlgOf(jwk)) {
        kbFailure = 'The credential binds no agent key (cnf.jwk)';
        return false;
      }
      if (jwsHeaderOf(data)?.alg !== alg || !jwsVerify(alg, keyObjectOf(jwk), data, signature)) {
        kbFailure = "The key-binding JWT is not signed by the agent's key";
        return false;
      }
      return true;
    },
  });
  let result: Awaited<ReturnType<SDJwtInstance<SdJwtVcPayload>['verify']>>;
  try {
    result = await instance.verify(presentation, { keyBindingNonce: options.nonce, currentDate: nowS, skewSeconds: CLOCK_SKEW_S });
  } catch (error) {
    throw classify(error, kbFailure);
  }
  if (result.header?.typ !== 'dc+sd-jwt') throw new CredentialError('malformed', `Not an SD-JWT VC (typ ${String(result.header?.typ)})`);
  const payload = result.payload as SdJwtVcPayload;
  const { kb } = result;
  const reference = payload.status?.status_list;
  if (!reference || !Number.isSafeInteger(reference.idx) || typeof reference.uri !== 'string') {
    throw new CredentialError('malformed', 'The credential names no status list entry');
  }
  let status: number;
  try {
    status = (await statusListOf(cache, reference.uri, nowMs, verifier)).getStatus(reference.idx);
  } catch (error) {
    throw classify(error, undefined);
  }
  if (status !== 0) throw new CredentialError('revoked', 'The credential is revoked: its agent is no longer backed as it was');
  if (payload.vct !== AGENT_CREDENTIAL_VCT)
    throw new CredentialError('malformed', `Not a human-backed-agent credential (vct ${String(payload.vct)})`);
  if (typeof payload.exp !== 'number') throw new CredentialError('malformed', 'The credential has no expiry');
  if (!kb || kb.payload.aud !== options.audience) {
    throw new CredentialError('audience', `The presentation is for ${JSON.stringify(kb?.payload.aud)}, not for ${JSON.stringify(options.audience)}`);
  }
  if (Math.abs(nowS - kb.payload.iat) > maxKbAgeS) throw new CredentialError('key-binding', 'The key-binding JWT is too old (or dated ahead)');
  const claims = payload as Record<string, unknown>;
  return {
    sub: String(payload.sub),
    issuer: String(payload.iss),
    agentId: BigInt(String(claims.agent_id)),
    chainId: Number(claims.chain_id),
    registry: claims.registry as Address,
    agentAddress: claims.agent_address as Address,
    provider: claims.provider as Address,
    strength: Number(claims.strength),
    proofExpiresAt: Number(claims.proof_expires_at),
    expiresAt: payload.exp,
    disclosed: Object.fromEntries(SELECTIVE_CLAIMS.filter((claim) => claim in claims).map((claim) => [claim, claims[claim] as boolean | string])),
  };
}

function issuerClaimOf(jwt: string): string | undefined {
  try {
    const payload: unknown = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8'));
    const iss = (payload as { iss?: unknown }).iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    throw new CredentialError('malformed', 'Not an SD-JWT: the issuer-signed JWT does not decode');
  }
}

/** The library's errors as reasons a verifier can act on. */
function classify(error: unknown, kbFailure: string | undefined): CredentialError {
  if (error instanceof CredentialError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (kbFailure !== undefined) return new CredentialError('key-binding', kbFailure);
  if (/nonce/i.test(message)) return new CredentialError('nonce', 'The key-binding JWT is for another nonce');
  if (/expired|exp\b/i.test(message)) return new CredentialError('expired', 'The credential has expired');
  if (/Status is not valid/i.test(message))
    return new CredentialError('revoked', 'The credential is revoked: its agent is no longer backed as it was');
  if (/Status List/i.test(message) || /GET .* answered/.test(message))
    return new CredentialError('status', `The status list could not be checked: ${message}`);
  if (/Key Binding|sd_hash/i.test(message)) return new CredentialError('key-binding', message);
  if (/signature|verif/i.test(message)) return new CredentialError('signature', `The registry's signature does not verify: ${message}`);
  return new CredentialError('malformed', message);
}

export { HttpCache } from './http-cache.js';
