// Issuing the human-backed-agent credential (core/agent-credential.ts): a registered agent asks with a signed request
// (either scheme, checked like every signed endpoint: registered, a live proof from the registry's provider, used once,
// within the human's quota) naming its verifier, and gets an SD-JWT VC signed by the service's current key. The
// credential is bound to the agent's key: an Ed25519 agent's is its registry key; a secp256k1 agent's registry entry is
// only its address, so it sends its public key (`jwk`, inside the signed body), which must hash to that address.
import { digest, generateSalt } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { z } from 'zod';
import type { ChainGateway } from '../chain/gateway.js';
import {
  AGENT_CREDENTIAL_VCT,
  type AgentCnfJwk,
  agentClaims,
  credentialExpiry,
  ed25519CnfJwk,
  MAX_AUDIENCE_LENGTH,
  pairwiseSubject,
  secp256k1JwkAddress,
  selectiveClaims,
} from '../core/agent-credential.js';
import { badRequest, ServiceError } from '../core/errors.js';
import { jwsSign } from '../core/jws-crypto.js';
import { NETWORKS, type NetworkName } from '../core/networks.js';
import type { Clock } from '../store/key-value-store.js';
import type { CredentialStatus, StatusReference } from './credential-status.js';
import type { SignedRequest, SignedRequestVerifier } from './signed-requests.js';
import type { ServiceSigningKey, SigningKeys } from './signing-keys.js';

const base64url32 = z
  .string()
  .regex(/^[A-Za-z0-9_-]{43}$/)
  .describe('32 bytes, base64url');

export const credentialRequestSchema = z
  .strictObject({
    audience: z
      .string()
      .min(1)
      .max(MAX_AUDIENCE_LENGTH)
      .regex(/^[\x21-\x7e]+$/, 'visible ASCII, no spaces')
      .describe(
        "The verifier the credential is for, e.g. its origin: used verbatim as the pairwise sub's audience and checked against the KB-JWT's aud",
      ),
    jwk: z
      .strictObject({ kty: z.literal('EC'), crv: z.literal('secp256k1'), x: base64url32, y: base64url32 })
      .optional()
      .describe("secp256k1 agents: the agent's public key, which must hash to its address (the KB-JWT is signed with it, ES256K)"),
  })
  .meta({ id: 'CredentialRequest', description: 'What a signed POST /api/agent/credential asks for' });

export interface IssuedCredential {
  /** The SD-JWT VC: issuer-signed JWT ~ every disclosure ~ (no key binding yet). */
  credential: string;
  vct: string;
  /** The pairwise pseudonym of the human for this audience. */
  sub: string;
  /** Unix seconds. */
  expiresAt: number;
  status: StatusReference;
}

export interface AgentCredentialOptions {
  signedRequests: SignedRequestVerifier;
  status: CredentialStatus;
  signingKeys: SigningKeys;
  chains: ChainGateway;
  publicUrl: string;
  /** The key of the pairwise pseudonyms (derived from the session secret). */
  pseudonymSecret: Uint8Array;
  clock?: Clock;
}

export class AgentCredentialService {
  readonly #options: AgentCredentialOptions;
  readonly #clock: Clock;
  /** One SD-JWT instance per signing key: its signer is bound to the key. */
  readonly #issuers = new Map<string, SDJwtVcInstance>();

  constructor(options: AgentCredentialOptions) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
  }

  async issue(request: SignedRequest, network: NetworkName): Promise<IssuedCredential> {
    const body = parseBody(request.body);
    const agent = await this.#options.signedRequests.verify(request, { network });
    let cnf: AgentCnfJwk;
    if (agent.keyType === 'ed25519') {
      if (body.jwk) throw badRequest('jwk: an Ed25519 agent is bound by its registry key; send no jwk');
      cnf = ed25519CnfJwk(agent.agentKey);
    } else {
      if (!body.jwk) throw badRequest("jwk: a secp256k1 agent sends its public key (EC secp256k1 JWK), which must hash to the agent's address");
      if (secp256k1JwkAddress(body.jwk).toLowerCase() !== agent.agentAddress.toLowerCase()) {
        throw new ServiceError(403, "jwk: this public key is not the signing agent's (its address differs)");
      }
      cnf = body.jwk;
    }
    const { chainId } = NETWORKS[network];
    const registry = this.#options.chains.get(network).contracts.registry;
    const nowS = Math.floor(this.#clock() / 1000);
    const exp = credentialExpiry(nowS, agent.proofExpiresAt);
    const status = await this.#options.status.allocate(
      network,
      agent.agentId,
      { provider: agent.provider, nullifier: agent.nullifier.toString() },
      exp,
    );
    const sub = pairwiseSubject(this.#options.pseudonymSecret, agent.nullifier, body.audience);
    const disclosable = selectiveClaims(agent.credentials);
    const key = await this.#options.signingKeys.current();
    const credential = await this.#issuer(key).issue(
      {
        iss: this.#options.publicUrl,
        // the audience in the signed part: a credential (its pairwise sub) is good at the verifier it was asked for only
        aud: body.audience,
        iat: nowS,
        exp,
        vct: AGENT_CREDENTIAL_VCT,
        sub,
        cnf: { jwk: cnf },
        status: { status_list: status },
        ...agentClaims({
          chainId,
          registry,
          agentId: agent.agentId,
          agentAddress: agent.agentAddress,
          provider: agent.provider,
          strength: agent.strength,
          proofExpiresAt: agent.proofExpiresAt,
          agentCount: agent.agentCount,
          credentials: agent.credentials,
        }),
        ...disclosable,
      },
      { _sd: Object.keys(disclosable) as never[] },
      { header: { kid: key.kid } },
    );
    return { credential, vct: AGENT_CREDENTIAL_VCT, sub, expiresAt: exp, status };
  }

  #issuer(key: ServiceSigningKey): SDJwtVcInstance {
    let issuer = this.#issuers.get(key.kid);
    if (issuer === undefined) {
      issuer = new SDJwtVcInstance({
        signer: (data) => jwsSign(key.alg, key.privateKey, data),
        signAlg: key.alg,
        hasher: digest,
        hashAlg: 'sha-256',
        saltGenerator: generateSalt,
      });
      this.#issuers.set(key.kid, issuer);
    }
    return issuer;
  }
}

function parseBody(text: string | null | undefined): z.infer<typeof credentialRequestSchema> {
  let value: unknown;
  try {
    value = JSON.parse(text || 'null');
  } catch {
    throw badRequest('Invalid request body: expected JSON { audience, jwk? }');
  }
  const parsed = credentialRequestSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw badRequest(`${issue?.path.length ? issue.path.join('.') : 'request body'}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}
