// Signed agent requests (and responses): the header family, the message an agent signs, and who signed it.
// An agent signs keccak256(timestamp ‖ METHOD ‖ canonical path+query ‖ keccak256(body) as 0x-hex text): ECDSA
// agents with personal_sign over the 32 message bytes, Ed25519 agents with plain Ed25519 over the same bytes.
// Pure: the on-chain checks and the replay guard are the verifiers' (the service's and the client SDK's), which
// both key their guard on signedMessageKey.
import { ed25519 } from '@noble/curves/ed25519.js';
import {
  type Address,
  bytesToHex,
  type Hex,
  hexToBytes,
  isAddress,
  isHex,
  keccak256,
  type LocalAccount,
  recoverMessageAddress,
  stringToHex,
} from 'viem';
import { addressAgentKey } from './agent-key.js';
import { nonCanonicalEcdsa } from './ecdsa-signature-form.js';
import { ed25519AgentAddress, ed25519Verifies } from './ed25519-key.js';

/** The header family of signed agent requests (and of the demo agent's signed responses). */
export const AGENT_HEADERS = {
  signature: 'x-svc-agent-signature',
  /** Unix epoch milliseconds, decimal digits only. */
  timestamp: 'x-svc-agent-timestamp',
  /** The signer's address: informational, the verifier recovers the signer itself. */
  address: 'x-svc-agent-address',
  /** `ed25519` for Ed25519 agents; absent means secp256k1. */
  keyType: 'x-svc-agent-keytype',
  /** Ed25519 agents: the raw 32-byte public key, 0x-hex. */
  key: 'x-svc-agent-key',
} as const;

/** How far a timestamp may be from the verifier's clock, either way. */
export const SIGNATURE_WINDOW_MS = 5 * 60 * 1000;

/** What a signature covers. */
export interface SignedContent {
  /** Unix ms as decimal text, exactly as sent in the timestamp header. */
  timestamp: string;
  method: string;
  /** A full URL, a path with its query, or only a query. */
  url: string;
  /** The body text; absent or empty for none. */
  body?: string | null;
}

/** The part of a URL a signature covers: its path (or "/") and query, without the fragment. */
export function canonicalUrl(url: string): string {
  if (url === '') return '';
  if (url.startsWith('?')) return `/${url}`;
  if (url.startsWith('/')) return url;
  const parsed = new URL(url, 'http://self.local');
  return `${parsed.pathname || '/'}${parsed.search}`;
}

/** keccak256 of the body's UTF-8 bytes (of nothing when there is no body). */
export const bodyHash = (body: string | null | undefined): Hex => keccak256(stringToHex(body ?? ''));

/** The 32-byte message an agent signs. */
export function requestMessage(content: SignedContent): Hex {
  return keccak256(stringToHex(`${content.timestamp}${content.method.toUpperCase()}${canonicalUrl(content.url)}${bodyHash(content.body)}`));
}

/** A key that signs requests: a local secp256k1 account, or an Ed25519 seed. */
export type RequestSigner = { type: 'secp256k1'; account: LocalAccount } | { type: 'ed25519'; seed: Hex | Uint8Array };

/** The headers of a signed request (or response) at `timestamp` (default: now). */
export async function signedHeaders(
  signer: RequestSigner,
  content: Omit<SignedContent, 'timestamp'> & { timestamp?: string },
): Promise<Record<string, string>> {
  const timestamp = content.timestamp ?? String(Date.now());
  const message = requestMessage({ ...content, timestamp });
  if (signer.type === 'secp256k1') {
    const signature = await signer.account.signMessage({ message: { raw: message } });
    return { [AGENT_HEADERS.signature]: signature, [AGENT_HEADERS.timestamp]: timestamp, [AGENT_HEADERS.address]: signer.account.address };
  }
  const seed = typeof signer.seed === 'string' ? hexToBytes(signer.seed) : signer.seed;
  const publicKey = bytesToHex(ed25519.getPublicKey(seed));
  return {
    [AGENT_HEADERS.signature]: bytesToHex(ed25519.sign(hexToBytes(message), seed)),
    [AGENT_HEADERS.timestamp]: timestamp,
    [AGENT_HEADERS.address]: ed25519AgentAddress(publicKey),
    [AGENT_HEADERS.keyType]: 'ed25519',
    [AGENT_HEADERS.key]: publicKey,
  };
}

/** The signer a signature names: its registry key and address. */
export interface RequestSignerIdentity {
  keyType: 'secp256k1' | 'ed25519';
  /** The registry's key: the padded address, or the raw Ed25519 public key. */
  agentKey: Hex;
  agentAddress: Address;
}

/** A good signature: who signed, the message, and the signature and timestamp as checked. */
export type SignatureCheck =
  | { ok: true; signer: RequestSignerIdentity; message: Hex; signature: Hex; timestamp: number }
  | { ok: false; error: string };

/**
 * What a replay guard claims for a good signature: who signed and what, never the signature's text. A signer can
 * make many valid signatures of one message (and Ed25519 or ECDSA encodings other than the canonical one are
 * refused anyway); any of them spends the message, at every endpoint that takes signed requests.
 */
export const signedMessageKey = (check: { signer: Pick<RequestSignerIdentity, 'agentKey'>; message: Hex }): string =>
  `${check.signer.agentKey.toLowerCase()}:${check.message}`;

/** Header values as a server sees them (lowercase names). */
export type HeaderBag = Readonly<Record<string, string | string[] | undefined>>;

const header = (headers: HeaderBag, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** The request carries the two headers every signed request needs. */
export const hasSignatureHeaders = (headers: HeaderBag): boolean =>
  header(headers, AGENT_HEADERS.signature) !== undefined && header(headers, AGENT_HEADERS.timestamp) !== undefined;

/**
 * Recovers a personal_sign signer of the raw message (hex, or bytes: an RFC 9421 signature base need not go through
 * hex); the default is viem's (pure JavaScript), a verifier may bring a faster one.
 */
export type PersonalSignRecovery = (message: Hex | Uint8Array, signature: Hex) => Address | undefined | Promise<Address | undefined>;

export const viemRecovery: PersonalSignRecovery = (message, signature) =>
  recoverMessageAddress({ message: { raw: message }, signature }).catch(() => undefined);

/**
 * Who signed `content` with the signature in `headers`, or why no one did. The timestamp must be decimal
 * digits (an ISO date is refused rather than read as its year) within `SIGNATURE_WINDOW_MS` of `now`.
 */
/** What a signature that does not verify against the request it came with most likely means. */
const NOT_THIS_REQUEST =
  'it does not sign this method, path and query, body and timestamp; sign the exact bytes sent (a body re-serialized or a path rewritten after signing breaks it)';

export async function recoverRequestSigner(
  headers: HeaderBag,
  request: Omit<SignedContent, 'timestamp'>,
  now: number,
  recover: PersonalSignRecovery = viemRecovery,
): Promise<SignatureCheck> {
  const signature = header(headers, AGENT_HEADERS.signature);
  const timestamp = header(headers, AGENT_HEADERS.timestamp);
  if (signature === undefined || timestamp === undefined) return { ok: false, error: 'Missing agent authentication headers' };
  if (!/^\d{1,16}$/.test(timestamp) || Math.abs(now - Number(timestamp)) > SIGNATURE_WINDOW_MS) {
    return { ok: false, error: 'Timestamp expired or invalid: send unix milliseconds (decimal digits) within 5 minutes of now' };
  }
  const message = requestMessage({ ...request, timestamp });
  if (header(headers, AGENT_HEADERS.keyType)?.toLowerCase() === 'ed25519') {
    const key = header(headers, AGENT_HEADERS.key)?.toLowerCase();
    if (key === undefined) return { ok: false, error: 'Missing agent key for Ed25519 verification' };
    // a non-canonical or small-order key is refused by the strict check itself (isEd25519PublicKey's field
    // arithmetic in bigints would cost more than the check)
    const valid =
      isHex(key) &&
      key.length === 66 &&
      isHex(signature) &&
      signature.length === 130 &&
      ed25519Verifies(hexToBytes(signature), hexToBytes(message), key);
    if (!valid) return { ok: false, error: `Invalid Ed25519 signature: ${NOT_THIS_REQUEST}` };
    return {
      ok: true,
      message,
      signature,
      timestamp: Number(timestamp),
      signer: { keyType: 'ed25519', agentKey: key, agentAddress: ed25519AgentAddress(key) },
    };
  }
  if (!isHex(signature) || signature.length !== 132) return { ok: false, error: 'Invalid signature' };
  const nonCanonical = nonCanonicalEcdsa(signature);
  if (nonCanonical) return { ok: false, error: nonCanonical };
  const agentAddress = await recover(message, signature);
  if (!agentAddress) return { ok: false, error: 'Invalid signature' };
  // A signature over other bytes recovers some other address: where the caller named its address, say what happened
  // rather than looking that stranger up (which would read as "not registered")
  const named = header(headers, AGENT_HEADERS.address);
  if (named !== undefined && isAddress(named, { strict: false }) && named.toLowerCase() !== agentAddress.toLowerCase()) {
    return { ok: false, error: `The signature is not ${named}'s signature of this request: ${NOT_THIS_REQUEST}` };
  }
  return {
    ok: true,
    message,
    signature,
    timestamp: Number(timestamp),
    signer: { keyType: 'secp256k1', agentKey: addressAgentKey(agentAddress), agentAddress },
  };
}
