// A real headless browser for the page tests: Debian's Chromium (`command -v chromium`; CI installs it), driven by
// playwright-core. No browser is ever downloaded: without Chromium on the PATH the browser tests skip, saying why.
import { execFileSync } from 'node:child_process';
import { type Browser, chromium } from 'playwright-core';

/** The Chromium binary on the PATH, or undefined. */
export function chromiumPath(): string | undefined {
  try {
    const found = execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
    return found === '' ? undefined : found;
  } catch {
    return undefined;
  }
}

export const NO_CHROMIUM = 'no chromium on the PATH (apt-get install chromium; CI installs it): the browser tests are skipped';

export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-dev-shm-usage'],
  });
}
