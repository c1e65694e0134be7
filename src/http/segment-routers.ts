// Where each path of the route table is registered with express. Express tries the routes of a router one after the
// other, so with the whole table on the app a request pays a path match for every route before its own. Instead the
// paths that share a first segment (api, .well-known, docs...) go on one express Router mounted at that segment
// (app.use('/api', router), express's own modular routing), so a request is matched only against the routes of its
// own segment. A path alone in its segment, or whose first segment is a parameter, is routed by the app itself.
// Routers are mounted where their first path comes in the table, so the table's order holds wherever two templates
// can match one path (only a template whose first segment is a parameter could, against a mounted one).
import express, { type Express, type IRoute } from 'express';
import { expressPath } from './route.js';

/** The literal first segment of a template; undefined when it is (or has) a parameter. */
function firstSegment(template: string): string | undefined {
  const end = template.indexOf('/', 1);
  const segment = end < 0 ? template.slice(1) : template.slice(1, end);
  return segment === '' || segment.includes('{') ? undefined : segment;
}

/** For each template of `templates` in turn: its express route, on the router of its first segment or on the app. */
export function segmentRoutes(app: Express, templates: readonly string[]): (template: string) => IRoute {
  const paths = new Map<string, number>();
  for (const template of new Set(templates)) {
    const segment = firstSegment(template);
    if (segment !== undefined) paths.set(segment, (paths.get(segment) ?? 0) + 1);
  }
  const routers = new Map<string, express.Router>();
  return (template) => {
    const segment = firstSegment(template);
    if (segment === undefined || (paths.get(segment) ?? 0) < 2) return app.route(expressPath(template));
    let router = routers.get(segment);
    if (router === undefined) {
      router = express.Router();
      routers.set(segment, router);
      app.use(`/${segment}`, router);
    }
    return router.route(expressPath(template.slice(segment.length + 1)) || '/');
  };
}
