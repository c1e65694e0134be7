// An Ed25519 agent's Web Bot Auth key directory: GET serves its key as a JWKS with the registry's proof-of-human
// claims (and the agent's published signature of it, as the draft asks); POST publishes that signature.

import { z } from 'zod';
import { ServiceError } from '../../core/errors.js';
import { KEY_DIRECTORY_MEDIA_TYPE, KEY_DIRECTORY_TEMPLATE, keyDirectoryUrl } from '../../core/key-directory.js';
import { NETWORKS } from '../../core/networks.js';
import type { Services } from '../../services/index.js';
import type { Route } from '../route.js';
import { keyDirectoryPublishedSchema, keyDirectorySchema, keyDirectorySignatureSchema } from '../schemas/key-directory.js';
import { agentParamsSchema } from '../schemas/queries.js';
import { documented, parseWith } from '../validation.js';

const TAGS = ['Public queries'];
const noDirectory = { description: 'The agent is not registered, or it has a secp256k1 key (no directory)' };

export function keyDirectoryRoutes(services: Pick<Services, 'keyDirectories' | 'signedRequests'>): Route[] {
  return [
    {
      method: 'get',
      path: KEY_DIRECTORY_TEMPLATE,
      summary: "An Ed25519 agent's HTTP Message Signatures key directory, with its proof of human",
      description:
        'The Signature-Agent of the agent’s Web Bot Auth requests. Signed (Signature, Signature-Input) when the agent has ' +
        'published a signature of it for this host (POST); the keys are the registered ones whatever the signature.',
      tags: TAGS,
      cache: 'agent',
      // the signed group: a page reads the directory's Signature fields, and may publish a signature (POST)
      cors: 'signed',
      params: agentParamsSchema,
      responses: {
        200: {
          description: 'The directory',
          schema: keyDirectorySchema,
          contentType: KEY_DIRECTORY_MEDIA_TYPE,
          headers: {
            'Signature-Input': { description: 'The agent’s published directory signature’s parameters, when there is one', schema: z.string() },
            Signature: { description: 'The agent’s published directory signature, when there is one', schema: z.string() },
          },
        },
        400: { description: 'Unsupported chainId, or a malformed parameter; the message names it' },
        404: noDirectory,
        500: { description: 'The chain RPC failed' },
      },
      handler: async (req, res) => {
        const { chainId: network, agentId } = parseWith(agentParamsSchema, req.params, 'path');
        const { document, signature } = await services.keyDirectories.directory(network, BigInt(agentId), req.headers.host ?? '');
        if (signature) res.setHeader('Signature-Input', signature.signatureInput).setHeader('Signature', signature.signature);
        res.type(KEY_DIRECTORY_MEDIA_TYPE).json(documented(keyDirectorySchema, document));
      },
    },
    {
      method: 'post',
      path: KEY_DIRECTORY_TEMPLATE,
      summary: "Publish the agent's signature of its key directory at this host",
      description:
        'The signature itself is the authorization: it must verify with the agent’s registered key over the Host this is ' +
        'sent to. A later signature replaces an earlier one.',
      tags: TAGS,
      cors: 'signed',
      params: agentParamsSchema,
      body: keyDirectorySignatureSchema,
      bodyLimit: 8 * 1024,
      responses: {
        200: { description: 'Published', schema: keyDirectoryPublishedSchema },
        400: { description: 'A malformed parameter or body; the message names it' },
        403: { description: 'The signature does not verify, or names another host, key, tag or lifetime: the message says which' },
        404: noDirectory,
        409: { description: 'A signature with a later created time is published already' },
        500: { description: 'The chain RPC failed' },
      },
      handler: async (req, res) => {
        const { chainId: network, agentId } = parseWith(agentParamsSchema, req.params, 'path');
        const signature = parseWith(keyDirectorySignatureSchema, req.body, 'body');
        const host = req.headers.host ?? '';
        if (!services.signedRequests.acceptsAuthority(host)) {
          throw new ServiceError(
            403,
            `A directory signature for ${host || 'no host'} would never be served: ${services.signedRequests.authorityRule()}`,
          );
        }
        const { expires } = await services.keyDirectories.publish(network, BigInt(agentId), host, signature);
        res.json(
          documented(keyDirectoryPublishedSchema, {
            published: true,
            expires,
            directory: keyDirectoryUrl(`${req.protocol}://${host}`, NETWORKS[network].chainId, BigInt(agentId)),
          }),
        );
      },
    },
  ];
}
