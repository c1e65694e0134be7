// Waiting for the human: the session's stage shown live while it lasts, and what ends the wait told in words with
// its exit code: completed, failed (with what to do), timed out or interrupted (with how to resume: the session goes
// on until it expires, and its latest token follows it).
import { type RegistryClient, RegistryError, type SessionState, SessionWaitTimeout } from '../client/registration.js';
import { CliError, EXIT } from './exit-codes.js';
import { hintFor } from './failure-hints.js';
import type { Output } from './output.js';

export type SessionKind = 'registration' | 'deregistration';

const WAITING: Record<SessionKind, Record<'qr-ready' | 'proof-received', string>> = {
  registration: {
    'qr-ready': 'waiting for the human to scan the QR code',
    'proof-received': 'proof received: waiting for the chain to register the agent',
  },
  deregistration: {
    'qr-ready': 'waiting for the human to scan the QR code and prove again',
    'proof-received': 'proof received: waiting for the chain to burn the agent',
  },
};

export interface FollowOptions {
  client: RegistryClient;
  kind: SessionKind;
  token: string;
  timeoutMs: number;
  out: Output;
  /** The command that picks the session up again, given its latest token. */
  resume: (token: string) => string;
  /** Default 1 s. */
  pollIntervalMs?: number;
}

/** Waits until the session completes; throws a CliError saying how it ended otherwise. */
export async function followSession(options: FollowOptions): Promise<SessionState> {
  const { client, kind, out } = options;
  const line = out.stageLine();
  let latest = options.token;
  let lastStage: string | undefined;
  const interrupt = new AbortController();
  const onSigint = (): void => interrupt.abort(new Error('interrupted'));
  process.once('SIGINT', onSigint);
  const wait = { timeoutMs: options.timeoutMs, pollIntervalMs: options.pollIntervalMs ?? 1_000, signal: interrupt.signal };
  const onStatus = (state: SessionState): void => {
    latest = state.sessionToken || latest;
    if (state.stage !== lastStage) out.emit({ event: 'stage', stage: state.stage });
    lastStage = state.stage;
    if (state.stage === 'qr-ready' || state.stage === 'proof-received') line.show(WAITING[kind][state.stage]);
  };
  try {
    const done = await (kind === 'registration'
      ? client.waitForRegistration(options.token, { ...wait, onStatus })
      : client.waitForDeregistration(options.token, { ...wait, onStatus }));
    line.end(kind === 'registration' ? '✔ registered' : '✔ deregistered');
    return done;
  } catch (error) {
    if (interrupt.signal.aborted) {
      line.end('interrupted');
      throw new CliError(EXIT.interrupted, `interrupted: the ${kind} session goes on until it expires; pick it up with: ${options.resume(latest)}`);
    }
    if (error instanceof SessionWaitTimeout) {
      line.end(`timed out (${error.state.stage})`);
      throw new CliError(
        EXIT.timedOut,
        `the ${kind} is still ${error.state.stage} after ${Math.round(options.timeoutMs / 1000)} s; it goes on until it expires (${error.state.expiresAt}): pick it up with: ${options.resume(latest)}`,
      );
    }
    if (error instanceof RegistryError && error.status === 409) {
      line.end('failed');
      const hint = hintFor(error.message);
      throw new CliError(EXIT.failed, `the ${kind} failed: ${error.message}${hint ? `\n  what to do: ${hint}` : ''}`);
    }
    line.end('stopped');
    throw error;
  } finally {
    process.off('SIGINT', onSigint);
  }
}
