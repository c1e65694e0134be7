// The per-agent card: an A2A v0.3.0 AgentCard built from the agent's own on-chain metadata (the JSON string its
// owner sets with updateAgentMetadata), plus an ERC-8004 `registrations` entry and a `proofOfHuman` block that
// the service fills from the registry. Owner-set fields are taken only where they have the AgentCard types, so the
// card always validates against the A2A schema; anything missing gets a default, and an agent that never set
// metadata (or set something that is not a JSON object) still gets a card named "Agent #<id>".

import type { Address } from 'viem';
import { z } from 'zod';
import type { InterfaceCredentials } from '../core/credentials.js';
import type { NetworkName } from '../core/networks.js';
import type { StrengthLabel } from '../core/proof-type.js';

export const A2A_PROTOCOL_VERSION = '0.3.0';

const strings = z.array(z.string());

const skillSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  tags: strings,
  examples: strings.optional(),
  inputModes: strings.optional(),
  outputModes: strings.optional(),
});

const extensionSchema = z.object({
  uri: z.string(),
  description: z.string().optional(),
  required: z.boolean().optional(),
  params: z.record(z.string(), z.unknown()).optional(),
});

/** The owner-settable AgentCard fields and their A2A v0.3.0 types. */
const ownerFields = {
  name: z.string().min(1),
  description: z.string(),
  url: z.string().min(1),
  version: z.string().min(1),
  iconUrl: z.string(),
  documentationUrl: z.string(),
  preferredTransport: z.string(),
  provider: z.object({ organization: z.string(), url: z.string() }),
  capabilities: z.object({
    streaming: z.boolean().optional(),
    pushNotifications: z.boolean().optional(),
    stateTransitionHistory: z.boolean().optional(),
    extensions: z.array(extensionSchema).optional(),
  }),
  defaultInputModes: strings,
  defaultOutputModes: strings,
  additionalInterfaces: z.array(z.object({ url: z.string(), transport: z.string() })),
  /** ERC-8004 registration-file field, kept as an extra property. */
  image: z.string(),
} as const;

type OwnerFields = { [K in keyof typeof ownerFields]?: z.infer<(typeof ownerFields)[K]> };

/** The owner's metadata as card fields: each field kept only if it has the right type; skills item by item. */
export function ownerCardFields(metadata: string): OwnerFields & { skills?: z.infer<typeof skillSchema>[] } {
  let parsed: unknown;
  try {
    parsed = metadata.trim() === '' ? undefined : JSON.parse(metadata);
  } catch {
    return {};
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
  const source = parsed as Record<string, unknown>;
  const fields: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(ownerFields)) {
    const result = (schema as z.ZodType).safeParse(source[key]);
    if (source[key] !== undefined && result.success) fields[key] = result.data;
  }
  if (Array.isArray(source['skills'])) {
    fields['skills'] = source['skills'].flatMap((skill) => {
      const result = skillSchema.safeParse(skill);
      return result.success ? [result.data] : [];
    });
  }
  return fields as OwnerFields & { skills?: z.infer<typeof skillSchema>[] };
}

/** The card's proof-of-human block. */
export interface ProofOfHumanBlock {
  agentId: number;
  registry: Address;
  chainId: number;
  network: NetworkName;
  agentAddress: Address;
  /** The agent has a proof that has not expired. */
  isVerified: boolean;
  proofProvider: Address;
  providerName: string;
  verificationStrength: number;
  /** Label of the strength (passport, kyc, govt_id, liveness, unknown), or None without a proof. */
  strengthLabel: StrengthLabel;
  /** Unix seconds; 0 without a proof. */
  proofExpiresAt: number;
  credentials: InterfaceCredentials;
}

/** A type alias, not an interface: the card is an open object (A2A allows extra properties). */
export type AgentCard = {
  protocolVersion: string;
  name: string;
  description: string;
  url: string;
  version: string;
  capabilities: NonNullable<OwnerFields['capabilities']>;
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: z.infer<typeof skillSchema>[];
  iconUrl?: string;
  documentationUrl?: string;
  preferredTransport?: string;
  provider?: { organization: string; url: string };
  additionalInterfaces?: { url: string; transport: string }[];
  image?: string;
  /** ERC-8004: where the agent is registered (CAIP-10 style registry id). */
  registrations: { agentId: number; agentRegistry: string }[];
  proofOfHuman: ProofOfHumanBlock;
};

export interface CardInput {
  metadata: string;
  proofOfHuman: ProofOfHumanBlock;
  /** The registry service's A2A endpoint: the card's url when the owner declared none. */
  serviceA2aUrl: string;
  networkLabel: string;
}

const DEFAULT_MODES = ['application/json', 'text/plain'];

export function buildAgentCard({ metadata, proofOfHuman, serviceA2aUrl, networkLabel }: CardInput): AgentCard {
  const owner = ownerCardFields(metadata);
  const { agentId, chainId, registry } = proofOfHuman;
  return {
    protocolVersion: A2A_PROTOCOL_VERSION,
    name: owner.name ?? `Agent #${agentId}`,
    description:
      owner.description ??
      `AI agent #${agentId} in the agent identity registry on ${networkLabel} (chain ${chainId}); see proofOfHuman for the human behind it.`,
    url: owner.url ?? serviceA2aUrl,
    version: owner.version ?? '1.0.0',
    capabilities: owner.capabilities ?? { streaming: false, pushNotifications: false, stateTransitionHistory: false },
    defaultInputModes: owner.defaultInputModes ?? DEFAULT_MODES,
    defaultOutputModes: owner.defaultOutputModes ?? DEFAULT_MODES,
    skills: owner.skills ?? [],
    ...(owner.iconUrl !== undefined ? { iconUrl: owner.iconUrl } : {}),
    ...(owner.documentationUrl !== undefined ? { documentationUrl: owner.documentationUrl } : {}),
    ...(owner.preferredTransport !== undefined ? { preferredTransport: owner.preferredTransport } : {}),
    ...(owner.provider !== undefined ? { provider: owner.provider } : {}),
    ...(owner.additionalInterfaces !== undefined ? { additionalInterfaces: owner.additionalInterfaces } : {}),
    ...(owner.image !== undefined ? { image: owner.image } : {}),
    registrations: [{ agentId, agentRegistry: `eip155:${chainId}:${registry}` }],
    proofOfHuman,
  };
}
