// The reference servers of the benchmarks (scripts/bench-references.ts) as child processes, and the capture of a
// service's answer as the bytes they send: node:http alone or bare express answering what the service answered.
import { type ChildProcess, fork } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CapturedAnswer, ReferenceKind } from './bench-references.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A process serving HTTP, whose CPU time can be read. */
export interface Served {
  base: string;
  /** CPU time used so far, in microseconds. */
  cpu(): Promise<number>;
  /** Resolves once the process has exited. */
  stop(): Promise<void>;
}

/** Ends a child process and waits for it (the service stops its chains first: they must not outlive the run). */
export function stopper(child: ChildProcess): () => Promise<void> {
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  return () => {
    child.kill('SIGTERM');
    return exited;
  };
}

/** A reference server in a process of its own, serving `answers`. */
export async function startReference(kind: ReferenceKind, answers: CapturedAnswer[]): Promise<Served> {
  const child: ChildProcess = fork(join(ROOT, 'scripts/bench-references.ts'), [kind], {
    execArgv: ['--import', 'tsx'],
    stdio: 'inherit',
  });
  child.send(answers);
  let asked: Promise<unknown> = Promise.resolve();
  const ask = <T>(question: string): Promise<T> => {
    const answer = asked.then(
      () =>
        new Promise<T>((resolve) => {
          child.once('message', (message) => resolve(message as T));
          child.send(question);
        }),
    );
    asked = answer;
    return answer;
  };
  const base = await new Promise<string>((resolve, reject) => {
    child.once('message', (message) => resolve(message as string));
    child.once('exit', (code) => reject(new Error(`the ${kind} reference exited (${code})`)));
  });
  return { base, cpu: () => ask<number>('cpu'), stop: stopper(child) };
}

/** The service's answer to a request, as bytes: what the references will send. */
export function capture(base: string, method: 'GET' | 'POST', path: string, body?: string): Promise<CapturedAnswer> {
  return new Promise((resolve, reject) => {
    const headers = body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
    const req = httpRequest(`${base}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const lines: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          const name = res.rawHeaders[i] as string;
          if (!['date', 'connection', 'keep-alive'].includes(name.toLowerCase())) lines.push([name, res.rawHeaders[i + 1] as string]);
        }
        if (res.statusCode !== 200) reject(new Error(`${method} ${path} answered ${res.statusCode}: ${Buffer.concat(chunks).toString()}`));
        else resolve({ method, path, status: 200, headers: lines, body: Buffer.concat(chunks).toString('base64') });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}
