// The per-agent card: whatever the owner put on chain, the card validates against the A2A v0.3.0 AgentCard
// definition, keeps the owner's well-typed fields and fills defaults for the rest; the proof-of-human block is the
// params of the registry's extension (what the signature covers), and the endpoints are repeated as v1.0 interfaces.
import type { ValidateFunction } from 'ajv';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildAgentCard, ownerCardFields, PROOF_OF_HUMAN_EXTENSION_DESCRIPTION, type ProofOfHumanBlock } from '../../src/services/agent-card.js';
import { A2A_SCHEMA, a2aCardValidator } from '../support/queries.js';
import { hasSharedFile, unlessShared } from '../support/shared.js';

const proofOfHuman: ProofOfHumanBlock = {
  agentId: 7,
  registry: '0x1111111111111111111111111111111111111111',
  chainId: 11142220,
  network: 'testnet',
  agentAddress: '0x2222222222222222222222222222222222222222',
  isVerified: true,
  proofProvider: '0x3333333333333333333333333333333333333333',
  providerName: 'self',
  verificationStrength: 100,
  strengthLabel: 'passport',
  proofExpiresAt: 1_900_000_000,
  credentials: { nationality: 'GBR', olderThan: 18, ofac: [true, true, true] },
};

const EXTENSION_URI = 'https://registry.example/extensions/proof-of-human/v1';
const extension = { uri: EXTENSION_URI, description: PROOF_OF_HUMAN_EXTENSION_DESCRIPTION, required: false, params: proofOfHuman };

const card = (metadata: string) =>
  buildAgentCard({
    metadata,
    proofOfHuman,
    serviceA2aUrl: 'https://registry.example/api/a2a',
    networkLabel: 'Celo Sepolia',
    extensionUri: EXTENSION_URI,
  });

describe.skipIf(!hasSharedFile(A2A_SCHEMA))(unlessShared(A2A_SCHEMA, 'agent card'), () => {
  let validate: ValidateFunction;
  beforeAll(() => {
    validate = a2aCardValidator();
  });

  const expectValid = (value: unknown) => {
    const valid = validate(value);
    expect(valid ? [] : validate.errors).toEqual([]);
  };

  it('an agent without metadata gets a valid card named after its id, served by the registry', () => {
    const result = card('');
    expectValid(result);
    expect(result).toMatchObject({
      protocolVersion: '0.3.0',
      name: 'Agent #7',
      url: 'https://registry.example/api/a2a',
      version: '1.0.0',
      skills: [],
      registrations: [{ agentId: 7, agentRegistry: 'eip155:11142220:0x1111111111111111111111111111111111111111' }],
      proofOfHuman,
      signatures: [],
    });
    expect(result.capabilities).toEqual({ streaming: false, pushNotifications: false, stateTransitionHistory: false, extensions: [extension] });
    expect(result.supportedInterfaces).toEqual([{ url: 'https://registry.example/api/a2a', protocolBinding: 'JSONRPC', protocolVersion: '0.3' }]);
  });

  it("adds the registry's extension after the owner's, drops any proof-of-human extension the owner declares, and lists every endpoint as a v1.0 interface", () => {
    const owned = { uri: 'https://weather.example/ext/units', required: true, params: { units: 'metric' } };
    const metadata = {
      url: 'https://weather.example/a2a',
      preferredTransport: 'GRPC',
      additionalInterfaces: [{ url: 'https://weather.example/jsonrpc', transport: 'JSONRPC' }],
      capabilities: {
        streaming: true,
        extensions: [
          owned,
          { uri: EXTENSION_URI, params: { isVerified: true } },
          { uri: 'https://other-registry.example/extensions/proof-of-human/v1/', params: { isVerified: true } },
        ],
      },
    };
    const result = card(JSON.stringify(metadata));
    expectValid(result);
    expect(result.capabilities).toEqual({ streaming: true, extensions: [owned, extension] });
    expect(result.supportedInterfaces).toEqual([
      { url: 'https://weather.example/a2a', protocolBinding: 'GRPC', protocolVersion: '0.3' },
      { url: 'https://weather.example/jsonrpc', protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ]);
  });

  it("keeps the owner's A2A fields", () => {
    const metadata = {
      name: 'Weather bot',
      description: 'Forecasts',
      url: 'https://weather.example/a2a',
      version: '2.1.0',
      provider: { organization: 'Weather Inc', url: 'https://weather.example' },
      capabilities: { streaming: true },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['application/json'],
      skills: [{ id: 'forecast', name: 'Forecast', description: 'Tomorrow', tags: ['weather'] }],
      iconUrl: 'https://weather.example/icon.png',
      image: 'https://weather.example/logo.png',
    };
    const result = card(JSON.stringify(metadata));
    expectValid(result);
    expect(result).toMatchObject({ ...metadata, protocolVersion: '0.3.0', proofOfHuman });
  });

  it('leaves out owner fields of the wrong type, skill by skill, and never lets the owner fake the proof block', () => {
    const metadata = {
      name: 42,
      url: ['no'],
      provider: { name: 'missing organization' },
      capabilities: 'all',
      skills: [{ id: 'ok', name: 'Ok', description: 'fine', tags: [] }, { id: 'bad' }, 'junk'],
      proofOfHuman: { isVerified: true, verificationStrength: 100 },
      protocolVersion: '9.9',
    };
    const result = card(JSON.stringify(metadata));
    expectValid(result);
    expect(result.name).toBe('Agent #7');
    expect(result.url).toBe('https://registry.example/api/a2a');
    expect(result).not.toHaveProperty('provider');
    expect(result.skills).toEqual([{ id: 'ok', name: 'Ok', description: 'fine', tags: [] }]);
    expect(result.proofOfHuman).toEqual(proofOfHuman);
    expect(result.protocolVersion).toBe('0.3.0');
  });

  it('treats metadata that is not a JSON object as none', () => {
    for (const metadata of ['not json', '[1,2]', 'null', '"text"', '   ']) {
      expect(ownerCardFields(metadata)).toEqual({});
      expectValid(card(metadata));
    }
  });
});
