// The reference servers of npm run bench:queries, each in a process of its own: node:http alone, or bare express,
// answering given requests with given bytes (status, header lines and body captured from the service), so that a
// target and its reference put the same bytes on the wire. A POST's JSON body is read (and parsed, by express.json
// on bare express) before the answer, as the service reads it.
//
// Run by the benchmark: `node --import tsx scripts/bench-references.ts <node|express>`, sent the answers as its
// first message; tells its parent its base URL, then answers `cpu` with its CPU time so far (µs), until killed.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';

/** One answer to serve: the request it answers and the bytes of the service's answer to it. */
export interface CapturedAnswer {
  method: 'GET' | 'POST';
  path: string;
  status: number;
  /** Header lines as the service sent them, without Date and the connection's headers (each server adds its own). */
  headers: [string, string][];
  /** base64 */
  body: string;
}

export type ReferenceKind = 'node' | 'express';

function nodeReference(answers: CapturedAnswer[]) {
  const byRequest = new Map(
    answers.map((a) => [`${a.method} ${a.path}`, { status: a.status, head: a.headers.flat(), body: Buffer.from(a.body, 'base64') }]),
  );
  return createServer((req, res) => {
    const answer = byRequest.get(`${req.method} ${req.url}`);
    if (answer === undefined) {
      res.writeHead(404).end();
      return;
    }
    if (req.method === 'GET') {
      res.writeHead(answer.status, answer.head).end(answer.body);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(answer.status, answer.head).end(answer.body);
    });
  });
}

function expressReference(answers: CapturedAnswer[]) {
  const app = express();
  app.disable('x-powered-by');
  for (const answer of answers) {
    const body = Buffer.from(answer.body, 'base64');
    const send = (res: express.Response) => {
      res.status(answer.status);
      for (const [name, value] of answer.headers) res.append(name, value);
      res.send(body);
    };
    if (answer.method === 'GET') app.get(answer.path, (_req, res) => send(res));
    else app.post(answer.path, express.json(), (_req, res) => send(res));
  }
  return createServer(app);
}

if (process.send) {
  const kind = process.argv[2] as ReferenceKind;
  // the answers come as the first message (a command line is capped at 128 kB an argument)
  process.once('message', (answers) => {
    const server = kind === 'node' ? nodeReference(answers as CapturedAnswer[]) : expressReference(answers as CapturedAnswer[]);
    server.listen(0, '127.0.0.1', () => {
      process.send?.(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    });
    process.on('message', (question) => {
      if (question !== 'cpu') return;
      const { user, system } = process.cpuUsage();
      process.send?.(user + system);
    });
  });
}
