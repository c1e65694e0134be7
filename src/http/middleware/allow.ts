// What a request gets when its method is not one the path has. Never stored (Cache-Control: no-store).
// - otherMethods(): mounted on each path of the table after its routes (app.route(path).all), so express matches the
//   path: OPTIONS is a CORS preflight where CORS applies, else 204 with the path's Allow header (express's router
//   would answer OPTIONS itself, in text); any other method the path lacks (TRACE, PUT, DELETE, CONNECT...) is 405
//   with Allow, before any body is read. A method the path has reaches it only when the path's route passed the
//   request on: that goes on, to the 404.
// - serverWide: a request target that is not a path (OPTIONS *) is about the server as a whole.
// Methods Node's parser does not know never get here (server-edges.ts: 501).
import type { RequestHandler } from 'express';
import { CACHE_POLICIES, type CorsGroup, SERVER_METHODS } from '../route.js';
import { answerPreflight, exposeTo } from './cors.js';

/** The path of a request target, without its query (req.path is relative to the router the path is mounted on). */
const pathOf = (url: string): string => {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
};

/** The answer of a path with Allow header `allow` and CORS group `group` to the methods its routes do not have. */
export function otherMethods(allow: string, group: CorsGroup | undefined): RequestHandler {
  const allowed = new Set(allow.split(', '));
  return (req, res, next) => {
    const { method } = req;
    if (group !== undefined) {
      if (method === 'OPTIONS') {
        answerPreflight(res, group, allow);
        return;
      }
      exposeTo(res, group);
    }
    if (method !== 'OPTIONS' && allowed.has(method)) {
      next();
      return;
    }
    res.setHeader('Cache-Control', CACHE_POLICIES.none);
    res.setHeader('Allow', allow);
    if (method === 'OPTIONS') res.status(204).end();
    else res.status(405).json({ error: `Method ${method} is not allowed on ${pathOf(req.originalUrl)}: use ${allow}` });
  };
}

const SERVER_ALLOW = SERVER_METHODS.join(', ');

export const serverWide: RequestHandler = (req, res, next) => {
  const { method } = req;
  if (req.originalUrl.startsWith('/') || (method !== 'OPTIONS' && (SERVER_METHODS as readonly string[]).includes(method))) {
    next();
    return;
  }
  res.setHeader('Cache-Control', CACHE_POLICIES.none);
  res.setHeader('Allow', SERVER_ALLOW);
  if (method === 'OPTIONS') res.status(204).end();
  else
    res
      .status(405)
      .json({ error: `Method ${method} is not allowed on this server (${method} ${req.originalUrl.slice(0, 100)}): use ${SERVER_ALLOW}` });
};
