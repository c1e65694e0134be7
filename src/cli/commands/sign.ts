// sign: the headers that sign one request as the agent of a key file, printed as a curl command ready to paste (or
// as JSON), in either scheme: x-svc-agent-* (default) or RFC 9421 (ERC-8128 for secp256k1 agents, Web Bot Auth for
// Ed25519 agents, whose key directory is on the service that registered them).
import { readFileSync } from 'node:fs';
import { signerFromExport } from '../../client/registration.js';
import { type SigningScheme, signRequest } from '../../client/signing.js';
import { keyDirectoryUrl } from '../../core/key-directory.js';
import { COMMON_HELP, startCommand } from '../arguments.js';
import { type Command, shellQuote } from '../command.js';
import { EXIT, EXIT_CODES_HELP, usageError } from '../exit-codes.js';
import { DEFAULT_KEY_FILE, readKeyFile } from '../key-file.js';

const SCHEMES: readonly SigningScheme[] = ['x-svc-agent', 'rfc9421'];

const USAGE = `Usage: agent-identity-registry sign <url> [--method METHOD] [--body TEXT | --body-file PATH] [--scheme SCHEME]
                                    [--key-file PATH] [--content-type TYPE]

Signs one request as the agent of the key file and prints it as a curl command (pipe it to sh to send it). The
signature covers the method, the URL's path and query (and host, with rfc9421) and the exact body bytes; it holds
for 5 minutes, once: a service refuses a second use (409).

  <url>                the absolute URL the request goes to
  --method METHOD      default GET, or POST when a body is given
  --body TEXT          the body, exactly as sent
  --body-file PATH     the body from a file (- for standard input)
  --scheme SCHEME      x-svc-agent (default: the x-svc-agent-* headers) or rfc9421 (Signature-Input and Signature:
                       ERC-8128 for a secp256k1 agent, Web Bot Auth for an Ed25519 agent)
  --key-file PATH      the agent's key file (default ./${DEFAULT_KEY_FILE})
  --content-type TYPE  sent with a body (default application/json; not signed)

${COMMON_HELP.replace(/\n.*--url.*\n/, '\n')}

Output: a curl command, or with --json {"method","url","headers","body"}.

${EXIT_CODES_HELP}`;

const OPTIONS = {
  method: { type: 'string' },
  body: { type: 'string' },
  'body-file': { type: 'string' },
  scheme: { type: 'string' },
  'key-file': { type: 'string' },
  'content-type': { type: 'string' },
} as const;

function bodyOf(values: { body?: string | undefined; 'body-file'?: string | undefined }): string | undefined {
  if (values.body !== undefined && values['body-file'] !== undefined) throw usageError('give --body or --body-file, not both');
  const file = values['body-file'];
  if (file === undefined) return values.body;
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    throw usageError(`cannot read --body-file ${file}: ${(error as Error).message}`);
  }
}

export const sign: Command = {
  name: 'sign',
  usage: USAGE,
  async run(args) {
    const started = startCommand(args, OPTIONS, USAGE, { max: 1 });
    if (!started) return EXIT.ok;
    const { values, positionals, out } = started;
    const [url] = positionals;
    if (url === undefined) throw usageError('sign needs the <url> of the request, e.g. sign https://shop.example/orders --body \'{"item":"tea"}\'');
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
      throw usageError(`<url> must be an absolute http(s) URL, got ${JSON.stringify(url)}`);
    if (values.url !== undefined) throw usageError('sign takes the request URL as <url>; --url (a service) does not apply');
    const scheme = (values.scheme ?? 'x-svc-agent') as SigningScheme;
    if (!SCHEMES.includes(scheme)) throw usageError(`--scheme must be x-svc-agent or rfc9421, got ${JSON.stringify(values.scheme)}`);
    const body = bodyOf(values);
    const method = (values.method ?? (body === undefined ? 'GET' : 'POST')).toUpperCase();
    if (!/^[A-Z]+$/.test(method)) throw usageError(`--method must be an HTTP method such as GET or POST, got ${JSON.stringify(values.method)}`);
    const key = readKeyFile(values['key-file'] ?? DEFAULT_KEY_FILE);

    const signed = await signRequest(
      signerFromExport(key),
      { method, url, body: body ?? '' },
      scheme === 'x-svc-agent'
        ? {}
        : {
            scheme,
            chainId: key.chainId,
            ...(key.keyType === 'ed25519' ? { signatureAgent: keyDirectoryUrl(key.service, key.chainId, BigInt(key.agentId)) } : {}),
          },
    );
    const headers = { ...(body === undefined ? {} : { 'content-type': values['content-type'] ?? 'application/json' }), ...signed };
    out.emit({ method, url, headers, ...(body === undefined ? {} : { body }) });
    if (!out.json) {
      const lines = [
        `curl -X ${method} ${shellQuote(url)}`,
        ...Object.entries(headers).map(([name, value]) => `-H ${shellQuote(`${name}: ${value}`)}`),
      ];
      if (body !== undefined) lines.push(`--data-raw ${shellQuote(body)}`);
      out.say(lines.join(' \\\n  '));
    }
    return EXIT.ok;
  },
};
