// Shapes of an Ed25519 agent's key directory: the JWKS the routes serve and the directory signature an agent publishes.
import { z } from 'zod';
import { proofOfHumanSchema } from './queries.js';

export const keyDirectorySchema = z
  .object({
    keys: z
      .array(
        z.object({
          kty: z.literal('OKP'),
          crv: z.literal('Ed25519'),
          x: z.string().describe('The raw public key, base64url'),
          kid: z.string().describe('The RFC 7638 JWK thumbprint: the keyid of the agent’s Web Bot Auth signatures'),
          use: z.literal('sig'),
        }),
      )
      .describe('The agent’s registered key (JWKS, RFC 7517)'),
    purpose: z.string(),
    proofOfHuman: proofOfHumanSchema,
  })
  .meta({
    id: 'KeyDirectory',
    description:
      'An HTTP Message Signatures directory (draft-meunier-webbotauth-httpsig-directory) of one registered Ed25519 agent, ' +
      'with the registry’s proof-of-human claims about it',
  });

const dictionaryText = (what: string) => z.string().min(1).max(2048).describe(what);

export const keyDirectorySignatureSchema = z
  .strictObject({
    signatureInput: dictionaryText(
      'The Signature-Input field: one member covering ("@authority";req) with created, expires (at most 7 days later), ' +
        'keyid (the key’s JWK thumbprint), alg="ed25519" and tag="http-message-signatures-directory"',
    ),
    signature: dictionaryText('The Signature field: the Ed25519 signature under the same label'),
  })
  .meta({
    id: 'KeyDirectorySignature',
    description: 'The agent’s signature of its directory as served at the Host this is sent to (the SDK’s signKeyDirectory makes it)',
  });

export const keyDirectoryPublishedSchema = z.object({
  published: z.literal(true),
  expires: z.number().int().describe('Unix seconds: until then the directory is served with this signature'),
  directory: z.string().describe('The directory URL, for Signature-Agent'),
});
