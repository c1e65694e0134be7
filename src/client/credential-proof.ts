// A request proved by a presented human-backed-agent credential instead of a signature: `Authorization: SD-JWT
// <presentation>`, its key-binding JWT for this verifier's audience, its nonce derived from the request
// (core/credential-request-binding.ts). Checked offline: the registry's JWKS and status list from their HTTP caches,
// no chain read. What the verifier then does with it (the replay guard, the policies, the quota) is agent-verifier.ts's.
import type { Address, Hex } from 'viem';
import type { AgentCnfJwk } from '../core/agent-credential.js';
import { addressAgentKey } from '../core/agent-key.js';
import { credentialOfAuthorization, requestBinding, requestNonce } from '../core/credential-request-binding.js';
import type { PublicCredentials } from '../core/credentials.js';
import { CredentialError, type CredentialFailure } from './credential-error.js';
import { type VerifiedCredential, verifyAgentCredential } from './credential-verification.js';
import type { HttpCache } from './http-cache.js';

/** Where a verifier takes credentials from, and as whom. */
export interface CredentialProofOptions {
  /** This verifier's identifier: the audience agents ask the registry for, and the KB-JWT's aud (e.g. https://shop.example). */
  audience: string;
  /** The registry service that issues them (its public URL, the credentials' iss); its JWKS is at /.well-known/jwks.json. */
  issuer?: string;
  /** The registry's JWKS, when not at the issuer's usual place (the credentials' iss is then this URL's base, or issuer). */
  jwksUrl?: string;
  /** Where the JWKS and status lists are kept, by their Cache-Control (default: one shared by this process). */
  cache?: HttpCache;
}

/** A good presentation, before the replay guard and the policies. */
export interface CredentialProof {
  credential: VerifiedCredential;
  agentKey: Hex;
  replayKey: string;
  ttlMs: number;
}

/** Why a presentation was refused: what verifyAgentCredential found, another chain or registry, or a replay. */
export type CredentialRefusal = CredentialFailure | 'network' | 'replay';

export type CredentialProofCheck =
  | { ok: true; proof: CredentialProof }
  | { ok: false; status: 400 | 403 | 503; error: string; reason: CredentialRefusal };

/** How long a KB-JWT is good for, either way of the verifier's clock: the window of the signature schemes (5 minutes). */
export const KB_WINDOW_S = 300;

/** A refusal's status: a presentation that does not decode 400, a registry that cannot be read 503, any other 403. */
const STATUS: Record<CredentialFailure, 400 | 403 | 503> = {
  request: 400,
  malformed: 400,
  issuer: 403,
  signature: 403,
  expired: 403,
  audience: 403,
  nonce: 403,
  'key-binding': 403,
  revoked: 403,
  status: 503,
  unreachable: 503,
};

/** The presentation the request's Authorization field carries in the SD-JWT scheme, if any. */
export const presentedCredential = (headers: Headers): string | undefined => credentialOfAuthorization(headers.get('authorization') ?? undefined);

/** The registry key of the agent a credential binds (cnf): the raw Ed25519 key, or the padded address. */
export function agentKeyOfCredential(jwk: AgentCnfJwk, agentAddress: Address): Hex {
  return jwk.kty === 'OKP' ? `0x${Buffer.from(jwk.x, 'base64url').toString('hex')}` : addressAgentKey(agentAddress);
}

/** What the human disclosed, in the form the policies read: an age threshold, the OFAC name checks, a nationality. */
export function credentialsOfDisclosed(disclosed: VerifiedCredential['disclosed']): PublicCredentials {
  const ofacClear = disclosed.ofac_clear === true;
  return {
    ...(typeof disclosed.nationality === 'string' ? { nationality: disclosed.nationality } : {}),
    olderThan: disclosed.age_over_21 === true ? 21 : disclosed.age_over_18 === true ? 18 : 0,
    // the document-number check is not a claim of the credential
    ofac: [false, ofacClear, ofacClear],
  };
}

/**
 * Checks the presented credential against the request: the audience, the nonce (method, one of `authorities`, path and
 * query, body), a fresh KB-JWT, the registry's signature and status list. Network and registry: the credential must
 * name the verifier's chain (a testnet agent's human may be a mock document), and its registry when one is given.
 */
export async function checkCredentialProof(
  presentation: string,
  request: { method: string; url: string; body: string },
  options: CredentialProofOptions & { authorities: readonly string[]; chainId: number; registry?: Address; nowMs: number },
): Promise<CredentialProofCheck> {
  const binding = requestBinding(request);
  const nonces = options.authorities.map((authority) => requestNonce(binding, authority));
  let credential: VerifiedCredential;
  try {
    credential = await verifyAgentCredential(presentation, {
      audience: options.audience,
      nonce: nonces,
      ...(options.issuer === undefined ? {} : { issuer: options.issuer }),
      ...(options.jwksUrl === undefined ? {} : { jwksUrl: options.jwksUrl }),
      ...(options.cache === undefined ? {} : { cache: options.cache }),
      now: Math.floor(options.nowMs / 1000),
      maxKbAgeS: KB_WINDOW_S,
    });
  } catch (error) {
    if (!(error instanceof CredentialError)) throw error;
    const message =
      error.reason === 'nonce'
        ? `The credential was presented for another request: its key-binding JWT's nonce is not this request's (method, host, path and query, body)`
        : error.message;
    return { ok: false, status: STATUS[error.reason], error: `Credential refused (${error.reason}): ${message}`, reason: error.reason };
  }
  if (credential.chainId !== options.chainId) {
    return refuse(`The credential's agent is on chain ${credential.chainId}; this verifier accepts agents on chain ${options.chainId}`);
  }
  if (options.registry !== undefined && credential.registry.toLowerCase() !== options.registry.toLowerCase()) {
    return refuse(`The credential's agent is registered in ${credential.registry}, not in the registry this verifier accepts`);
  }
  const agentKey = agentKeyOfCredential(credential.agentJwk, credential.agentAddress);
  const { iat, jti, nonce } = credential.keyBinding;
  return {
    ok: true,
    proof: {
      credential,
      agentKey,
      // a presentation is spent once, as a signed message is: keyed by the agent and its jti (else its nonce and iat)
      replayKey: `${agentKey.toLowerCase()}:kb:${jti ?? `${nonce}:${iat}`}`,
      ttlMs: Math.max(1, (iat + KB_WINDOW_S) * 1000 - options.nowMs),
    },
  };
}

const refuse = (error: string): CredentialProofCheck => ({
  ok: false,
  status: 403,
  error: `Credential refused (network): ${error}`,
  reason: 'network',
});
