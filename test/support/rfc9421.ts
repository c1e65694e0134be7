// RFC 9421 requests as the API tests send them: signed for http://localhost (a loopback name, which a service
// without PUBLIC_URL or SIGNATURE_AUTHORITIES accepts) and sent with that Host, ERC-8128 keyids naming the testnet,
// Web Bot Auth signatures naming the agent's key directory here; and Cloudflare's web-bot-auth as an outside signer.
import type { Express } from 'express';
import request from 'supertest';
import { signatureHeaders as cloudflareSign } from 'web-bot-auth';
import { signerFromJWK } from 'web-bot-auth/crypto';
import { ed25519PublicJwk } from '../../src/core/agent-jwk.js';
import { contentDigest } from '../../src/core/content-digest.js';
import { keyDirectoryUrl } from '../../src/core/key-directory.js';
import { NETWORKS } from '../../src/core/networks.js';
import { type Rfc9421SignOptions, signRfc9421 } from '../../src/core/rfc9421-sign.js';
import type { RequestSigner } from '../../src/core/signed-request.js';
import type { RegisteredSigner } from './signers.js';

export const HOST = 'localhost';
export const TESTNET_CHAIN_ID = NETWORKS.testnet.chainId;

export const urlAt = (path: string, host = HOST): string => `http://${host}${path}`;

/** The key directory of a testnet agent on the service at `host`: what its Web Bot Auth requests name. */
export const directoryOf = (agentId: number | bigint, host = HOST, chainId: number = TESTNET_CHAIN_ID): string =>
  keyDirectoryUrl(`http://${host}`, chainId, BigInt(agentId));

/** How a registered agent signs by default: ERC-8128 naming the testnet, or Web Bot Auth naming its directory here. */
export const profileOptions = ({ signer, key }: Pick<RegisteredSigner, 'signer' | 'key'>): Rfc9421SignOptions =>
  signer.type === 'secp256k1' ? { chainId: TESTNET_CHAIN_ID } : { signatureAgent: directoryOf(key.agentId) };

export interface Rfc9421Send {
  method?: 'GET' | 'POST';
  path: string;
  /** The body sent (POST only). */
  body?: string;
  /** The Host sent; default localhost. */
  host?: string;
}

/** The RFC 9421 headers `signer` makes for the request (signed for its Host unless `signedUrl` says otherwise). */
export const rfc9421Headers = (
  signer: RequestSigner,
  { method = 'POST', path, body, host }: Rfc9421Send,
  options: Rfc9421SignOptions & { signedUrl?: string; signedBody?: string } = {},
): Promise<Record<string, string>> => {
  const { signedUrl, signedBody, ...signOptions } = options;
  return signRfc9421(signer, { method, url: signedUrl ?? urlAt(path, host), body: signedBody ?? body ?? null }, signOptions);
};

/** Sends the request over HTTP to the app with its Host and headers. */
export function sendWith(app: Express, headers: Record<string, string>, { method = 'POST', path, body, host = HOST }: Rfc9421Send) {
  const req = (method === 'GET' ? request(app).get(path) : request(app).post(path)).set('host', host).set(headers);
  return method === 'GET' ? req : req.set('content-type', 'application/json').send(body ?? '');
}

/** The private JWK of an Ed25519 seed, as Cloudflare's web-bot-auth builds a signer from. */
export const privateJwkOf = (seed: `0x${string}`, publicKey: `0x${string}`): Parameters<typeof signerFromJWK>[0] => ({
  ...ed25519PublicJwk(publicKey),
  d: Buffer.from(seed.slice(2), 'hex').toString('base64url'),
});

/** The components a web-bot-auth signature must list for our verifier: ours, Signature-Agent included. */
export const WEB_BOT_AUTH_COMPONENTS = ['@method', '@authority', '@path', '@query', 'content-digest', 'signature-agent'];

/**
 * The headers Cloudflare's web-bot-auth makes for a POST by an Ed25519 agent naming its directory here: a digest of
 * the body, Signature-Agent as a dictionary keyed by the label (the whole field covered), a five-minute window.
 * `components` null leaves the package's defaults.
 */
export async function cloudflareHeaders(
  agent: RegisteredSigner,
  { path, body = '', host = HOST }: Omit<Rfc9421Send, 'method'>,
  components: string[] | null = WEB_BOT_AUTH_COMPONENTS,
): Promise<Record<string, string>> {
  const headers: Record<string, string> = {
    'content-digest': contentDigest(body),
    'signature-agent': `sig1="${directoryOf(agent.key.agentId, host)}"`,
  };
  const created = new Date();
  const signer = await signerFromJWK(privateJwkOf(agent.key.privateKey, agent.key.publicKey!));
  const signed = await cloudflareSign(new Request(urlAt(path, host), { method: 'POST', body, headers }), signer, {
    created,
    expires: new Date(created.getTime() + 300_000),
    ...(components ? { components } : {}),
  });
  return { ...headers, 'signature-input': signed['Signature-Input'], signature: signed.Signature };
}
