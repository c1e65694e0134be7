// The mock identity app's command line: `npm run identity-app -- approve|reject '<deepLink>' [options]`.
// Parses the arguments, runs approve()/reject() (app.ts) and prints one JSON line; see cli-options.ts USAGE.
import { approve, type CallbackOutcome, documentFrom, InputError, reject } from './app.js';
import { parseCliArgs, USAGE } from './cli-options.js';
import { decodeRevert } from './prove.js';

const EXIT_OK = 0;
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

const callbackFields = (callback: CallbackOutcome) => ({
  callback: callback.status,
  ...(callback.error !== undefined ? { callbackError: callback.error } : {}),
});

async function run(args: readonly string[]): Promise<{ output?: Record<string, unknown>; text?: string; code: number }> {
  const cli = parseCliArgs(args);
  if (cli.command === 'help') return { text: USAGE, code: EXIT_OK };

  if (cli.command === 'reject') {
    const result = await reject({ deepLink: cli.deepLink, ...(cli.reason !== undefined ? { reason: cli.reason } : {}) });
    return {
      output: { status: result.status, reason: result.reason, ...callbackFields(result.callback) },
      code: result.callback.ok ? EXIT_OK : EXIT_FAILED,
    };
  }

  const document = documentFrom(cli.document);
  const result = await approve({
    deepLink: cli.deepLink,
    document,
    dataDir: cli.dataDir ?? (process.env['DATA_DIR'] || '.data'),
    ...(cli.rpcUrl !== undefined ? { rpcUrl: cli.rpcUrl } : {}),
  });
  if (result.status === 'submitted') {
    return {
      output: {
        status: result.status,
        txHash: result.txHash,
        network: result.network,
        blockNumber: Number(result.blockNumber),
        nullifier: result.nullifier.toString(),
        durable: result.durable,
        ...callbackFields(result.callback),
      },
      code: result.callback.ok ? EXIT_OK : EXIT_FAILED,
    };
  }
  return {
    output: {
      status: result.status,
      reason: result.reason,
      network: result.network,
      ...(result.txHash ? { txHash: result.txHash } : {}),
      ...(result.hint ? { hint: result.hint } : {}),
      ...callbackFields(result.callback),
    },
    code: EXIT_FAILED,
  };
}

const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, ' ').trim();

function finish(stdout: string, stderr: string, code: number): void {
  if (stderr) process.stderr.write(stderr);
  process.stdout.write(stdout, () => process.exit(code));
}

run(process.argv.slice(2)).then(
  ({ output, text, code }) => finish(text ?? `${JSON.stringify(output)}\n`, '', code),
  (error: unknown) => {
    if (error instanceof InputError) {
      finish('', `identity-app: ${oneLine(error.message)} (see --help)\n`, EXIT_USAGE);
    } else {
      // SetupError and anything unexpected (e.g. an RPC failure, shown by viem's short message): one line, no stack.
      finish('', `identity-app: ${oneLine(decodeRevert(error).name)}\n`, EXIT_FAILED);
    }
  },
);
