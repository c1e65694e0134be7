// Verifying an RFC 9421 request signature of either profile (rfc9421-profiles.ts): who signed, over what, and the
// key of the replay guard. Pure: the agent's registration, the Ed25519 key behind a thumbprint and the spending of
// the nonce are the caller's (the service's and the client SDK's verifiers).
//
// Which signature: a request may carry several (Signature-Input is a dictionary by label). The first member, in
// the field's order, that claims a profile we know (an `erc8128:` keyid, or tag="web-bot-auth") is the one
// checked; the others are still parsed, and a malformed one refuses the request, but they are not verified.
//
// Statuses: 401 without a signature, 400 when Signature-Input or Signature is not what RFC 9421 defines, 403 for
// a well-formed signature we refuse (a component it leaves out, its window, another host, the digest, the keyid,
// the key, the signature itself).
import { httpbis, type Request } from 'http-message-signatures';
import { type InnerList, isInnerList, type Parameters, parseDictionary, parseItem, serializeItem } from 'structured-headers';
import { type Address, bytesToHex, type Hex } from 'viem';
import { addressAgentKey } from './agent-key.js';
import { contentDigestMismatch } from './content-digest.js';
import { nonCanonicalEcdsa } from './ecdsa-signature-form.js';
import { ed25519AgentAddress, ed25519Verifies } from './ed25519-key.js';
import {
  claimedProfile,
  ERC8128_CHAIN_IDS,
  isJwkThumbprint,
  parseErc8128KeyId,
  RFC9421_CREATED_SKEW_S,
  RFC9421_MAX_NONCE_LENGTH,
  RFC9421_MAX_WINDOW_S,
  type Rfc9421Profile,
} from './rfc9421-profiles.js';
import { signatureBase } from './rfc9421-signature.js';
import { type HeaderBag, type PersonalSignRecovery, type RequestSignerIdentity, viemRecovery } from './signed-request.js';

/** A request as the server received it. */
export interface Rfc9421ReceivedRequest {
  method: string;
  /** The absolute URL as the server sees it: the Host it was sent to, the path and query as received. */
  url: string;
  headers: HeaderBag;
  /** The raw body text; absent or empty for none. */
  body?: string | null;
}

export interface Rfc9421VerifyOptions {
  /** The @authority values (host, and port when not the scheme's default) this service answers at. */
  authorities: readonly string[];
  /** Unix milliseconds. */
  now: number;
  /**
   * The raw 32-byte Ed25519 key (0x-hex) of the registered agent with this JWK thumbprint, or undefined for an
   * unknown agent. `signatureAgent` is the Signature-Agent URL the signature covers, if any. Keys come from the
   * registry, which refuses small-order and non-canonical keys, so they are not checked again here.
   */
  resolveEd25519Key: (thumbprint: string, signatureAgent: string | undefined) => Promise<Hex | undefined>;
  /** personal_sign recovery for ERC-8128; default viem's. */
  recover?: PersonalSignRecovery;
  /** The chain ids an ERC-8128 keyid may name; default the registry's networks (42220, 11142220). */
  chainIds?: readonly number[];
}

export type Rfc9421Check =
  | {
      ok: true;
      profile: Rfc9421Profile;
      signer: RequestSignerIdentity;
      keyid: string;
      /** ERC-8128: the chain the keyid names. */
      chainId?: number;
      nonce: string;
      /** Unix seconds. */
      created: number;
      /** Unix seconds. */
      expires: number;
      /** The Signature-Agent URL the signature covers. */
      signatureAgent?: string;
      /** What the replay guard claims: the signer and the nonce. */
      replayKey: string;
      /** How long the guard must hold the claim: until the signature expires. */
      ttlMs: number;
    }
  | { ok: false; status: 400 | 401 | 403; error: string };

type Refusal = Extract<Rfc9421Check, { ok: false }>;

const refuse = (status: Refusal['status'], error: string): Refusal => ({ ok: false, status, error });

/** A structured field's value: repeated lines joined as RFC 9110 combines them. */
const field = (headers: HeaderBag, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
};

/** The request carries an RFC 9421 signature (whether or not it verifies). */
export const hasRfc9421Signature = (headers: HeaderBag): boolean => headers['signature-input'] !== undefined;

const COMPONENT_RULE =
  'sign @method, @authority, @path, @query (when the URL has a query), content-digest (when there is a body) and signature-agent (when it is sent)';

/** The replay-guard key of a nonce: one claim per signer and nonce, whatever the keyid's chain or the endpoint. */
export const rfc9421ReplayKey = (agentKey: Hex, nonce: string): string => `${agentKey.toLowerCase()}:nonce:${nonce}`;

function parsed(name: string, value: string): ReturnType<typeof parseDictionary> | Refusal {
  try {
    return parseDictionary(value);
  } catch (error) {
    return refuse(400, `${name} is not a structured dictionary (RFC 9651): ${(error as Error).message}`);
  }
}

/** The first signature whose profile we know, once every label is checked to be well formed and paired. */
function chooseSignature(
  inputs: ReturnType<typeof parseDictionary>,
  signatures: ReturnType<typeof parseDictionary>,
): { label: string; input: InnerList; keyid: string; profile: Rfc9421Profile; signature: Uint8Array } | Refusal {
  for (const label of signatures.keys()) {
    if (!inputs.has(label)) return refuse(400, `Signature ${label} has no Signature-Input of the same label`);
  }
  let chosen: { label: string; input: InnerList; keyid: string; profile: Rfc9421Profile } | undefined;
  for (const [label, input] of inputs) {
    const signature = signatures.get(label);
    if (!signature) return refuse(400, `Signature-Input ${label} has no Signature of the same label`);
    if (!isInnerList(input)) return refuse(400, `Signature-Input ${label} must be an inner list of covered components with parameters`);
    if (isInnerList(signature) || !(signature[0] instanceof ArrayBuffer)) return refuse(400, `Signature ${label} must be a byte sequence (:base64:)`);
    const keyid = input[1].get('keyid');
    if (typeof keyid !== 'string') return refuse(400, `Signature-Input ${label} has no keyid (a string parameter)`);
    const profile = claimedProfile(keyid, input[1].get('tag'));
    if (profile && !chosen) chosen = { label, input, keyid, profile };
  }
  if (!chosen) {
    return refuse(
      403,
      'Unknown keyid form: sign as ERC-8128 (keyid="erc8128:<chainId>:<address>") or as Web Bot Auth (keyid = the JWK thumbprint of an Ed25519 key, tag="web-bot-auth")',
    );
  }
  const signature = signatures.get(chosen.label)![0] as ArrayBuffer;
  return { ...chosen, signature: new Uint8Array(signature) };
}

/** created, expires and nonce as RFC 9421 and both profiles require them, within the window around `now`. */
function timing(params: Parameters, now: number): { created: number; expires: number; nonce: string } | Refusal {
  const created = params.get('created');
  const expires = params.get('expires');
  const nonce = params.get('nonce');
  const missing = [
    ...(typeof created === 'number' ? [] : ['created']),
    ...(typeof expires === 'number' ? [] : ['expires']),
    ...(typeof nonce === 'string' ? [] : ['nonce']),
  ];
  if (missing.length > 0) {
    return refuse(403, `The signature has no ${missing.join(', ')}: sign with created and expires (unix seconds) and a nonce (a string)`);
  }
  const [c, e, n] = [created as number, expires as number, nonce as string];
  if (!Number.isInteger(c) || !Number.isInteger(e)) return refuse(403, 'created and expires must be integers (unix seconds)');
  if (e <= c) return refuse(403, 'expires must be after created');
  if (e - c > RFC9421_MAX_WINDOW_S) return refuse(403, `The signature window (expires - created) is ${e - c} s: it must be at most 5 minutes`);
  if (c * 1000 > now + RFC9421_CREATED_SKEW_S * 1000) return refuse(403, `created is in the future (${c}): check the signer's clock`);
  if (e * 1000 < now) return refuse(403, `The signature expired at ${e} (unix seconds): sign the request again`);
  if (n.length === 0 || n.length > RFC9421_MAX_NONCE_LENGTH) return refuse(403, `The nonce must have 1 to ${RFC9421_MAX_NONCE_LENGTH} characters`);
  return { created: c, expires: e, nonce: n };
}

/**
 * The Signature-Agent URL the signature covers: the member keyed by the component's `key` parameter, or, when the
 * whole field is covered, the member keyed by the signature's label, or the whole field in the draft's earlier
 * form, a bare string.
 */
function coveredSignatureAgent(value: string, key: string | undefined, label: string): string | Refusal {
  let member: unknown;
  try {
    if (key === undefined && value.trimStart().startsWith('"')) member = parseItem(value)[0];
    else {
      const entry = parseDictionary(value).get(key ?? label);
      member = entry && !isInnerList(entry) ? entry[0] : undefined;
    }
  } catch (error) {
    return refuse(400, `Signature-Agent is not a structured field: ${(error as Error).message}`);
  }
  if (typeof member !== 'string') return refuse(403, `Signature-Agent has no URL (a string) keyed ${key ?? label}, the member the signature covers`);
  return member;
}

/** Who signed `request` with RFC 9421, or why no one did (see the top of this file for which signature and which status). */
export async function verifyRfc9421(request: Rfc9421ReceivedRequest, options: Rfc9421VerifyOptions): Promise<Rfc9421Check> {
  const { headers } = request;
  const inputField = field(headers, 'signature-input');
  const signatureField = field(headers, 'signature');
  if (inputField === undefined && signatureField === undefined) return refuse(401, 'Missing RFC 9421 signature: send Signature-Input and Signature');
  if (inputField === undefined || signatureField === undefined) {
    return refuse(400, `${inputField === undefined ? 'Signature-Input' : 'Signature'} is missing: RFC 9421 signatures send both fields`);
  }
  const inputs = parsed('Signature-Input', inputField);
  if (!(inputs instanceof Map)) return inputs;
  const signatures = parsed('Signature', signatureField);
  if (!(signatures instanceof Map)) return signatures;
  const chosen = chooseSignature(inputs, signatures);
  if ('ok' in chosen) return chosen;
  const { label, input, keyid, profile } = chosen;
  const [items, params] = input;

  // the covered components: names only, each once
  const covered = new Map<string, Parameters>();
  const seen = new Set<string>();
  for (const item of items) {
    if (typeof item[0] !== 'string') return refuse(400, `Signature-Input ${label} lists a component that is not a string`);
    // most components have no parameters: their name is their identifier, no serialization needed
    const id = item[1].size === 0 ? `"${item[0]}"` : serializeItem(item);
    if (seen.has(id)) return refuse(400, `Signature-Input ${label} lists ${id} twice`);
    seen.add(id);
    if (!covered.has(item[0])) covered.set(item[0], item[1]);
  }

  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return refuse(400, 'The request URL is not an absolute URL');
  }
  const body = request.body ?? '';
  const agentField = field(headers, 'signature-agent');
  const missing = [
    ...['@method', '@authority', '@path'].filter((name) => !covered.has(name)),
    ...(url.search !== '' && !covered.has('@query') ? ['@query'] : []),
    ...(body !== '' && !covered.has('content-digest') ? ['content-digest'] : []),
    ...(agentField !== undefined && !covered.has('signature-agent') ? ['signature-agent'] : []),
  ];
  if (missing.length > 0) return refuse(403, `The signature does not cover ${missing.join(', ')}: ${COMPONENT_RULE}`);

  const when = timing(params, options.now);
  if ('ok' in when) return when;

  // the fields the base needs, as received; the derived components come from the URL
  const fields: Record<string, string | string[]> = {};
  for (const name of covered.keys()) {
    if (name.startsWith('@')) continue;
    const value = headers[name];
    if (value === undefined) return refuse(403, `The signature covers the ${name} field, which the request does not carry`);
    fields[name] = value;
  }
  const message: Request = { method: request.method, url, headers: fields };

  const authority = httpbis.deriveComponent('@authority', new Map(), message)[0] ?? '';
  if (!options.authorities.some((accepted) => accepted.toLowerCase() === authority)) {
    return refuse(403, `Signed for another host (${authority}): this service answers at ${options.authorities.join(', ')}`);
  }

  const digest = fields['content-digest'];
  if (digest !== undefined) {
    const mismatch = contentDigestMismatch(Array.isArray(digest) ? digest.join(', ') : digest, body);
    if (mismatch) return refuse(403, mismatch);
  }

  let signatureAgent: string | undefined;
  if (agentField !== undefined) {
    const key = covered.get('signature-agent')!.get('key');
    const agent = coveredSignatureAgent(agentField, typeof key === 'string' ? key : undefined, label);
    if (typeof agent !== 'string') return agent;
    signatureAgent = agent;
  }

  let base: Buffer;
  try {
    base = Buffer.from(signatureBase(message, input));
  } catch (error) {
    return refuse(403, `The signature base cannot be rebuilt from this request: ${(error as Error).message}`);
  }

  const signed =
    profile === 'erc8128'
      ? await erc8128Signer(keyid, params, base, chosen.signature, options)
      : await webBotAuthSigner(keyid, params, base, chosen.signature, signatureAgent, options);
  if ('ok' in signed) return signed;
  return {
    ok: true,
    profile,
    signer: signed.signer,
    keyid,
    ...(signed.chainId === undefined ? {} : { chainId: signed.chainId }),
    ...when,
    ...(signatureAgent === undefined ? {} : { signatureAgent }),
    replayKey: rfc9421ReplayKey(signed.signer.agentKey, when.nonce),
    ttlMs: when.expires * 1000 - options.now + 1,
  };
}

type Signed = { signer: RequestSignerIdentity; chainId?: number } | Refusal;

/** ERC-8128: an EIP-191 signature over the base, in canonical form, by the keyid's address. */
async function erc8128Signer(keyid: string, params: Parameters, base: Buffer, signature: Uint8Array, options: Rfc9421VerifyOptions): Promise<Signed> {
  const account = parseErc8128KeyId(keyid);
  if (!account) return refuse(403, `Unknown keyid form ${JSON.stringify(keyid)}: an ERC-8128 keyid is erc8128:<chain id>:<0x + 40 hex address>`);
  const chainIds = options.chainIds ?? ERC8128_CHAIN_IDS;
  if (!chainIds.includes(account.chainId))
    return refuse(403, `The keyid names chain ${account.chainId}: this service accepts chain ids ${chainIds.join(', ')}`);
  if (params.has('alg')) return refuse(403, 'ERC-8128 signatures carry no alg parameter (the keyid names the scheme): leave it out');
  if (signature.length !== 65) return refuse(403, 'Invalid signature: an ERC-8128 signature is 65 bytes (r, s, v)');
  const signatureHex = bytesToHex(signature);
  const nonCanonical = nonCanonicalEcdsa(signatureHex);
  if (nonCanonical) return refuse(403, nonCanonical);
  const recovered: Address | undefined = await (options.recover ?? viemRecovery)(base, signatureHex);
  if (!recovered || recovered.toLowerCase() !== account.address.toLowerCase()) {
    return refuse(403, `Invalid signature: it was not made by ${account.address} over this request`);
  }
  return { signer: { keyType: 'secp256k1', agentKey: addressAgentKey(recovered), agentAddress: recovered }, chainId: account.chainId };
}

/** Web Bot Auth: an Ed25519 signature over the base by the registered key with the keyid's thumbprint, verified strictly. */
async function webBotAuthSigner(
  keyid: string,
  params: Parameters,
  base: Buffer,
  signature: Uint8Array,
  signatureAgent: string | undefined,
  options: Rfc9421VerifyOptions,
): Promise<Signed> {
  if (!isJwkThumbprint(keyid))
    return refuse(403, 'Unknown keyid form: a Web Bot Auth keyid is the base64url SHA-256 JWK thumbprint of the key (43 characters)');
  const alg = params.get('alg');
  if (alg !== undefined && alg !== 'ed25519')
    return refuse(403, `alg ${JSON.stringify(alg)} is not accepted: Web Bot Auth agents sign with alg="ed25519"`);
  if (signature.length !== 64) return refuse(403, 'Invalid signature: an Ed25519 signature is 64 bytes');
  const key = await options.resolveEd25519Key(keyid, signatureAgent);
  if (key === undefined) return refuse(403, `Unknown agent: no registered Ed25519 agent has the key with thumbprint ${keyid}`);
  if (!ed25519Verifies(signature, base, key)) return refuse(403, 'Invalid signature: it does not verify with the agent key over this request');
  const agentKey = key.toLowerCase() as Hex;
  return { signer: { keyType: 'ed25519', agentKey, agentAddress: ed25519AgentAddress(agentKey) } };
}
