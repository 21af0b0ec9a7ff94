import type { BrowserContext, Page } from 'playwright-core';
import request from 'supertest';
import { EVENT_TYPES } from '@switchboard/events';
import {
  launchChromium,
  requireChromium,
  serveApp,
  type ServedApp,
  type TestBrowser,
} from '../support/chromium';
import { createTestContext, type TestContext } from '../support/context';

// The API reference page in a real browser: Debian's headless Chromium (installed by
// scripts/ensure-chromium.sh, which `npm test` runs), driven by playwright-core. The page
// must render every operation and every webhook event from the served document, and load
// nothing from anywhere but the API itself.
let ctx: TestContext;
let served: ServedApp;
let base: string;
let chromium: TestBrowser;
let browser: BrowserContext;
let operationIds: string[];

beforeAll(async () => {
  requireChromium();
  ctx = await createTestContext();
  served = await serveApp(ctx.app);
  base = served.base;
  const doc = (await request(ctx.app).get('/api/v1/openapi.json')).body as {
    paths: Record<string, Record<string, { operationId: string }>>;
  };
  operationIds = Object.values(doc.paths).flatMap((item) =>
    Object.values(item).map((op) => op.operationId),
  );
  chromium = await launchChromium();
  browser = chromium.browser;
}, 60_000);

afterAll(async () => {
  await chromium?.close();
  await served?.close();
  await ctx?.close();
});

/** Opens a page, recording every request that is not to the API, and every page error. */
async function open(path: string): Promise<{ page: Page; foreign: string[]; errors: string[] }> {
  const page = await browser.newPage();
  const foreign: string[] = [];
  const errors: string[] = [];
  // Anything not from the API's own origin is refused and remembered (blob: is Redoc's
  // search worker, made by the page itself).
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(`${base}/`) || url.startsWith('blob:') || url.startsWith('data:')) {
      return route.continue();
    }
    foreign.push(url);
    return route.abort();
  });
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(msg.text());
  });
  await page.goto(`${base}${path}`);
  return { page, foreign, errors };
}

/**
 * Waits for Redoc to render `selector`. A busy machine can take many times the 5 s it takes
 * alone, so the wait is long; if it still fails, the page's errors and refused requests say
 * why, rather than a bare timeout.
 */
async function rendered(
  opened: { page: Page; foreign: string[]; errors: string[] },
  selector: string,
): Promise<void> {
  try {
    await opened.page.waitForSelector(selector, { timeout: 60_000 });
  } catch (err) {
    const { foreign, errors } = opened;
    throw new Error(`${String(err)}\npage errors: ${JSON.stringify({ errors, foreign })}`);
  }
}

const sectionOf = (page: Page, tag: string, operationId: string) =>
  page.locator(`[id="tag/${tag}/operation/${operationId}"]`);

describe('GET /api/v1/docs in Chromium', () => {
  it('renders every operation and every webhook event, loading nothing from elsewhere', async () => {
    const opened = await open('/api/v1/docs');
    const { page, foreign, errors } = opened;
    await rendered(opened, '[id="tag/Calls/operation/listCalls"]');
    const ids = await page.$$eval('[id^="operation/"]', (els) =>
      els.map((el) => el.id.slice('operation/'.length)),
    );
    expect(ids).toEqual(expect.arrayContaining(operationIds));
    for (const event of EVENT_TYPES) {
      const id = `${event.replace(/[._]([a-z])/g, (_m, c: string) => c.toUpperCase())}Event`;
      await expect(sectionOf(page, 'Webhook-events', id).textContent()).resolves.toContain(event);
    }
    const outbound = await sectionOf(page, 'Calls', 'startOutboundCall').textContent();
    expect(outbound).toContain('Idempotency-Key');
    expect(outbound).toContain('409');
    // The introduction's sections are in the menu too.
    const menu = await page.locator('[role="menu"]').first().textContent();
    for (const heading of ['Authentication', 'Errors', 'Pagination', 'Webhooks', 'Versioning']) {
      expect(menu).toContain(heading);
    }
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('works under /v1 too, without authentication', async () => {
    const opened = await open('/v1/docs');
    const { page, foreign, errors } = opened;
    await rendered(opened, '[id="tag/Webhooks/operation/createWebhook"]');
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});

describe('GET /api/v1/docs over HTTP', () => {
  it('is HTML that loads Redoc from the API, with a CSP that allows nothing else', async () => {
    const res = await request(ctx.app).get('/api/v1/docs').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.text).toContain('<script src="docs/redoc.standalone.js">');
    expect(res.text).not.toMatch(/https?:\/\//);
    const script = await request(ctx.app).get('/api/v1/docs/redoc.standalone.js').expect(200);
    expect(script.headers['content-type']).toMatch(/javascript/);
    expect(script.text).not.toContain('cdn.redoc.ly');
  });

  it('sends /docs/ to /docs, so the relative URLs resolve', async () => {
    const res = await request(ctx.app).get('/v1/docs/?x=1').expect(301);
    expect(res.headers.location).toBe('/v1/docs?x=1');
  });
});
