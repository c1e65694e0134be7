// Delivers A2A push notifications: each task update is POSTed to every webhook configured for the task, in
// the body shape of the protocol version the webhook was registered over (v1.0 StreamResponse JSON, or the v0.3
// Task / event object), one task's updates in order. Connections go through the push policy's guarded lookup
// (push-destination.ts), follow no redirects, and give up after a timeout; a failed delivery is retried with
// back-off when the receiver may recover (network errors, 408, 429, 5xx) and logged with the URL's origin
// only, never its path, query or credentials.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { StreamResponse, Task, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import {
  type PushNotificationSender,
  type PushNotificationSerializer,
  type ServerCallContext,
  type StoredPushNotificationConfig,
  V1PushNotificationSerializer,
} from '@a2a-js/sdk/server';
import type { Logger } from 'pino';
import { guardedLookup, type PushTargetPolicy, PushTargetRefused, type Resolver, refusalOf } from './push-destination.js';

export interface PushSenderOptions {
  configs: { loadWithMetadata(taskId: string, context: ServerCallContext): Promise<StoredPushNotificationConfig[]> };
  policy: PushTargetPolicy;
  logger: Logger;
  /** Sent as User-Agent, so receivers can tell the service's notifications apart. */
  userAgent: string;
  /** Per attempt; default 5 s. */
  timeoutMs?: number;
  /** Waits before the second, third, ... attempt; default 1 s, 5 s. */
  retryDelaysMs?: readonly number[];
  resolve?: Resolver;
}

const SERIALIZERS: Record<string, PushNotificationSerializer> = {
  '1.0': new V1PushNotificationSerializer(),
  '0.3': new V03PushNotificationSerializer(),
};

/** The header the v0.3 protocol names for a config's `token`. */
export const NOTIFICATION_TOKEN_HEADER = 'X-A2A-Notification-Token';

const taskIdOf = (response: StreamResponse): string => {
  const payload = response.payload;
  if (!payload) return '';
  return payload.$case === 'task' ? payload.value.id : payload.value.taskId;
};

/** Where a notification went, for logs: the origin only (paths and queries of webhooks often hold secrets). */
const targetOf = (url: string): string => {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid url)';
  }
};

const retryable = (status: number): boolean => status === 408 || status === 429 || status >= 500;

export class WebhookPushSender implements PushNotificationSender {
  readonly #options: PushSenderOptions;
  readonly #lookup: LookupFunction;
  /** Per task, the tail of its delivery chain: a task's notifications leave in the order they happened. */
  readonly #chains = new Map<string, Promise<void>>();

  constructor(options: PushSenderOptions) {
    this.#options = options;
    this.#lookup = guardedLookup(options.policy, options.resolve);
  }

  async send(response: StreamResponse, context: ServerCallContext, task?: Task): Promise<void> {
    const taskId = taskIdOf(response);
    if (!taskId) return; // a stand-alone message: no task, no webhook
    // the configs are read inside the chain too, so an update takes its place before anything is awaited
    const previous = this.#chains.get(taskId) ?? Promise.resolve();
    const next = previous
      .catch(() => undefined)
      .then(async () => {
        let configs: StoredPushNotificationConfig[];
        try {
          configs = await this.#options.configs.loadWithMetadata(taskId, context);
        } catch (err) {
          this.#options.logger.error({ taskId, err }, 'push notification configs could not be read');
          return;
        }
        await Promise.all(configs.map((stored) => this.#deliver(response, stored, taskId, task)));
      });
    this.#chains.set(taskId, next);
    try {
      await next;
    } finally {
      if (this.#chains.get(taskId) === next) this.#chains.delete(taskId);
    }
  }

  /** Resolves when every notification under way has been delivered or given up (shutdown, tests). */
  async idle(): Promise<void> {
    while (this.#chains.size > 0) await Promise.allSettled([...this.#chains.values()]);
  }

  async #deliver(response: StreamResponse, stored: StoredPushNotificationConfig, taskId: string, task?: Task): Promise<void> {
    const { config, wireVersion } = stored;
    const log = { taskId, configId: config.id, target: targetOf(config.url), event: response.payload?.$case };
    let serialized: { body: string; contentType: string };
    try {
      serialized = (SERIALIZERS[wireVersion] ?? SERIALIZERS['1.0']!).serialize(response, task);
    } catch (err) {
      this.#options.logger.error({ ...log, err }, 'push notification could not be serialized');
      return;
    }
    const { body, contentType } = serialized;
    const headers = { 'Content-Type': contentType, 'User-Agent': this.#options.userAgent, ...authHeaders(config) };
    const delays = this.#options.retryDelaysMs ?? [1_000, 5_000];
    for (let attempt = 0; ; attempt++) {
      let outcome: { status: number } | { error: Error };
      try {
        outcome = { status: await this.#post(config.url, body, headers) };
      } catch (error) {
        outcome = { error: error as Error };
      }
      if ('status' in outcome && outcome.status >= 200 && outcome.status < 300) {
        this.#options.logger.debug({ ...log, status: outcome.status, attempt: attempt + 1 }, 'push notification delivered');
        return;
      }
      const refused = 'error' in outcome && outcome.error instanceof PushTargetRefused;
      const again = !refused && attempt < delays.length && ('error' in outcome || retryable(outcome.status));
      const detail = 'status' in outcome ? { status: outcome.status } : { reason: outcome.error.message };
      if (!again) {
        this.#options.logger.warn({ ...log, ...detail, attempts: attempt + 1 }, 'push notification not delivered');
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, delays[attempt]));
    }
  }

  /** One POST; resolves with the response status. */
  #post(url: string, body: string, headers: Record<string, string>): Promise<number> {
    const target = new URL(url);
    const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
    // an IP literal never reaches the lookup: check it here
    const refusal = isIP(host) ? refusalOf(host, this.#options.policy) : undefined;
    if (refusal) return Promise.reject(new PushTargetRefused(`Push notifications cannot go to ${host}: ${refusal}`));
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const timeoutMs = this.#options.timeoutMs ?? 5_000;
    return new Promise((resolve, reject) => {
      const req = send(
        target,
        {
          method: 'POST',
          headers: { ...headers, 'Content-Length': Buffer.byteLength(body) },
          lookup: this.#lookup,
          agent: false,
          signal: AbortSignal.timeout(timeoutMs),
        },
        (res) => {
          res.resume(); // the receiver's body is not read
          res.on('end', () => resolve(res.statusCode ?? 0));
          res.on('error', reject);
        },
      );
      req.on('error', (error) => reject(error.name === 'AbortError' ? new Error(`no answer within ${timeoutMs} ms`) : error));
      req.end(body);
    });
  }
}

/** authentication (scheme + credentials) as Authorization, else the legacy token header. */
function authHeaders(config: TaskPushNotificationConfig): Record<string, string> {
  const auth = config.authentication;
  if (auth?.scheme && auth.credentials) return { Authorization: `${auth.scheme} ${auth.credentials}` };
  return config.token ? { [NOTIFICATION_TOKEN_HEADER]: config.token } : {};
}
