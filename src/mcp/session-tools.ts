// The tools that open a session (register, deregister, refresh, identify) and the one that reads any session
// (registration_status). A session tool opens the session as its REST endpoint does (counted against the same
// per-client session-creation limit), then, when the caller gave a progressToken, follows it with the session watcher
// (the one mechanism the A2A tasks follow sessions with) and reports each stage as MCP progress, the first report
// carrying the scan page, the deep link and the session token. It answers when the session ends, or when the wait
// limit passes (or the instance stops): with the session as it stands, which registration_status continues.
import { randomUUID } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { z } from 'zod';
import { FINAL_STAGES, SESSION_TYPES, type SessionStage, type SessionType } from '../core/session-types.js';
import { registerRequestSchema, registrationSessionSchema, registrationStatusSchema } from '../http/schemas/registration.js';
import {
  deregisterRequestSchema,
  deregistrationSessionSchema,
  deregistrationStatusSchema,
  identifyRequestSchema,
  identifySessionSchema,
  identifyStatusSchema,
  refreshRequestSchema,
  refreshSessionSchema,
  refreshStatusSchema,
} from '../http/schemas/sessions.js';
import type { Services } from '../services/index.js';
import type { Watch, WatchEnd } from '../sessions/session-watch.js';
import type { AnySessionOpening, AnySessionStatus } from '../sessions/sessions.js';
import { currentCaller } from './caller.js';
import type { SessionToolName } from './tool-catalog.js';
import { OPENS_SESSION, READ_ONLY, registerTool, type ToolCall } from './tool-registration.js';
import { answer, structured } from './tool-results.js';

/** How long a session tool follows its session by default: within the 60 s a client waits for an answer by default. */
export const DEFAULT_TOOL_WAIT_MS = 45_000;

export interface SessionToolOptions {
  services: Services;
  logger: Logger;
  /** How long a tool follows its session before answering with where it stands. */
  waitMs: number;
  /** Aborted when the instance stops: tools that follow a session answer at once. */
  stopping: AbortSignal;
}

/** Each kind's REST schemas: the request that opens it, the answer that opens it, its status answer. */
const SCHEMAS = {
  register: { request: registerRequestSchema, session: registrationSessionSchema, status: registrationStatusSchema },
  deregister: { request: deregisterRequestSchema, session: deregistrationSessionSchema, status: deregistrationStatusSchema },
  refresh: { request: refreshRequestSchema, session: refreshSessionSchema, status: refreshStatusSchema },
  identify: { request: identifyRequestSchema, session: identifySessionSchema, status: identifyStatusSchema },
} as const;

/** The output of registration_status: the session's kind, and its status as that kind's REST status endpoint answers. */
export const sessionStatusOutput = {
  kind: z.enum(SESSION_TYPES).describe('The kind of session the token is for'),
  status: z.union([registrationStatusSchema, deregistrationStatusSchema, refreshStatusSchema, identifyStatusSchema]),
};

export const sessionTokenInput = {
  sessionToken: z
    .string({ error: 'must be a string: the session token an answer gave (the latest one)' })
    .min(1, 'must not be empty: send the session token an answer gave')
    .max(8_192, 'must be at most 8192 characters')
    .describe('The session token (the REST endpoints take it as ?token= or Authorization: Bearer)'),
};

const NAMES: Record<SessionType, string> = { register: 'Registration', deregister: 'Deregistration', refresh: 'Proof refresh', identify: 'Identify' };

/** Stages as progress: each report counts higher than the one before. */
const RANK: Record<SessionStage, number> = { 'qr-ready': 1, 'proof-received': 2, completed: 3, failed: 3 };

/** Reports stages as MCP progress, when the caller asked for it (a progressToken), each at most once. */
class StageProgress {
  readonly #call: ToolCall;
  readonly #token: string | number | undefined;
  #reported = 0;

  constructor(call: ToolCall) {
    this.#call = call;
    this.#token = call._meta?.progressToken;
  }

  get wanted(): boolean {
    return this.#token !== undefined;
  }

  async report(stage: SessionStage, message: string): Promise<void> {
    const progress = RANK[stage];
    if (this.#token === undefined || progress <= this.#reported) return;
    this.#reported = progress;
    try {
      await this.#call.sendNotification({
        method: 'notifications/progress',
        params: { progressToken: this.#token, progress, total: 3, message },
      });
    } catch {
      // progress is a courtesy: the answer still comes (and is kept for a resumed stream)
    }
  }
}

interface Followed {
  /** The latest status read. */
  status: AnySessionStatus;
  /** How the watch ended; undefined when the wait limit passed first (or the caller or the instance stopped it). */
  end?: Exclude<WatchEnd, { outcome: 'stopped' }>;
}

/** A watch slot of the session watcher (503 when it follows its most sessions). */
const reserveWatch = (options: SessionToolOptions): Watch => options.services.watcher.reserve(`mcp:${randomUUID()}`);

/**
 * Follows the session of `status.sessionToken` with `watch` until it ends, the wait limit passes, the caller cancels
 * or the instance stops, reporting each new stage; then the session as it stands.
 */
async function follow(
  kind: SessionType,
  status: AnySessionStatus,
  watch: Watch,
  call: ToolCall,
  progress: StageProgress,
  options: SessionToolOptions,
): Promise<Followed> {
  const { services, waitMs, stopping } = options;
  let latest = status;
  const stop = (): void => watch.cancel();
  const limit = setTimeout(stop, waitMs);
  call.signal.addEventListener('abort', stop);
  stopping.addEventListener('abort', stop);
  if (call.signal.aborted || stopping.aborted) stop();
  try {
    const end = await watch.follow(status.sessionToken, status.stage, async (current) => {
      latest = current;
      await progress.report(current.stage, `${NAMES[kind]}: ${current.stage}. ${current.humanInstructions.join(' ')}`);
    });
    if (end.outcome === 'completed' || end.outcome === 'failed') {
      await progress.report(end.status.stage, `${NAMES[kind]}: ${end.status.stage}. ${end.status.error ?? end.status.humanInstructions.join(' ')}`);
      return { status: end.status, end };
    }
    if (end.outcome !== 'stopped') return { status: latest, end };
  } finally {
    clearTimeout(limit);
    call.signal.removeEventListener('abort', stop);
    stopping.removeEventListener('abort', stop);
  }
  // the wait is over before the session: where it stands now (a fresh token), or what was last seen
  try {
    return { status: await services.sessions.kinds[kind].status(latest.sessionToken) };
  } catch {
    return { status: latest };
  }
}

/** What the status says in words, and whether the session failed. */
function outcomeOf(kind: SessionType, followed: Followed): { text: string; failed: boolean } {
  const { status, end } = followed;
  if (end?.outcome === 'expired') return { text: `${NAMES[kind]} session expired before the human finished: open a new one`, failed: true };
  if (end?.outcome === 'refused') return { text: `${NAMES[kind]} session cannot be followed: ${end.error}`, failed: true };
  if (status.stage === 'failed') return { text: `${NAMES[kind]} failed: ${status.error ?? 'see the status'}`, failed: true };
  if (status.stage === 'completed') return { text: `${NAMES[kind]} completed: ${completedWords(status)}`, failed: false };
  return {
    text:
      `${NAMES[kind]} is at stage ${status.stage}, ${Math.round(status.timeRemainingMs / 60_000)} min left: ${status.humanInstructions.join(' ')} ` +
      `Follow it with registration_status and sessionToken ${status.sessionToken}`,
    failed: false,
  };
}

/** The facts a completed session established, in words. */
function completedWords(status: AnySessionStatus): string {
  const fields = status as AnySessionStatus & { agentId?: number; agentIds?: number[]; nullifier?: string; proofExpiresAt?: number };
  const facts = [
    fields.agentId !== undefined ? `agent ${fields.agentId} on ${status.network}` : `on ${status.network}`,
    fields.nullifier !== undefined ? `nullifier ${fields.nullifier}, agents ${fields.agentIds?.join(', ') || 'none'}` : undefined,
    fields.proofExpiresAt !== undefined ? `proof expires ${new Date(fields.proofExpiresAt * 1000).toISOString()}` : undefined,
    status.txHash ? `transaction ${status.txHash}` : undefined,
  ];
  return facts.filter((fact) => fact !== undefined).join('; ');
}

/** The opened session's links, in words: what to show the human. */
const linksOf = (session: { scanPageUrl: string; deepLink: string }): string =>
  `Scan page (QR code, live status): ${session.scanPageUrl}\nDeep link for the identity app: ${session.deepLink}`;

function sessionTool<K extends SessionType>(server: McpServer, name: SessionToolName, kind: K, options: SessionToolOptions): void {
  const schemas = SCHEMAS[kind];
  registerTool(
    server,
    options.logger,
    name,
    { input: schemas.request.shape, output: { session: schemas.session, status: schemas.status }, annotations: OPENS_SESSION },
    async (request, call): Promise<CallToolResult> => {
      const progress = new StageProgress(call);
      // the watch slot first, as the A2A tasks take theirs: at the cap no session is opened (503)
      const watch = progress.wanted ? reserveWatch(options) : undefined;
      let opened: Awaited<ReturnType<SessionToolOptions['services']['sessions']['open']>>;
      try {
        opened = await options.services.sessions.open({ kind, request } as AnySessionOpening, currentCaller().client);
      } catch (error) {
        watch?.cancel();
        throw error;
      }
      const session = structured(schemas.session, opened) as z.output<typeof registrationSessionSchema | typeof refreshSessionSchema>;
      let followed: Followed = { status: opened as AnySessionStatus };
      if (watch) {
        await progress.report(
          session.stage,
          `${NAMES[kind]} session opened: ${session.humanInstructions.join(' ')}\n${linksOf(session)}\nSession token: ${session.sessionToken}`,
        );
        followed = await follow(kind, followed.status, watch, call, progress, options);
      }
      const outcome = outcomeOf(kind, followed);
      const result = { session, status: structured(schemas.status, followed.status) };
      const { qrImageBase64, ...shown } = session;
      return {
        ...answer(`${outcome.text}\n${linksOf(session)}`, result, [{ type: 'image', data: qrImageBase64, mimeType: 'image/png' }], {
          ...result,
          session: shown,
        }),
        ...(outcome.failed ? { isError: true } : {}),
      };
    },
  );
}

export function registerSessionTools(server: McpServer, options: SessionToolOptions): void {
  sessionTool(server, 'register_agent', 'register', options);
  sessionTool(server, 'deregister_agent', 'deregister', options);
  sessionTool(server, 'refresh_proof', 'refresh', options);
  sessionTool(server, 'identify_human', 'identify', options);
  registerTool(
    server,
    options.logger,
    'registration_status',
    { input: sessionTokenInput, output: sessionStatusOutput, annotations: READ_ONLY },
    async ({ sessionToken }, call) => {
      const { sessions } = options.services;
      const kind = await sessions.kindOf(sessionToken);
      let followed: Followed = { status: await sessions.kinds[kind].status(sessionToken) };
      const progress = new StageProgress(call);
      if (progress.wanted && !FINAL_STAGES.has(followed.status.stage)) {
        const { stage, humanInstructions } = followed.status;
        const watch = reserveWatch(options);
        await progress.report(stage, `${NAMES[kind]}: ${stage}. ${humanInstructions.join(' ')}`);
        followed = await follow(kind, followed.status, watch, call, progress, options);
      }
      const outcome = outcomeOf(kind, followed);
      const result = { kind, status: structured(SCHEMAS[kind].status, followed.status) };
      return { ...answer(outcome.text, result), ...(outcome.failed ? { isError: true } : {}) };
    },
  );
}
