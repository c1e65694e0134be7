// requireAgent(): verifyAgentRequest as an Express middleware, for services that accept only agents backed by a
// human. It hands the verifier a WHATWG Request made of the express request (its URL from req.protocol and req.host,
// which honour the app's `trust proxy`, its headers and its raw body), sends a refusal back as the verifier made it,
// and puts the verified agent on the request as `req.agent`.
//
// A signature (or a presented credential's nonce) covers the exact body text: mount a text parser before it
// (express.text({ type: '*/*' })), or keep the raw text as `req.rawBody` in express.json's `verify` hook.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { type AgentVerifierOptions, createAgentVerifier, type VerifiedRequestAgent } from './agent-verifier.js';

/** requireAgent's options: the verifier's (chain, credentials, cache, replay guard, authorities, policy, quotas). */
export type RequireAgentOptions = AgentVerifierOptions;

declare module 'express-serve-static-core' {
  interface Request {
    /** The agent that signed this request, or presented its credential with it (set by requireAgent). */
    agent?: VerifiedRequestAgent;
    /** The raw body text, when an app keeps it (for signature checks after a JSON parser). */
    rawBody?: string;
  }
}

function rawBodyOf(req: Request): string | undefined {
  if (req.rawBody !== undefined) return req.rawBody;
  if (typeof req.body === 'string') return req.body;
  if (Buffer.isBuffer(req.body)) return req.body.toString('utf8');
  if (req.body === undefined || (typeof req.body === 'object' && req.body !== null && Object.keys(req.body).length === 0)) return '';
  return undefined; // parsed already: the signed text is gone
}

/** The request as the verifier reads it: the URL the client sent it to, its header lines, its raw body. */
function webRequest(req: Request, body: string): globalThis.Request {
  // an absolute-form request target names its own authority; the usual origin-form takes the Host's
  const url = URL.canParse(req.originalUrl) ? req.originalUrl : `${req.protocol}://${req.host}${req.originalUrl}`;
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    for (const line of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, line);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(url, { method: req.method, headers, ...(hasBody ? { body } : {}) });
}

async function send(res: Response, answer: globalThis.Response): Promise<void> {
  res.status(answer.status);
  answer.headers.forEach((value, name) => {
    res.setHeader(name, value);
  });
  res.send(Buffer.from(await answer.arrayBuffer()));
}

export function requireAgent(options: RequireAgentOptions): RequestHandler {
  const verify = createAgentVerifier(options);
  return (req: Request, res: Response, next: NextFunction) => {
    const body = rawBodyOf(req);
    if (body === undefined) {
      res.status(500).json({ error: 'requireAgent needs the raw body: mount express.text() before it, or keep req.rawBody' });
      return;
    }
    if (!req.host) {
      res.status(400).json({ error: 'The request has no Host header: a signed request names the host it was sent to' });
      return;
    }
    let request: globalThis.Request;
    try {
      request = webRequest(req, body);
    } catch (error) {
      res.status(400).json({ error: `The request cannot be checked: ${error instanceof Error ? error.message : String(error)}` });
      return;
    }
    verify(request)
      .then(async (verification) => {
        if (!verification.ok) return send(res, verification.response);
        req.agent = verification.agent;
        next();
      })
      .catch(next);
  };
}
