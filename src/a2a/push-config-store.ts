// A2A push notification configs on the store port, so a task's webhooks still hear of it after a restart.
// Each task's configs are one sealed value (sealed-values.ts) under a2a:push:<taskId>: a webhook's
// credentials are not readable at rest. Every config is checked before it is kept: the URL against the push
// policy (push-destination.ts), the credentials for header safety, and at most MAX_CONFIGS_PER_TASK per task.
// Configs are found by task id, as tasks are (the task id, handed only to the task's creator, is the capability).
import { randomUUID } from 'node:crypto';
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { PushNotificationStore, ServerCallContext, StoredPushNotificationConfig } from '@a2a-js/sdk/server';
import type { RateLimiter } from '../services/rate-limits.js';
import type { KeyValueStore } from '../store/key-value-store.js';
import type { SealedValues } from '../store/sealed-values.js';
import { rateLimitKeyOf } from './client-address.js';
import { checkPushUrl, type PushTargetPolicy, PushTargetRefused, type Resolver } from './push-destination.js';

export const MAX_CONFIGS_PER_TASK = 10;
const MAX_SECRET_LENGTH = 4096;
/** RFC 9110 token: an auth scheme such as Bearer or Basic. */
const AUTH_SCHEME = /^[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]{0,63}$/;
/** Visible ASCII and spaces only: nothing that could end a header line. */
const HEADER_VALUE = /^[\x20-\x7e]*$/;
const CONFIG_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const pushKey = (taskId: string) => `a2a:push:${taskId}`;

export interface PushConfigStoreOptions {
  store: KeyValueStore;
  sealed: SealedValues;
  policy: PushTargetPolicy;
  /** Config writes per client address (the service's push-config limiter). */
  writeLimit: RateLimiter;
  /** How long a task's configs are kept after their last change (the task store's retention). */
  ttlMs: number;
  resolve?: Resolver;
}

export class KeyValuePushConfigStore implements PushNotificationStore {
  constructor(private readonly options: PushConfigStoreOptions) {}

  async save(taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
    const { count, resetAt } = await this.options.writeLimit.hit(rateLimitKeyOf(context.user));
    if (count > this.options.writeLimit.rule.limit) throw new RequestMalformedError(this.options.writeLimit.refusal(resetAt).message);
    await this.#validate(config);
    // the id is the result of a create: assigned in place, as the SDK's interface asks
    if (!config.id) config.id = randomUUID();
    const entry: StoredPushNotificationConfig = {
      config: { ...config, taskId },
      wireVersion: context.requestedVersion || '0.3',
    };
    const key = pushKey(taskId);
    const { sealed } = this.options;
    await this.options.store.update<string>(
      key,
      (current) => {
        const entries = current === undefined ? [] : sealed.open<StoredPushNotificationConfig[]>(key, current);
        const others = entries.filter((e) => e.config.id !== config.id);
        if (others.length >= MAX_CONFIGS_PER_TASK) {
          throw new RequestMalformedError(`A task has at most ${MAX_CONFIGS_PER_TASK} push notification configs; delete one first`);
        }
        return sealed.seal(key, [...others, entry]);
      },
      this.options.ttlMs,
    );
  }

  async load(taskId: string): Promise<TaskPushNotificationConfig[]> {
    return (await this.loadWithMetadata(taskId)).map((entry) => entry.config);
  }

  async loadWithMetadata(taskId: string): Promise<StoredPushNotificationConfig[]> {
    const key = pushKey(taskId);
    const sealed = await this.options.store.get<string>(key);
    return sealed === undefined ? [] : this.options.sealed.open<StoredPushNotificationConfig[]>(key, sealed);
  }

  /** Deletes one config (by id; the SDK passes the task id when none is given, the v0.3 default id). */
  async delete(taskId: string, _context: ServerCallContext, configId: string = taskId): Promise<void> {
    const key = pushKey(taskId);
    const { sealed } = this.options;
    await this.options.store.update<string>(key, (current) => {
      if (current === undefined) return undefined;
      const remaining = sealed.open<StoredPushNotificationConfig[]>(key, current).filter((e) => e.config.id !== configId);
      return remaining.length === 0 ? undefined : sealed.seal(key, remaining);
    });
  }

  async #validate(config: TaskPushNotificationConfig): Promise<void> {
    if (typeof config.url !== 'string' || config.url === '') {
      throw new RequestMalformedError('A push notification config needs url, e.g. {"url": "https://agent.example/a2a/notifications"}');
    }
    if (config.id && !CONFIG_ID.test(config.id)) {
      throw new RequestMalformedError('A push notification config id is 1-128 characters of letters, digits and . _ : -');
    }
    const secret = (name: string, value: string | undefined) => {
      if (value && (value.length > MAX_SECRET_LENGTH || !HEADER_VALUE.test(value))) {
        throw new RequestMalformedError(`${name} must be at most ${MAX_SECRET_LENGTH} visible ASCII characters`);
      }
    };
    secret('token', config.token);
    const auth = config.authentication;
    if (auth && (auth.scheme || auth.credentials)) {
      if (!AUTH_SCHEME.test(auth.scheme ?? '')) {
        throw new RequestMalformedError('authentication.scheme must be an HTTP authentication scheme such as Bearer or Basic');
      }
      if (!auth.credentials) throw new RequestMalformedError('authentication.credentials is missing');
      secret('authentication.credentials', auth.credentials);
    }
    try {
      await checkPushUrl(config.url, this.options.policy, this.options.resolve);
    } catch (error) {
      if (error instanceof PushTargetRefused) throw new RequestMalformedError(error.message);
      throw error;
    }
  }
}
