// The client SDK of the agent identity registry (package subpath `./client`): sign requests as an agent, check
// signed responses, and register an agent through a registry service. It depends on src/core only, so it is
// published on its own.

export type { ReplayGuard, RequireAgentOptions, VerifiedRequestAgent } from './express.js';
export { memoryReplayGuard, requireAgent } from './express.js';
export type { ExportedKey, OpenedRegistration, RegistrationRequest, SessionState } from './registration.js';
export { RegistryClient, RegistryError, signerFromExport } from './registration.js';
export type { RequestSigner, RequestSignerIdentity } from './signing.js';
export { AGENT_HEADERS, signingFetch, signRequest, verifySignedResponse } from './signing.js';
