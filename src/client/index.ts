// The client SDK of the agent identity registry (package subpath `./client`): sign requests as an agent (x-svc-agent
// or RFC 9421), verify agents' requests in any framework (verifyAgentRequest; requireAgent for Express) with the human
// behind each agent (policies, per-human quotas), check signed responses, register an agent through a registry service,
// get and present the human-backed-agent credential (verify one offline against the registry's JWKS and status lists,
// or prove requests with it, which verifyAgentRequest accepts), and use its account-abstraction proxy with a passkey
// smart account. It depends on src/core, the passkey account and the generated ABIs only (npm run lint checks it), so
// it is published on its own.

export type { PasskeySmartAccount, PasskeySmartAccountParameters } from '../aa/passkey-account.js';
export { passkeyCoordinates, toPasskeySmartAccount } from '../aa/passkey-account.js';
export type { Ed25519PublicJwk } from '../core/agent-jwk.js';
export { ed25519JwkThumbprint, ed25519PublicJwk } from '../core/agent-jwk.js';
export type {
  AgentPolicy,
  AgentPolicyInput,
  CompiledPolicy,
  CompileOptions,
  EnforceOptions,
  PolicyCheck,
  PolicyCredentials,
  PolicyName,
  PolicyOutcome,
  PolicyRefusal,
  PolicySubject,
} from '../core/agent-policy.js';
export {
  agentPolicySchema,
  checkPolicy,
  compilePolicy,
  DEFAULT_REGISTRY_MAX_PROOF_AGE_S,
  enforcePolicy,
  policySubjectOf,
} from '../core/agent-policy.js';
export type { BoundRequest, RequestBinding } from '../core/credential-request-binding.js';
export { CREDENTIAL_AUTH_SCHEME, requestBinding, requestNonce } from '../core/credential-request-binding.js';
export type { PublicCredentials } from '../core/credentials.js';
export type { Quota, QuotaInput, QuotaStore, QuotaTier, QuotaUse } from '../core/human-quota.js';
export { MemoryQuotaStore, pseudonymQuotaKeyOf, quotaKeyOf, quotaSchema } from '../core/human-quota.js';
export { KEY_DIRECTORY_TEMPLATE, keyDirectoryUrl, parseKeyDirectoryUrl } from '../core/key-directory.js';
export type { RefusalAnswer } from '../core/policy-refusal.js';
export { policyRefusalBodySchema, refusalAnswer, refusalResponse } from '../core/policy-refusal.js';
export { erc8128KeyId } from '../core/rfc9421-profiles.js';
export type { AaProxyOptions, ProxyToken } from './account-abstraction.js';
export { AA_PROXY_TOKEN_HEADER, AaProxyError, aaProxyClients, aaProxyTransports, fetchProxyToken, proxyFetch } from './account-abstraction.js';
export type {
  AgentRequestScheme,
  AgentVerification,
  AgentVerifier,
  AgentVerifierOptions,
  CredentialAgent,
  SigningAgent,
  VerifiedRequestAgent,
} from './agent-verifier.js';
export { createAgentVerifier, verifyAgentRequest } from './agent-verifier.js';
export type { CredentialFailure } from './credential-error.js';
export { CredentialError } from './credential-error.js';
export type { CredentialProofOptions, CredentialRefusal } from './credential-proof.js';
export type { VerifiedCredential, VerifyCredentialOptions } from './credential-verification.js';
export { verifyAgentCredential } from './credential-verification.js';
export type {
  AgentCredential,
  CredentialRequestOptions,
  CredentialSource,
  PresentOptions,
  RequestCredentialOptions,
  SelectiveClaim,
} from './credentials.js';
export {
  AGENT_CREDENTIAL_VCT,
  credentialAuthorization,
  presentCredential,
  presentingFetch,
  requestCredential,
  SELECTIVE_CLAIMS,
} from './credentials.js';
export type { RequireAgentOptions } from './express.js';
export { requireAgent } from './express.js';
export { HttpCache } from './http-cache.js';
export type { RedisEvalClient, RedisQuotaStoreOptions } from './redis-quota-store.js';
export { redisQuotaStore } from './redis-quota-store.js';
export type {
  AgentProof,
  DeregistrationRequest,
  DiscoveredChain,
  ExportedKey,
  OpenedDeregistration,
  OpenedRegistration,
  RegistrationRequest,
  ServiceDiscovery,
  SessionState,
  WaitOptions,
} from './registration.js';
export { DISCOVERY_PATH, RegistryClient, RegistryError, ServiceUnreachable, SessionWaitTimeout, signerFromExport } from './registration.js';
export type { ReplayGuard } from './replay-guard.js';
export { memoryReplayGuard } from './replay-guard.js';
export type { RequestSigner, RequestSignerIdentity, Rfc9421SignOptions, SigningScheme, SignRequestOptions } from './signing.js';
export { AGENT_HEADERS, signingFetch, signRequest, verifySignedResponse } from './signing.js';
