// The client SDK of the agent identity registry (package subpath `./client`): sign requests as an agent, check
// signed responses, register an agent through a registry service, and use its account-abstraction proxy with a
// passkey smart account. It depends on src/core, the passkey account and the generated ABIs only (npm run lint
// checks it), so it is published on its own.

export type { PasskeySmartAccount, PasskeySmartAccountParameters } from '../aa/passkey-account.js';
export { passkeyCoordinates, toPasskeySmartAccount } from '../aa/passkey-account.js';
export type { AaProxyOptions, ProxyToken } from './account-abstraction.js';
export { AA_PROXY_TOKEN_HEADER, AaProxyError, aaProxyClients, aaProxyTransports, fetchProxyToken, proxyFetch } from './account-abstraction.js';
export type { ReplayGuard, RequireAgentOptions, VerifiedRequestAgent } from './express.js';
export { memoryReplayGuard, requireAgent } from './express.js';
export type { ExportedKey, OpenedRegistration, RegistrationRequest, SessionState } from './registration.js';
export { RegistryClient, RegistryError, signerFromExport } from './registration.js';
export type { RequestSigner, RequestSignerIdentity } from './signing.js';
export { AGENT_HEADERS, signingFetch, signRequest, verifySignedResponse } from './signing.js';
