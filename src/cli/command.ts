// One subcommand: its name, its --help text, and what it does (resolving to its exit code).
export interface Command {
  name: string;
  usage: string;
  run(args: readonly string[]): Promise<number>;
}

/** Single quotes for a POSIX shell: what a printed command line needs to be pasted as is. */
export const shellQuote = (text: string): string => (/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`);
