// The shape of the service's JWKS: its public signing keys, the current one first.
import { z } from 'zod';

const base64url = (what: string) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .describe(what);
const member = {
  kid: z.string().describe('The key id JWS headers name: the RFC 7638 thumbprint, or the kid SIGNING_KEY came with'),
  use: z.literal('sig'),
};

export const serviceJwkSchema = z
  .discriminatedUnion('kty', [
    z.object({
      kty: z.literal('OKP'),
      crv: z.literal('Ed25519'),
      x: base64url('The raw public key'),
      alg: z.literal('EdDSA'),
      ...member,
    }),
    z.object({
      kty: z.literal('EC'),
      crv: z.literal('P-256'),
      x: base64url('The x coordinate'),
      y: base64url('The y coordinate'),
      alg: z.literal('ES256'),
      ...member,
    }),
  ])
  .meta({ id: 'ServiceJwk', description: 'A public signing key of the service (Ed25519 or P-256)' });

export const jwksSchema = z
  .object({
    keys: z.array(serviceJwkSchema).describe('The key that signs now first, then replaced keys until everything they signed has expired'),
  })
  .meta({ id: 'ServiceJwks', description: "The service's public signing keys (JWK Set, RFC 7517)" });
