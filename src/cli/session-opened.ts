// What a person needs the moment a session opens: the QR code to scan, in the terminal, the scan page to open
// instead, and the deep link (what the mock identity app takes on the local chains).
import { type Output, terminalQr, terminalQrWidth } from './output.js';

export interface OpenedSession {
  qrData: string;
  deepLink: string;
  scanPageUrl?: unknown;
  sessionToken: string;
  expiresAt: string;
}

export async function showOpenedSession(out: Output, session: OpenedSession, what: string): Promise<void> {
  const scanPage = typeof session.scanPageUrl === 'string' ? session.scanPageUrl : undefined;
  out.emit({
    event: 'session',
    sessionToken: session.sessionToken,
    expiresAt: session.expiresAt,
    deepLink: session.deepLink,
    ...(scanPage ? { scanPageUrl: scanPage } : {}),
  });
  if (out.json) return;
  out.say(`Scan this QR code with the identity app to ${what}:`);
  out.say();
  out.say(await terminalQr(session.qrData));
  const width = terminalQrWidth(session.qrData);
  const columns = process.stdout.isTTY ? process.stdout.columns : 0;
  if (columns > 0 && columns < width) {
    out.say(`(this terminal is ${columns} columns wide and the QR code needs ${width}: widen it and run again, or open the scan page)`);
  }
  if (scanPage) out.say(`Or open the scan page, which shows it larger and follows the session: ${scanPage}`);
  out.say(`Deep link (on the local chains: npm run identity-app -- approve '<deep link>'):`);
  out.say(session.deepLink);
  out.say();
}
