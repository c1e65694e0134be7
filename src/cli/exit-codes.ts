// What the command's exit code says, and which failure gets which: a script branches on these, so they are part of
// the command's interface (--help and the README list them).
import { RegistryError, ServiceUnreachable, SessionWaitTimeout } from '../client/registration.js';

export const EXIT = {
  ok: 0,
  /** The service refused (a 4xx or 5xx answer), a session failed, or an agent is not human-backed (verify). */
  failed: 1,
  /** The command line is wrong: nothing was sent. */
  usage: 2,
  /** The service did not answer at all. */
  unreachable: 3,
  /** The human did not finish in time: the session goes on (until it expires) and can be resumed. */
  timedOut: 4,
  /** Ctrl-C while waiting: the session goes on, as after a time-out. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export const EXIT_CODES_HELP = `Exit codes:
  0    done (verify: the agent is human-backed)
  1    the service refused, the session failed, or (verify) the agent is not human-backed
  2    usage error: a wrong or missing argument, or a key file that exists (nothing was sent)
  3    the service is unreachable (nothing answered at --url)
  4    timed out waiting for the human (the session goes on: the command printed picks it up, export --token or
       deregister --token)
  130  interrupted (Ctrl-C) while waiting (picked up the same way)`;

/** A failure the command reports as is, with its exit code. */
export class CliError extends Error {
  override readonly name = 'CliError';

  constructor(
    readonly code: ExitCode,
    message: string,
  ) {
    super(message);
  }
}

export const usageError = (message: string): CliError => new CliError(EXIT.usage, message);

/** The exit code of anything a command throws. */
export function exitCodeOf(error: unknown): ExitCode {
  if (error instanceof CliError) return error.code;
  if (error instanceof ServiceUnreachable) return EXIT.unreachable;
  if (error instanceof SessionWaitTimeout) return EXIT.timedOut;
  if (error instanceof RegistryError) return EXIT.failed;
  return EXIT.failed;
}
