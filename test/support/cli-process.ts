// The agent-identity-registry command as a user runs it: the launcher in bin/ (which runs dist/, built by the test
// setup), either to its end (output and exit code) or in the background, read while it runs, optionally in a
// pseudo-terminal made by util-linux `script` (so the command sees a TTY, as in a person's terminal).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const CLI = join(process.cwd(), 'bin/agent-identity-registry.js');

/** util-linux's `script`, which gives a command a pseudo-terminal (Debian's bsdutils, an essential package). */
export const hasScript = existsSync('/usr/bin/script');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the command to its end. */
export function runCli(args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

/** Single quotes for sh. */
const quote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

export class RunningCli {
  #output = '';
  readonly exited: Promise<number | null>;

  constructor(private readonly child: ChildProcess) {
    // decoded across chunks: a character of the QR code may straddle two reads
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding('utf8');
      stream?.on('data', (text: string) => {
        this.#output += text;
      });
    }
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /** Everything printed so far (stdout and stderr as they came). */
  get output(): string {
    return this.#output;
  }

  /** Resolves with the first match of `pattern` in the output; rejects if the command ends first (or after `waitMs`). */
  async waitFor(pattern: RegExp, waitMs = 30_000): Promise<RegExpMatchArray> {
    let ended = false;
    void this.exited.then(() => {
      ended = true;
    });
    for (const deadline = Date.now() + waitMs; Date.now() < deadline; ) {
      const match = pattern.exec(this.#output);
      if (match) return match;
      if (ended) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no ${pattern} in the output:\n${this.#output}`);
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    this.child.kill(signal);
  }

  /** Types `text` (in a pseudo-terminal, Ctrl-C is \u0003: the terminal sends SIGINT to the command). */
  type(text: string): void {
    this.child.stdin?.write(text);
  }
}

/** Starts the command in the background, its output in pipes (no terminal). */
export function startCli(args: readonly string[], env: Record<string, string> = {}): RunningCli {
  return new RunningCli(spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
}

/**
 * Starts the command in a pseudo-terminal of `columns` x 60 (`script -qefc`: quiet, flush at once, the command's
 * exit code); the output is the terminal's bytes, escape sequences and \r\n line ends included.
 */
export function startCliInTerminal(args: readonly string[], options: { columns?: number; env?: Record<string, string> } = {}): RunningCli {
  const command = `stty cols ${options.columns ?? 200} rows 60; exec ${[process.execPath, CLI, ...args].map(quote).join(' ')}`;
  // stdin stays open: script forwards it to the terminal, and its end would end the session
  return new RunningCli(
    spawn('script', ['-qefc', command, '/dev/null'], { env: { ...process.env, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] }),
  );
}
