import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Express } from 'express';
import { chromium, type BrowserContext } from 'playwright-core';

// The browser tests run Debian's headless Chromium (installed by scripts/ensure-chromium.sh,
// which `npm test` runs) through playwright-core.
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Fails at once, saying how to install it, when Chromium is missing. */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: run scripts/ensure-chromium.sh (npm test does)`);
  }
}

export interface TestBrowser {
  browser: BrowserContext;
  /** Closes the browser and deletes its profile. */
  close(): Promise<void>;
}

/** Headless Chromium with a fresh profile every run: nothing cached, nothing remembered. */
export async function launchChromium(): Promise<TestBrowser> {
  requireChromium();
  const profile = mkdtempSync(join(tmpdir(), 'switchboard-chromium-'));
  try {
    const browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
    });
    return {
      browser,
      async close() {
        await browser.close();
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(profile, { recursive: true, force: true });
    throw err;
  }
}

export interface ServedApp {
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** Drops open connections (a browser keeps some alive) and stops listening. */
  close(): Promise<void>;
}

/** Serves `app` on a free port of 127.0.0.1, for clients outside the process (a browser). */
export async function serveApp(app: Express): Promise<ServedApp> {
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
