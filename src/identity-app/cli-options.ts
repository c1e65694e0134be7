// The identity-app CLI's arguments (node:util parseArgs) and its usage text.
import { parseArgs } from 'node:util';
import { DEFAULT_REJECT_REASON, DOCUMENT_KINDS, type DocumentKind, type DocumentOptions, InputError } from './app.js';
import { DEFAULT_MOCK_DOCUMENT } from './document.js';

const d = DEFAULT_MOCK_DOCUMENT;

export const USAGE = `Usage:
  npm run identity-app -- approve '<deepLink>' [--document-number X] [--document KIND] [--nationality CODE]
                                               [--birthdate YYYY-MM-DD] [--name "FIRST LAST"]
                                               [--data-dir DIR] [--rpc-url URL]
  npm run identity-app -- reject '<deepLink>' [--reason TEXT]

The mock identity app of the service's local chains: plays the human's phone for a registration deep link,
which carries everything it needs (registry, chain, request, callback URL).

Commands:
  approve   attest a mock document's disclosure, submit it through the registry's verifySelfProof on the
            deep link's local chain, then POST {"status":"success","txHash":...} to the deep link's callback,
            or {"status":"error","error":<reason>} when the registry or hub refuses the proof
  reject    decline: POST {"status":"error","error":<reason>} to the deep link's callback

Document (approve; without these, one fixed default document, a valid adult mock passport, as a phone
holds one passport):
  --document-number X      the person: the same number gives the same nullifier, i.e. the same human
                           (default ${d.documentNumber})
  --document KIND          mock-passport (default), passport (not a mock: the only kind the local hub on
                           chain 42220 accepts) or eu-id (a mock EU identity card)
  --nationality CODE       ISO 3166-1 alpha-3 (default ${d.nationality}; DEU for eu-id)
  --birthdate YYYY-MM-DD   date of birth (default ${d.dateOfBirth})
  --name "FIRST LAST"      the holder's name (default "${d.firstNames} ${d.lastName}")

Local chain (approve):
  --data-dir DIR           the service's DATA_DIR, holding dev-accounts.json and chains/<network>/rpc-url
                           (default $DATA_DIR, else .data)
  --rpc-url URL            the local chain's RPC URL (default: read from DIR/chains/<network>/rpc-url)

Reject:
  --reason TEXT            the error sent to the callback (default "${DEFAULT_REJECT_REASON}")

  -h, --help               print this text

Output: one JSON line, e.g. {"status":"submitted","txHash":"0x…","network":"testnet","durable":true,"callback":200}
("durable": the service has written the block to the chain's state file, so a restart keeps the transaction)
(callback: the callback's HTTP status). Exit codes: 0 done and the callback accepted it; 1 the proof was
refused, the callback failed or the local chain is unusable; 2 bad arguments.
`;

export type CliCommand =
  | { command: 'help' }
  | { command: 'approve'; deepLink: string; document: DocumentOptions; dataDir?: string; rpcUrl?: string }
  | { command: 'reject'; deepLink: string; reason?: string };

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  'document-number': { type: 'string' },
  document: { type: 'string' },
  nationality: { type: 'string' },
  birthdate: { type: 'string' },
  name: { type: 'string' },
  'data-dir': { type: 'string' },
  'rpc-url': { type: 'string' },
  reason: { type: 'string' },
} as const;

const APPROVE_ONLY = ['document-number', 'document', 'nationality', 'birthdate', 'name', 'data-dir', 'rpc-url'] as const;
const REJECT_ONLY = ['reason'] as const;

/** Parses the CLI's arguments (without node and the script); throws InputError on anything wrong. */
export function parseCliArgs(args: readonly string[]): CliCommand {
  const { values, positionals } = (() => {
    try {
      return parseArgs({ args: [...args], options: OPTIONS, allowPositionals: true, strict: true });
    } catch (error) {
      // Node's messages add advice about "--" separators in a second sentence; the first says what is wrong.
      const message = (error as Error).message.split('. ')[0] ?? String(error);
      throw new InputError(message.replace(/\.$/, ''));
    }
  })();
  if (values.help) return { command: 'help' };

  const [command, deepLink, ...extra] = positionals;
  if (command === undefined) throw new InputError('missing command: approve or reject');
  if (command !== 'approve' && command !== 'reject') {
    throw new InputError(`unknown command ${JSON.stringify(command)}: use approve or reject`);
  }
  if (deepLink === undefined || deepLink.trim() === '') throw new InputError(`${command}: missing the deep link`);
  if (extra.length > 0) {
    throw new InputError(`${command} takes one deep link, got also ${JSON.stringify(extra[0])} (quote the deep link)`);
  }
  const misplaced = (command === 'approve' ? REJECT_ONLY : APPROVE_ONLY).find((name) => values[name] !== undefined);
  if (misplaced) throw new InputError(`--${misplaced} does not apply to ${command}`);

  if (command === 'reject') {
    return { command, deepLink, ...(values.reason !== undefined ? { reason: values.reason } : {}) };
  }
  const kind = values.document;
  if (kind !== undefined && !(DOCUMENT_KINDS as readonly string[]).includes(kind)) {
    throw new InputError(`--document must be one of ${DOCUMENT_KINDS.join(', ')}, got ${JSON.stringify(kind)}`);
  }
  const document: DocumentOptions = {
    ...(kind !== undefined ? { kind: kind as DocumentKind } : {}),
    ...(values['document-number'] !== undefined ? { documentNumber: values['document-number'] } : {}),
    ...(values.nationality !== undefined ? { nationality: values.nationality } : {}),
    ...(values.birthdate !== undefined ? { birthdate: values.birthdate } : {}),
    ...(values.name !== undefined ? { name: values.name } : {}),
  };
  if (values['rpc-url'] !== undefined) {
    try {
      const url = new URL(values['rpc-url']);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
    } catch {
      throw new InputError(`--rpc-url must be an http(s) URL, got ${JSON.stringify(values['rpc-url'])}`);
    }
  }
  return {
    command,
    deepLink,
    document,
    ...(values['data-dir'] !== undefined ? { dataDir: values['data-dir'] } : {}),
    ...(values['rpc-url'] !== undefined ? { rpcUrl: values['rpc-url'] } : {}),
  };
}
