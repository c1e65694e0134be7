// Signing a request with RFC 9421 HTTP Message Signatures: ERC-8128 for secp256k1 agents, Web Bot Auth for Ed25519
// agents (rfc9421-profiles.ts). http-message-signatures builds the Signature-Input and the signature base and
// serializes the Signature; this module chooses the components and parameters and signs the base's bytes.
import { ed25519 } from '@noble/curves/ed25519.js';
import { httpbis, type SigningKey } from 'http-message-signatures';
import { serializeDictionary, serializeItem } from 'structured-headers';
import { hexToBytes } from 'viem';
import { ed25519JwkThumbprint } from './agent-jwk.js';
import { contentDigest } from './content-digest.js';
import { pooledRandomBytes } from './random-pool.js';
import {
  ERC8128_DEFAULT_CHAIN_ID,
  erc8128KeyId,
  RFC9421_DEFAULT_LABEL,
  RFC9421_MAX_WINDOW_S,
  RFC9421_REQUEST_COMPONENTS,
  type Rfc9421Profile,
  WEB_BOT_AUTH_TAG,
} from './rfc9421-profiles.js';
import type { RequestSigner } from './signed-request.js';

/** What a request signature covers. */
export interface Rfc9421Request {
  method: string;
  /** The absolute URL the request goes to: its authority, path and query are signed. */
  url: string;
  /** The body text; absent or empty for none. */
  body?: string | null;
}

export interface Rfc9421SignOptions {
  /** ERC-8128: the chain named in the keyid (default 42220, Celo mainnet). */
  chainId?: number;
  /** Web Bot Auth: the HTTPS URL where the agent's key can be found, sent and signed as Signature-Agent. */
  signatureAgent?: string;
  /** Unix seconds (default: now). */
  created?: number;
  /** Seconds from created to expires: default and most 300. */
  expiresInS?: number;
  /** Default: 32 random bytes, base64. Each nonce can be spent once. */
  nonce?: string;
  /** The signature's label (default `eth` for ERC-8128, as the ERC recommends, and `sig1` for Web Bot Auth). */
  label?: string;
}

/** Fresh nonces: 256 bits, far beyond the ERC's recommended 128. */
const NONCE_BYTES = 32;

/** The library's signing key for a signer: the keyid, the alg it declares, and the signing of the base's bytes. */
async function signingKey(signer: RequestSigner, chainId: number): Promise<SigningKey> {
  if (signer.type === 'secp256k1') {
    const { account } = signer;
    return {
      id: erc8128KeyId(chainId, account.address),
      // EIP-191 over the base; viem signs in the canonical form (low s, v 27/28), which verifiers require
      sign: async (data) => Buffer.from(hexToBytes(await account.signMessage({ message: { raw: data } }))),
    };
  }
  const seed = typeof signer.seed === 'string' ? hexToBytes(signer.seed) : signer.seed;
  return {
    id: await ed25519JwkThumbprint(ed25519.getPublicKey(seed)),
    alg: 'ed25519',
    sign: async (data) => Buffer.from(ed25519.sign(data, seed)),
  };
}

/**
 * The headers (lowercase names) that sign `request`: signature-input and signature, content-digest when there is
 * a body, and signature-agent when given. The signature covers @method, @authority, @path and @query, and
 * content-digest and signature-agent when sent, with created, expires, nonce and keyid (and for Web Bot Auth alg
 * and tag).
 */
export async function signRfc9421(signer: RequestSigner, request: Rfc9421Request, options: Rfc9421SignOptions = {}): Promise<Record<string, string>> {
  const expiresInS = options.expiresInS ?? RFC9421_MAX_WINDOW_S;
  if (!Number.isInteger(expiresInS) || expiresInS <= 0 || expiresInS > RFC9421_MAX_WINDOW_S) {
    throw new RangeError(`expiresInS must be a whole number of seconds from 1 to ${RFC9421_MAX_WINDOW_S}`);
  }
  const created = options.created ?? Math.floor(Date.now() / 1000);
  if (!Number.isInteger(created) || created < 0) throw new RangeError('created must be unix seconds (a whole number)');
  const profile: Rfc9421Profile = signer.type === 'secp256k1' ? 'erc8128' : 'web-bot-auth';
  const label = options.label ?? RFC9421_DEFAULT_LABEL[profile];

  const headers: Record<string, string> = {};
  const fields: string[] = [...RFC9421_REQUEST_COMPONENTS];
  const body = request.body ?? '';
  if (body !== '') {
    headers['content-digest'] = contentDigest(body);
    fields.push('content-digest');
  }
  if (options.signatureAgent !== undefined) {
    // the dictionary form the Web Bot Auth draft asks signers for, its member keyed by this signature's label
    headers['signature-agent'] = serializeDictionary(new Map([[label, [options.signatureAgent, new Map()]]]));
    fields.push(serializeItem(['signature-agent', new Map([['key', label]])]));
  }

  const params = profile === 'erc8128' ? ['created', 'expires', 'nonce', 'keyid'] : ['created', 'expires', 'nonce', 'keyid', 'alg', 'tag'];
  const signed = await httpbis.signMessage(
    {
      key: await signingKey(signer, options.chainId ?? ERC8128_DEFAULT_CHAIN_ID),
      name: label,
      fields,
      params,
      paramValues: {
        created: new Date(created * 1000),
        expires: new Date((created + expiresInS) * 1000),
        nonce: options.nonce ?? pooledRandomBytes(NONCE_BYTES).toString('base64'),
        ...(profile === 'web-bot-auth' ? { tag: WEB_BOT_AUTH_TAG } : {}),
      },
    },
    { method: request.method, url: new URL(request.url), headers },
  );
  return { ...headers, 'signature-input': String(signed.headers['Signature-Input']), signature: String(signed.headers['Signature']) };
}
