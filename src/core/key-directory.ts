// Where an Ed25519 agent's HTTP Message Signatures key directory lives (draft-meunier-webbotauth-httpsig-directory):
// one URL per registered agent, on the registry service, named by the chain and the agent id. A Web Bot Auth request
// names it in Signature-Agent; a verifier that knows this layout reads the agent id from it and checks the key on
// chain, with no fetch of its own.
import { ed25519 } from '@noble/curves/ed25519.js';
import { httpbis } from 'http-message-signatures';
import { type InnerList, type Item, isInnerList, parseDictionary, serializeItem } from 'structured-headers';
import { type Hex, hexToBytes } from 'viem';
import { ed25519JwkThumbprint } from './agent-jwk.js';
import { ed25519Verifies } from './ed25519-key.js';
import { signatureBase } from './rfc9421-signature.js';

/** The directory's media type (the draft's). */
export const KEY_DIRECTORY_MEDIA_TYPE = 'application/http-message-signatures-directory+json';

/** The tag of the signatures a directory answer carries (the draft's); they cover "@authority";req only. */
export const KEY_DIRECTORY_SIGNATURE_TAG = 'http-message-signatures-directory';

/** The route template of a directory. */
export const KEY_DIRECTORY_TEMPLATE = '/api/agent/key-directory/{chainId}/{agentId}';

const PATH = /^\/api\/agent\/key-directory\/(\d{1,12})\/(\d{1,78})\/?$/;

/** The directory URL of one agent on the registry service at `baseUrl`. */
export const keyDirectoryUrl = (baseUrl: string, chainId: number, agentId: bigint): string =>
  `${baseUrl.replace(/\/+$/, '')}/api/agent/key-directory/${chainId}/${agentId}`;

/** The agent a directory URL names, or undefined when the URL is not one (any origin: the caller decides whom it trusts). */
export function parseKeyDirectoryUrl(url: string): { origin: string; host: string; chainId: number; agentId: bigint } | undefined {
  if (!URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  if (!/^https?:$/.test(parsed.protocol) || parsed.search || parsed.hash || parsed.username) return undefined;
  const match = PATH.exec(parsed.pathname);
  if (!match) return undefined;
  const agentId = BigInt(match[2] as string);
  if (agentId === 0n) return undefined;
  return { origin: parsed.origin, host: parsed.host, chainId: Number(match[1]), agentId };
}

/** The longest a published directory signature may live: an agent signs it again within a week. */
export const KEY_DIRECTORY_SIGNATURE_MAX_LIFETIME_S = 7 * 24 * 60 * 60;

/** A directory answer's signature, as the Signature-Input and Signature fields it is served in. */
export interface KeyDirectorySignature {
  signatureInput: string;
  signature: string;
}

const LABEL = 'binding0';
const COVERED = serializeItem(['@authority', new Map([['req', true]])]);

/** The answer and request a directory signature covers: only the authority the directory is fetched at. */
const directoryExchange = (authority: string) => ({
  response: { status: 200, headers: {} as Record<string, string | string[]> },
  request: { method: 'GET', url: new URL(`http://${authority}/`), headers: {} },
});

/**
 * The agent's signature of its directory as served at `authority` (host[:port]): what the draft asks of a
 * directory answer, made by the agent (the service never holds its key) and published to the service, which serves
 * it with the directory until it expires.
 */
export async function signKeyDirectory(
  seed: Hex | Uint8Array,
  options: { authority: string; created?: number; lifetimeS?: number },
): Promise<KeyDirectorySignature> {
  const lifetimeS = options.lifetimeS ?? KEY_DIRECTORY_SIGNATURE_MAX_LIFETIME_S;
  if (!Number.isInteger(lifetimeS) || lifetimeS <= 0 || lifetimeS > KEY_DIRECTORY_SIGNATURE_MAX_LIFETIME_S) {
    throw new RangeError(`lifetimeS must be a whole number of seconds from 1 to ${KEY_DIRECTORY_SIGNATURE_MAX_LIFETIME_S}`);
  }
  const secret = typeof seed === 'string' ? hexToBytes(seed) : seed;
  const created = options.created ?? Math.floor(Date.now() / 1000);
  const { response, request } = directoryExchange(options.authority);
  const signed = await httpbis.signMessage(
    {
      key: {
        id: await ed25519JwkThumbprint(ed25519.getPublicKey(secret)),
        alg: 'ed25519',
        sign: async (data) => Buffer.from(ed25519.sign(data, secret)),
      },
      name: LABEL,
      fields: [COVERED],
      params: ['created', 'expires', 'keyid', 'alg', 'tag'],
      paramValues: { created: new Date(created * 1000), expires: new Date((created + lifetimeS) * 1000), tag: KEY_DIRECTORY_SIGNATURE_TAG },
    },
    response,
    request,
  );
  return { signatureInput: String(signed.headers['Signature-Input']), signature: String(signed.headers['Signature']) };
}

/**
 * Whether `signature` is the agent's signature of its directory at `authority`: one member, covering exactly
 * "@authority";req, with the directory tag, the key's thumbprint as keyid, and a lifetime that has not ended and is
 * at most a week. Why not, in words, otherwise: 400 when the fields are not the structured dictionaries of one
 * signature that RFC 9421 defines, 403 for a well-formed signature that is refused (as request signatures are).
 */
export async function checkKeyDirectorySignature(
  signature: KeyDirectorySignature,
  options: { authority: string; publicKey: Hex; nowS: number },
): Promise<{ ok: true; created: number; expires: number } | { ok: false; status: 400 | 403; error: string }> {
  const malformed = (error: string) => ({ ok: false as const, status: 400 as const, error });
  const refuse = (error: string) => ({ ok: false as const, status: 403 as const, error });
  let inputs: ReturnType<typeof parseDictionary>;
  let values: ReturnType<typeof parseDictionary>;
  try {
    inputs = parseDictionary(signature.signatureInput);
    values = parseDictionary(signature.signature);
  } catch (error) {
    return malformed(`signatureInput and signature must be structured dictionaries (RFC 9651): ${(error as Error).message}`);
  }
  if (inputs.size !== 1 || values.size !== 1) return malformed('Publish one signature: one member in signatureInput and in signature');
  const [label, input] = [...inputs][0] as [string, Item | InnerList];
  const value = values.get(label);
  if (!isInnerList(input) || !value || isInnerList(value) || !(value[0] instanceof ArrayBuffer)) {
    return malformed('signatureInput must be an inner list and signature a byte sequence, under the same label');
  }
  const [items, params] = input;
  if (items.length !== 1 || serializeItem(items[0] as Item) !== COVERED) return refuse(`The signature must cover ${COVERED} only`);
  if (params.get('tag') !== KEY_DIRECTORY_SIGNATURE_TAG) return refuse(`The signature needs tag="${KEY_DIRECTORY_SIGNATURE_TAG}"`);
  const alg = params.get('alg');
  if (alg !== undefined && alg !== 'ed25519') return refuse('alg must be "ed25519" (or absent)');
  const thumbprint = await ed25519JwkThumbprint(options.publicKey);
  if (params.get('keyid') !== thumbprint) return refuse(`keyid must be the JWK thumbprint of the agent's registered key (${thumbprint})`);
  const created = params.get('created');
  const expires = params.get('expires');
  if (!Number.isInteger(created) || !Number.isInteger(expires)) return refuse('created and expires must be unix seconds (integers)');
  const [c, e] = [created as number, expires as number];
  if (e <= options.nowS) return refuse(`The signature expired at ${e}: sign the directory again`);
  if (c > options.nowS + 30) return refuse(`created is in the future (${c}): check the signer's clock`);
  if (e - c > KEY_DIRECTORY_SIGNATURE_MAX_LIFETIME_S) return refuse(`The signature may live at most ${KEY_DIRECTORY_SIGNATURE_MAX_LIFETIME_S} s`);
  const { response, request } = directoryExchange(options.authority);
  const base = Buffer.from(signatureBase(response, input, request));
  if (!ed25519Verifies(new Uint8Array(value[0]), base, options.publicKey)) {
    return refuse(`Invalid signature: it does not verify with the agent's key over the directory at ${options.authority}`);
  }
  return { ok: true, created: c, expires: e };
}
