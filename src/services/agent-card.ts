// The per-agent card: an A2A v0.3.0 AgentCard built from the agent's own on-chain metadata (the JSON string its
// owner sets with updateAgentMetadata), plus an ERC-8004 `registrations` entry and the proof-of-human block that
// the service fills from the registry. Owner-set fields are taken only where they have the AgentCard types, so the
// card always validates against the A2A schema; anything missing gets a default, and an agent that never set
// metadata (or set something that is not a JSON object) still gets a card named "Agent #<id>".
//
// The card is signed (card-signer.ts) over its A2A v1.0 fields only, so what a reader must be able to trust is
// there too: the proof-of-human block as the params of the registry's extension in capabilities.extensions (the
// authoritative copy; the top-level `proofOfHuman` stays for readers written before the signature), and the card's
// endpoints as v1.0 `supportedInterfaces` beside v0.3's url and additionalInterfaces, as the SDK's own v0.3 cards
// carry them.

import type { Address } from 'viem';
import { z } from 'zod';
import type { InterfaceCredentials } from '../core/credentials.js';
import { isProofOfHumanExtensionUri } from '../core/endpoints.js';
import type { NetworkName } from '../core/networks.js';
import type { StrengthLabel } from '../core/proof-type.js';
import type { CardSignature } from './card-signer.js';

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

/** The registry's extension: the proof-of-human block as its params. */
export interface ProofOfHumanExtension {
  uri: string;
  description: string;
  required: false;
  params: ProofOfHumanBlock;
}

type Extension = z.infer<typeof extensionSchema>;

/** A v1.0 AgentInterface: what the signature covers of an endpoint. */
export interface SupportedInterface {
  url: string;
  protocolBinding: string;
  protocolVersion: string;
}

/** A type alias, not an interface: the card is an open object (A2A allows extra properties). */
export type AgentCard = {
  protocolVersion: string;
  name: string;
  description: string;
  url: string;
  version: string;
  capabilities: Omit<NonNullable<OwnerFields['capabilities']>, 'extensions'> & {
    /** The owner's extensions, then the registry's proof-of-human extension. */
    extensions: [...Extension[], ProofOfHumanExtension];
  };
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: z.infer<typeof skillSchema>[];
  iconUrl?: string;
  documentationUrl?: string;
  preferredTransport?: string;
  provider?: { organization: string; url: string };
  additionalInterfaces?: { url: string; transport: string }[];
  image?: string;
  /** url, then additionalInterfaces, as A2A v1.0 interfaces: signed, where v0.3's fields are not. */
  supportedInterfaces: SupportedInterface[];
  /** ERC-8004: where the agent is registered (CAIP-10 style registry id). */
  registrations: { agentId: number; agentRegistry: string }[];
  /** The extension's params, unsigned, for readers written before the signature. */
  proofOfHuman: ProofOfHumanBlock;
  /** Empty until the card is signed. */
  signatures: CardSignature[];
};

export interface CardInput {
  metadata: string;
  proofOfHuman: ProofOfHumanBlock;
  /** The registry service's A2A endpoint: the card's url when the owner declared none. */
  serviceA2aUrl: string;
  networkLabel: string;
  /** The URI of the registry's proof-of-human extension (core/endpoints.ts). */
  extensionUri: string;
}

const DEFAULT_MODES = ['application/json', 'text/plain'];
/** A v0.3 card's transport when it names none (preferredTransport's default). */
const DEFAULT_TRANSPORT = 'JSONRPC';
/** The protocol version of the interfaces of a v0.3 card, as v1.0 names it. */
const INTERFACE_PROTOCOL_VERSION = '0.3';

export const PROOF_OF_HUMAN_EXTENSION_DESCRIPTION =
  "The registry's proof-of-human claims about this agent and its human, read from the chain: signed with the card";

/** The card, unsigned (no signatures yet). */
export function buildAgentCard({ metadata, proofOfHuman, serviceA2aUrl, networkLabel, extensionUri }: CardInput): AgentCard {
  const owner = ownerCardFields(metadata);
  const { agentId, chainId, registry } = proofOfHuman;
  const url = owner.url ?? serviceA2aUrl;
  const { extensions: ownerExtensions = [], ...capabilities } = owner.capabilities ?? {
    streaming: false,
    pushNotifications: false,
    stateTransitionHistory: false,
  };
  const extension: ProofOfHumanExtension = {
    uri: extensionUri,
    description: PROOF_OF_HUMAN_EXTENSION_DESCRIPTION,
    required: false,
    params: proofOfHuman,
  };
  return {
    protocolVersion: A2A_PROTOCOL_VERSION,
    name: owner.name ?? `Agent #${agentId}`,
    description:
      owner.description ??
      `AI agent #${agentId} in the agent identity registry on ${networkLabel} (chain ${chainId}); its proof-of-human extension names the human behind it.`,
    url,
    version: owner.version ?? '1.0.0',
    // an owner cannot declare a proof-of-human extension: only the registry's own is signed as such
    capabilities: { ...capabilities, extensions: [...ownerExtensions.filter((e) => !isProofOfHumanExtensionUri(e.uri)), extension] },
    defaultInputModes: owner.defaultInputModes ?? DEFAULT_MODES,
    defaultOutputModes: owner.defaultOutputModes ?? DEFAULT_MODES,
    skills: owner.skills ?? [],
    ...(owner.iconUrl !== undefined ? { iconUrl: owner.iconUrl } : {}),
    ...(owner.documentationUrl !== undefined ? { documentationUrl: owner.documentationUrl } : {}),
    ...(owner.preferredTransport !== undefined ? { preferredTransport: owner.preferredTransport } : {}),
    ...(owner.provider !== undefined ? { provider: owner.provider } : {}),
    ...(owner.additionalInterfaces !== undefined ? { additionalInterfaces: owner.additionalInterfaces } : {}),
    ...(owner.image !== undefined ? { image: owner.image } : {}),
    supportedInterfaces: [
      { url, protocolBinding: owner.preferredTransport ?? DEFAULT_TRANSPORT, protocolVersion: INTERFACE_PROTOCOL_VERSION },
      ...(owner.additionalInterfaces ?? []).map((i) => ({ url: i.url, protocolBinding: i.transport, protocolVersion: INTERFACE_PROTOCOL_VERSION })),
    ],
    registrations: [{ agentId, agentRegistry: `eip155:${chainId}:${registry}` }],
    proofOfHuman,
    signatures: [],
  };
}
