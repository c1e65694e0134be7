// Opening an A2A register task as a stream with the SDK's client, as another agent would: what the benchmarks of
// a register task's completion share.
import { type Part, Role, type StreamResponse } from '@a2a-js/sdk';
import { type Client, ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';

/** The SDK's client of the service at `base`; each request comes from `forwardedFor()` (the per-address session limit). */
export function a2aClient(base: string, forwardedFor: () => string): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('X-Forwarded-For', forwardedFor());
    return fetch(input, { ...init, headers });
  };
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })] }),
  ).createFromUrl(base);
}

/** SendStreamingMessage of a register intent (wallet-free, testnet); `webhookUrl` adds a push notification config. */
export function openRegisterTask(a2a: Client, webhookUrl?: string): AsyncGenerator<StreamResponse, void, undefined> {
  const part: Part = {
    content: { $case: 'data', value: { intent: 'register', mode: 'wallet-free', network: 'testnet' } },
    metadata: undefined,
    filename: '',
    mediaType: 'application/json',
  };
  return a2a.sendMessageStream({
    tenant: '',
    message: {
      messageId: crypto.randomUUID(),
      contextId: '',
      taskId: '',
      role: Role.ROLE_USER,
      parts: [part],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: webhookUrl ? { tenant: '', id: '', taskId: '', url: webhookUrl, token: '', authentication: undefined } : undefined,
      historyLength: undefined,
      returnImmediately: false,
    },
    metadata: undefined,
  });
}

/** The session fields of a register task's artifact (deep link, session token...). */
export function sessionOfTask(task: { artifacts: { parts: { content?: { $case: string; value: unknown } }[] }[] }): {
  deepLink: string;
  sessionToken: string;
} {
  const fields = (task.artifacts[0]?.parts[0]?.content?.value ?? {}) as Record<string, unknown>;
  return { deepLink: String(fields['deepLink']), sessionToken: String(fields['sessionToken']) };
}
