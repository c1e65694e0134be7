// The human-backed-agent credential: a signed POST issues it; the status lists that revoke it are public GETs.

import { CREDENTIAL_PATH, STATUS_LIST_PATH } from '../../core/endpoints.js';
import { notFound } from '../../core/errors.js';
import { credentialRequestSchema } from '../../services/agent-credentials.js';
import { STATUS_LIST_MAX_AGE_S, STATUS_LIST_MEDIA_TYPE } from '../../services/credential-status.js';
import type { Services } from '../../services/index.js';
import type { Route } from '../route.js';
import { issuedCredentialSchema, statusListParamsSchema } from '../schemas/credentials.js';
import { demoQuerySchema } from '../schemas/demo.js';
import { signatureErrors, signedRequestOf } from '../signed-route.js';
import { documented, parseWith } from '../validation.js';

export function credentialRoutes(services: Pick<Services, 'credentials' | 'credentialStatus'>): Route[] {
  return [
    {
      method: 'post',
      path: CREDENTIAL_PATH,
      summary: 'Issue a human-backed-agent credential (SD-JWT VC) to the signing agent, for one verifier',
      description:
        'Signed with either scheme. The credential lasts at most 15 minutes (never past the proof), is signed with the key of ' +
        "the JWKS, bound to the agent's key (cnf.jwk) and carries a pairwise sub: the same for all of one human's agents at one " +
        'audience, unrelated across audiences. Age thresholds, OFAC and nationality are selectively disclosable.',
      tags: ['Credentials'],
      query: demoQuerySchema,
      signedRequest: 'required',
      cors: 'signed',
      textBody: true,
      body: credentialRequestSchema,
      responses: {
        200: { description: 'The credential', schema: issuedCredentialSchema },
        ...signatureErrors,
        400: { description: 'A malformed body (audience, jwk) or an unsupported network, or a malformed signature' },
        403: {
          description: "The signature or the agent check failed (unregistered, expired or foreign-provider agent), or the jwk is not the agent's",
        },
      },
      handler: async (req, res) => {
        const { network } = parseWith(demoQuerySchema, req.query, 'query');
        res.json(documented(issuedCredentialSchema, await services.credentials.issue(signedRequestOf(req), network)));
      },
    },
    {
      method: 'get',
      path: STATUS_LIST_PATH,
      summary: 'A token status list of credentials (draft-ietf-oauth-status-list): bit 1 = revoked',
      description: `A JWT (typ statuslist+jwt) signed with a key of the JWKS; cached for ${STATUS_LIST_MAX_AGE_S} s.`,
      tags: ['Credentials'],
      params: statusListParamsSchema,
      cache: 'status',
      cors: 'public',
      responses: {
        200: { description: 'The status list token', contentType: STATUS_LIST_MEDIA_TYPE },
        400: { description: 'A list number that is not a decimal' },
        404: { description: 'No credential was given an entry in this list yet' },
      },
      handler: async (req, res) => {
        const { listId } = parseWith(statusListParamsSchema, req.params, 'path');
        const token = await services.credentialStatus.token(listId);
        if (token === undefined) throw notFound(`No status list ${listId} here yet`);
        res.type(STATUS_LIST_MEDIA_TYPE).send(token);
      },
    },
  ];
}
