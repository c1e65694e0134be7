// What an agent (or its developer) reads first: /llms.txt, /llms-full.txt, and the index of every operation at the
// agent API's base. All three are made from the route table when first asked for, and never change afterwards.
import { llmsFullTxt, llmsTxt, type OnboardingFacts } from '../llms-txt.js';
import type { OpenApiDocument } from '../openapi/document.js';
import { keepResponse, UNCHANGING } from '../response-cache.js';
import type { Route } from '../route.js';
import { apiIndexSchema } from '../schemas/queries.js';
import { API_INDEX_PATH, LLMS_FULL_TXT_PATH, LLMS_TXT_PATH } from '../service-catalogue.js';
import { documented } from '../validation.js';

const TAGS = ['Discovery'];
/** llmstxt.org serves Markdown; text/plain keeps it readable in any browser and tool. */
const TEXT = 'text/plain; charset=utf-8';

export function onboardingRoutes(facts: () => OnboardingFacts, document: () => OpenApiDocument): Route[] {
  let short: string | undefined;
  let full: string | undefined;
  const text = (path: string, summary: string, make: () => string): Route => ({
    method: 'get',
    path,
    summary,
    description: 'Generated from the route table and the OpenAPI document (llmstxt.org format).',
    tags: TAGS,
    cache: 'discovery',
    cors: 'public',
    responses: { 200: { description: 'The text (Markdown)', contentType: 'text/plain' } },
    handler: (_req, res) => {
      keepResponse(res, UNCHANGING);
      res.type(TEXT).send(make());
    },
  });
  return [
    text(LLMS_TXT_PATH, 'Onboarding for agents and their developers: modes, registration, signing, A2A, MCP, errors', () => {
      short ??= llmsTxt(facts());
      return short;
    }),
    text(LLMS_FULL_TXT_PATH, 'llms.txt with every operation and schema in full', () => {
      full ??= llmsFullTxt(facts(), document());
      return full;
    }),
    {
      method: 'get',
      path: API_INDEX_PATH,
      summary: 'Every operation of the service, by group',
      tags: TAGS,
      cache: 'discovery',
      cors: 'public',
      responses: { 200: { description: 'The index', schema: apiIndexSchema } },
      handler: (_req, res) => {
        const { title, endpoints } = facts();
        keepResponse(res, UNCHANGING);
        res.json(documented(apiIndexSchema, { name: title, openapi: endpoints.openapi, groups: endpoints.groups }));
      },
    },
  ];
}
