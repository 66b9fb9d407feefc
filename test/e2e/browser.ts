/**
 * Headless Chromium for the browser tests (issue 12): Debian's `chromium` driven by
 * playwright-core, one browser per test file, the app listening on 127.0.0.1 only.
 * scripts/ensure-chromium.sh installs the package when apt can; without a browser the
 * tests skip and say why.
 */
import { existsSync } from 'node:fs';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createApp } from '../../api/app.js';

export const CHROMIUM_CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((p): p is string => !!p);

export function chromiumPath(): string | null {
  return CHROMIUM_CANDIDATES.find((p) => existsSync(p)) ?? null;
}

export interface Harness {
  browser: Browser;
  server: Server;
  base: string;
}

/** Starts the app on an ephemeral loopback port and launches Chromium; null (with the reason printed) when there is no browser. */
export async function startHarness(): Promise<Harness | null> {
  const executablePath = chromiumPath();
  if (!executablePath) {
    console.error(`[e2e] skipped: no Chromium at ${CHROMIUM_CANDIDATES.join(', ')} (scripts/ensure-chromium.sh installs Debian's chromium when apt-get is usable)`);
    return null;
  }
  const server = createApp().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
  return { browser, server, base: `http://127.0.0.1:${port}` };
}

export async function stopHarness(h: Harness | null): Promise<void> {
  if (!h) return;
  await h.browser.close();
  await new Promise<void>((resolve) => h.server.close(() => resolve()));
}

/**
 * Call inside a `describe`: starts the harness before its tests (skipping them without a
 * browser) and stops it after; the returned function gives the running harness.
 */
export function useHarness(): () => Harness {
  let h: Harness | null = null;
  before(async function () {
    h = await startHarness();
    if (!h) this.skip();
  });
  after(async () => {
    await stopHarness(h);
  });
  return () => {
    if (!h) throw new Error('the e2e harness is not running');
    return h;
  };
}

/** A fresh page that records Content-Security-Policy violations and page errors. */
export async function newPage(h: Harness): Promise<{ page: Page; problems: string[] }> {
  const context = await h.browser.newContext({ baseURL: h.base, locale: 'id-ID' });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  return { page, problems };
}
