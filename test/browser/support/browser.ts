import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { TestApp } from '../../support/test-app';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ROOT = resolve(__dirname, '../../..');
export const ARTIFACTS = join(ROOT, 'test-artifacts/screenshots');
const DOCS = join(ROOT, 'docs/screenshots');

export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as AddressInfo;
  await new Promise((done) => probe.close(done));
  return port;
}

/** The whole product on a real socket (the browser and the partner's callbacks need one). */
export async function startListeningApp(env: Record<string, string> = {}): Promise<{ app: TestApp; baseUrl: string }> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const app = await TestApp.start({ PUBLIC_BASE_URL: baseUrl, ...env });
  await app.app.listen({ port, host: '127.0.0.1' });
  return { app, baseUrl };
}

/** Headless Chromium with a fresh profile that talks to nothing but the pages under test. */
export async function launchBrowser(): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  const profile = mkdtempSync(join(tmpdir(), 'pages-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * A full-page screenshot under test-artifacts/screenshots; with `docs`, and when the run is asked
 * to with UPDATE_SCREENSHOTS=1, also copied to docs/screenshots (the current pictures in the
 * README), so that an ordinary run leaves the work tree as it was.
 */
export async function screenshot(page: Page, name: string, options: { docs?: boolean } = {}): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = join(ARTIFACTS, `${name}.png`);
  await page.evaluate('window.scrollTo(0, 0)'); // sticky parts where they are on arrival
  await page.screenshot({ path: file, fullPage: true });
  if (options.docs && process.env.UPDATE_SCREENSHOTS === '1') {
    mkdirSync(DOCS, { recursive: true });
    copyFileSync(file, join(DOCS, `${name}.png`));
  }
  return file;
}

/**
 * Errors the page logged or threw and failed requests: a page that works has none. A 422 is the
 * validation answer the pages show next to the fields, so it is expected.
 */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/^Failed to load resource/.test(message.text())) errors.push(message.text());
  });
  page.on('response', (response) => {
    if (response.status() >= 400 && response.status() !== 422) errors.push(`${response.status()} ${response.request().method()} ${response.url()}`);
  });
  return errors;
}
