// Sessions of every kind behind one door: a token says which kind of session it is for (its claims name the
// kind), so its status is read from that kind's service without trying one kind after another; new sessions
// are counted against the one per-client session-creation limit, whichever adapter opens them.
import type { SessionType } from '../core/session-types.js';
import type { RateLimiter } from '../services/rate-limits.js';
import type { DeregistrationRequest, DeregistrationService, DeregistrationSession } from './deregistration.js';
import type { IdentifyService } from './identify.js';
import type { RefreshService } from './refresh.js';
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
  async open(opening: SessionOpening, client: string): Promise<RegistrationSession | DeregistrationSession> {
    await this.creationLimit.consume(client);
    return opening.kind === 'register' ? this.kinds.register.start(opening.request) : this.kinds.deregister.start(opening.request);
  }
}
