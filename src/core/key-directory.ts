// Where an Ed25519 agent's HTTP Message Signatures key directory lives (draft-meunier-webbotauth-httpsig-directory):
// one URL per registered agent, on the registry service, named by the chain and the agent id. A Web Bot Auth request
// names it in Signature-Agent; a verifier that knows this layout reads the agent id from it and checks the key on
// chain, with no fetch of its own.

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
