// Sessions of every kind behind one door: a token says which kind of session it is for (its claims name the
// kind), so its status is read from that kind's service without trying one kind after another; new sessions
// are counted against the one per-client session-creation limit, whichever adapter opens them.
import type { SessionType } from '../core/session-types.js';
import type { RateLimiter } from '../services/rate-limits.js';
import type { DeregistrationRequest, DeregistrationService, DeregistrationSession } from './deregistration.js';
import type { IdentifyRequest, IdentifyService, IdentifySession } from './identify.js';
import type { RefreshRequest, RefreshService, RefreshSession } from './refresh.js';
import type { RegistrationRequest, RegistrationService, RegistrationSession } from './registration.js';
import { READING_SCOPES, type SessionTokens } from './session-token.js';

/** The service of each kind of session. */
export interface SessionKinds {
  register: RegistrationService;
  deregister: DeregistrationService;
  refresh: RefreshService;
  identify: IdentifyService;
}

export type SessionStatusOf<K extends SessionType> = Awaited<ReturnType<SessionKinds[K]['status']>>;
export type AnySessionStatus = SessionStatusOf<SessionType>;

/** A session an agent may open by message: its kind and the request of that kind. */
export type SessionOpening = { kind: 'register'; request: RegistrationRequest } | { kind: 'deregister'; request: DeregistrationRequest };
/** Any kind of session, with the request of that kind (MCP tools open all four). */
export type AnySessionOpening = SessionOpening | { kind: 'refresh'; request: RefreshRequest } | { kind: 'identify'; request: IdentifyRequest };

/** The answer that opens a session of each kind. */
export interface OpenedSessions {
  register: RegistrationSession;
  deregister: DeregistrationSession;
  refresh: RefreshSession;
  identify: IdentifySession;
}

export class Sessions {
  constructor(
    private readonly tokens: SessionTokens,
    readonly kinds: SessionKinds,
    /** Session creations per client: the same limiter the REST routes count with. */
    readonly creationLimit: RateLimiter,
  ) {}

  /** The kind of session `token` is for (401 altered or neither a session nor a watch token, 410 expired). */
  async kindOf(token: string): Promise<SessionType> {
    const claims = await this.tokens.open(token, { type: Object.keys(this.kinds) as SessionType[], scope: READING_SCOPES });
    return claims.type;
  }

  /** The status answer of the token's own kind of session, as its REST status endpoint gives it. */
  async status(token: string): Promise<AnySessionStatus> {
    return this.kinds[await this.kindOf(token)].status(token);
  }

  /** Opens the session `opening` asks for, for `client` (a rate-limit client key), counted against the session-creation limit. */
  async open<O extends AnySessionOpening>(opening: O, client: string): Promise<OpenedSessions[O['kind']]> {
    await this.creationLimit.consume(client);
    const opened = (o: AnySessionOpening): Promise<OpenedSessions[SessionType]> => {
      switch (o.kind) {
        case 'register':
          return this.kinds.register.start(o.request);
        case 'deregister':
          return this.kinds.deregister.start(o.request);
        case 'refresh':
          return this.kinds.refresh.start(o.request);
        case 'identify':
          return this.kinds.identify.start(o.request);
      }
    };
    return opened(opening) as Promise<OpenedSessions[O['kind']]>;
  }
}
