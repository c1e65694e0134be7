// The service's public signing keys as a JWK Set: what its signed cards and credentials verify against.
import { JWKS_PATH } from '../../core/endpoints.js';
import type { SigningKeys } from '../../services/signing-keys.js';
import type { Route } from '../route.js';
import { jwksSchema } from '../schemas/jwks.js';
import { documented } from '../validation.js';

/** RFC 7517's media type of a JWK Set (jose's remote JWKS asks for it beside application/json). */
export const JWKS_MEDIA_TYPE = 'application/jwk-set+json';

export function jwksRoutes(signingKeys: Pick<SigningKeys, 'jwks'>): Route[] {
  return [
    {
      method: 'get',
      path: JWKS_PATH,
      summary: "The service's public signing keys (JWKS)",
      description:
        'The key that signs now, and each replaced key until everything it signed has expired. Cached for 5 minutes: a ' +
        'verifier that meets a kid it does not hold fetches the set again.',
      tags: ['Discovery'],
      // not in the response cache: a rotation by another instance or the operator's command would not drop it
      cache: 'keys',
      cors: 'public',
      responses: {
        200: { description: 'The key set', schema: jwksSchema, contentType: JWKS_MEDIA_TYPE },
        503: { description: 'The store that keeps the keys does not answer' },
      },
      handler: async (_req, res) => {
        res.type(JWKS_MEDIA_TYPE).json(documented(jwksSchema, await signingKeys.jwks()));
      },
    },
  ];
}
