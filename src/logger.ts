import { pino, type Logger } from 'pino';

/** Paths that may carry session tokens, keys or signatures: never written to the log. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-aa-proxy-token"]',
  'req.headers["x-svc-agent-signature"]',
  'req.query.token',
  '*.privateKey',
  '*.sessionToken',
  '*.token',
];

export function createLogger(level: string): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } });
}
