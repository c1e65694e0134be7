// GET /openapi.json and the interactive docs page GET /docs.
//
// The page is Swagger UI from the swagger-ui-dist package (pinned), the official build of Swagger UI,
// released often by its maintainers. Everything the page loads comes from this service: the package's
// script, style and icons under /docs/assets/, and a small initializer script of our own (no inline
// script, so the CSP can say script-src 'self'). Nothing is fetched from a CDN, so the page works offline
// and on machines without internet access; the online spec validator badge is switched off. Cache-Control
// of all three comes from their entries in the route table.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { OpenApiDocument } from '../openapi/document.js';
import { keepResponse, UNCHANGING } from '../response-cache.js';
import type { Route } from '../route.js';

const HTML = 'text/html; charset=utf-8';
const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The package files the page uses; nothing else of the package is served. */
const ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'swagger-ui.css',
  'swagger-ui-bundle.js': 'swagger-ui-bundle.js',
  'favicon-32x32.png': 'favicon-32x32.png',
  'favicon-16x16.png': 'favicon-16x16.png',
};

export const DOCS_ASSETS_PATH = '/docs/assets';

const INIT_SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;

const escapeHtml = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const page = (title: string): string => `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>${escapeHtml(title)}</title>
    <link rel="stylesheet" href="${DOCS_ASSETS_PATH}/swagger-ui.css">
    <link rel="icon" type="image/png" href="${DOCS_ASSETS_PATH}/favicon-32x32.png" sizes="32x32">
    <link rel="icon" type="image/png" href="${DOCS_ASSETS_PATH}/favicon-16x16.png" sizes="16x16">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${DOCS_ASSETS_PATH}/swagger-ui-bundle.js"></script>
    <script src="${DOCS_ASSETS_PATH}/init.js"></script>
  </body>
</html>
`;

export const openApiDocumentSchema = z.record(z.string(), z.unknown()).meta({ id: 'OpenApiDocument', description: 'This document (OpenAPI 3.1)' });

/** The OpenAPI document, the docs page and its assets; `document` is read when first served (it describes these routes too). */
export function docsRoutes(document: () => OpenApiDocument): Route[] {
  let json: string | undefined;
  // the page is made once, as bytes with their ETag: express then neither hashes nor encodes it per request
  let html: { bytes: Buffer; etag: string } | undefined;
  return [
    {
      method: 'get',
      path: '/openapi.json',
      summary: 'The OpenAPI 3.1 document of this service',
      description: 'Generated from the schemas the routes validate with.',
      tags: ['Service'],
      cache: 'discovery',
      cors: 'public',
      responses: { 200: { description: 'The document', schema: openApiDocumentSchema } },
      handler: (_req, res) => {
        json ??= JSON.stringify(document());
        keepResponse(res, UNCHANGING);
        res.type('application/json').send(json);
      },
    },
    {
      method: 'get',
      path: '/docs',
      summary: 'Interactive API documentation (Swagger UI)',
      tags: ['Service'],
      cache: 'revalidate',
      responses: { 200: { description: 'The page', contentType: 'text/html' } },
      handler: (_req, res) => {
        if (html === undefined) {
          const bytes = Buffer.from(page(`${document().info.title} API`));
          html = { bytes, etag: `"${createHash('sha256').update(bytes).digest('base64url')}"` };
        }
        res.setHeader('ETag', html.etag);
        res.setHeader('Content-Type', HTML);
        res.send(html.bytes);
      },
    },
    {
      method: 'get',
      path: `${DOCS_ASSETS_PATH}/{file}`,
      summary: 'A file of the docs page',
      tags: ['Service'],
      cache: 'static',
      undocumented: true,
      responses: {},
      handler: (req, res, next) => {
        const file = String(req.params['file']);
        if (file === 'init.js') {
          res.type('application/javascript').send(INIT_SCRIPT);
          return;
        }
        const asset = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
        if (!asset) {
          res.status(404).json({ error: `No docs asset ${file}` });
          return;
        }
        res.sendFile(join(SWAGGER_UI_DIR, asset), { cacheControl: false, dotfiles: 'deny' }, (error) => {
          if (error) next(error);
        });
      },
    },
  ];
}

/** Routes of the docs page that are part of the page, not of the API (the OpenAPI coverage test skips them). */
export const DOCS_ASSET_ROUTES = [`${DOCS_ASSETS_PATH}/:file`];
