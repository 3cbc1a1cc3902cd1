import type { Server } from 'node:http';
import type { BrowserContext, Page } from 'playwright-core';
import { EventStore } from '@lib/event-store';
import { quoteStream } from '@lib/quotes';
import { Clock } from '@lib/shared';
import { startPartner, withMarkup } from '../../examples/pricing-partner/partner';
import { DEMO_TEMPLATE } from '../../apps/api-gateway/src/demo-template';
import { QuoteFixtures } from '../quotes-fixtures';
import { ADMIN_TOKEN, type TestApp } from '../support/test-app';
import { collectPageErrors, freePort, launchBrowser, screenshot, startListeningApp } from './support/browser';

const DAY = 24 * 60 * 60 * 1000;
const PARTNER_DELAY_MS = 2500;
const PHONE = { width: 390, height: 844 };
const euro = (locale: string, amount: number) => new Intl.NumberFormat(locale, { style: 'currency', currency: 'EUR' }).format(amount);

/** Waits until `read` gives `expected` (the page answers in its own time); fails with the last value after 5 s. */
async function eventually<T>(read: () => T | Promise<T>, expected: T): Promise<void> {
  let last: T | undefined;
  for (const started = Date.now(); Date.now() - started < 5_000; await new Promise((resolve) => setTimeout(resolve, 50))) {
    last = await read();
    if (JSON.stringify(last) === JSON.stringify(expected)) return;
  }
  expect(last).toEqual(expected);
}

describe('the customer pages in a browser', () => {
  let app: TestApp;
  let baseUrl: string;
  let partner: Server;
  let browser: { context: BrowserContext; close: () => Promise<void> };
  let page: Page;
  let pageErrors: string[];
  let clockOffset = 0;
  const org = { id: '', slug: 'glass-and-frame', apiKey: '', templateId: '' };

  const admin = (method: string, path: string, body?: unknown) => app.request(method, `/admin/v1/organizations${path}`, { token: ADMIN_TOKEN, body });
  const apiCall = (method: string, path: string, body?: unknown) => app.request(method, `/api/v1${path}`, { token: org.apiKey, body });

  /** A quote of a new submission of the demo organization, created with `body` and sent: its id and the customer's e-mail. */
  async function sentQuote(body: Record<string, unknown> = {}, submission: { locale?: string } = {}) {
    const fixtures = new QuoteFixtures(app);
    const submissionId = await fixtures.submission({ ...org, organizationId: org.id, readOnlyKey: '', signingSecret: null }, submission);
    const quoteId: string = (await apiCall('POST', `/submissions/${submissionId}/quotes`, body)).body.quoteId;
    await apiCall('POST', `/quotes/${quoteId}/send`, { recipients: ['ada@example.com'] });
    const [mail] = await fixtures.awaitMails(quoteId);
    return { quoteId, mail };
  }

  /**
   * Lets the first request to `url` reach the service and drops its answer, as a dropped connection
   * does; later ones go through. Returns each request's Idempotency-Key and, for the first, what
   * the service answered.
   */
  async function loseFirstAnswer(url: string): Promise<Array<{ key: string | undefined; answer?: any }>> {
    const sent: Array<{ key: string | undefined; answer?: any }> = [];
    await page.route(url, async (route) => {
      sent.push({ key: route.request().headers()['idempotency-key'] });
      if (sent.length > 1) return route.continue();
      sent[0].answer = await (await route.fetch()).json();
      await route.abort('connectionreset');
    });
    return sent;
  }

  /** The price the service computes for a configuration, through the storefront API as any client. */
  async function basePricing(slug: string, templateId: string, configuration: unknown) {
    const { sessionId, customerToken } = (await app.request('POST', `/storefront/v1/${slug}/sessions`, { body: { templateId } })).body;
    const res = await app.request('PUT', `/storefront/v1/sessions/${sessionId}/configuration`, { token: customerToken, body: configuration });
    expect(res.status).toBe(200);
    return res.body.basePricing as { lineItems: { unitPrice: number; quantity: number }[]; subtotal: number };
  }

  beforeAll(async () => {
    ({ app, baseUrl } = await startListeningApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', QUOTE_EXPIRY_CHECK_MS: '50' }));
    const clock = app.get(Clock);
    const now = clock.now.bind(clock);
    jest.spyOn(clock, 'now').mockImplementation(() => now() + clockOffset);

    const created = await admin('POST', '', { name: 'Glass & Frame Ltd', slug: org.slug, locale: 'en', unitSystem: 'metric', currency: 'EUR' });
    expect(created.status).toBe(201);
    org.id = created.body.id;
    org.apiKey = (await admin('POST', `/${org.id}/api-keys`, { name: 'browser test' })).body.key;
    org.templateId = (await admin('POST', `/${org.id}/templates`, DEMO_TEMPLATE)).body.id;
    const { secret } = (await admin('POST', `/${org.id}/signing-secret`)).body;
    const partnerPort = await freePort();
    // A partner that thinks for a while, so that the customer sees the wait and then its price.
    partner = startPartner({ secret, port: partnerPort, host: '127.0.0.1', markupPercent: 10, delayMs: PARTNER_DELAY_MS });
    const live = await admin('PATCH', `/${org.id}`, {
      settings: { pricingWebhookUrl: `http://127.0.0.1:${partnerPort}/webhooks`, externalPricingEnabled: true, pricingTimeoutMs: 15000, quoteDefaults: { taxRate: 21, validityDays: 30 } },
    });
    expect(live.status).toBe(200);
    jest.spyOn(process.stdout, 'write').mockImplementation(() => true); // the partner's log lines

    browser = await launchBrowser();
  });

  beforeEach(async () => {
    page = await browser.context.newPage();
    pageErrors = collectPageErrors(page);
  });
  afterEach(async () => {
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((done) => setTimeout(done, PARTNER_DELAY_MS + 200)); // the partner's last answer
    await new Promise((done) => (partner ? partner.close(done) : done(undefined)));
    await app?.close();
    jest.restoreAllMocks();
  });

  it('configures a window, shows the base price, then the partner price, and submits it; the quote link shows the quote and takes the acceptance', async () => {
    await page.goto(`${baseUrl}/c/${org.slug}/${org.templateId}`);
    await page.getByRole('heading', { name: 'Configure your window' }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Price confirmed by Glass & Frame Ltd.' }).waitFor();

    // A size out of range is reported next to the field, in the API's rule.
    const width = page.getByLabel('Width (mm)').first();
    await width.fill('5000');
    await page.locator('#f-width-error').filter({ hasText: 'Must be at most 3,000 mm.' }).waitFor();
    await expect(width.getAttribute('aria-invalid')).resolves.toBe('true');
    await page.getByRole('status').filter({ hasText: 'Correct the marked fields to see a price.' }).waitFor();

    await width.fill('1400');
    await page.getByLabel('Insect screen').check();
    await page.getByLabel('Outside colour').selectOption({ label: 'Anthracite' });
    const configuration = {
      width: 1400, height: 1400, unitAmount: 1,
      components: [{ id: 'c1', componentId: 'TT', width: 1400, height: 1400, options: ['hr2'] }],
      options: ['screen'], insideColorId: null, outsideColorId: 'ral7016', notes: '', section: null,
    };
    const base = await basePricing(org.slug, org.templateId, configuration);
    const external = withMarkup(base.lineItems as any, 10).reduce((sum, item) => sum + item.quantity * item.unitPrice, 0);
    const subtotal = page.locator('aside.price tfoot td');

    // The base price at once, while the partner is still thinking...
    await page.getByRole('status').filter({ hasText: 'Waiting for the price from Glass & Frame Ltd…' }).waitFor();
    await expect(subtotal.textContent()).resolves.toBe(euro('en', base.subtotal));
    await screenshot(page, 'configurator-waiting');
    // ...then the partner's adjusted price arrives over the live stream.
    await page.getByRole('status').filter({ hasText: 'Price confirmed by Glass & Frame Ltd.' }).waitFor({ timeout: 10000 });
    await expect(subtotal.textContent()).resolves.toBe(euro('en', Math.round(external * 100) / 100));
    await screenshot(page, 'configurator', { docs: true });

    await page.getByLabel('Name').fill('Ada Lovelace');
    await page.getByLabel('E-mail').fill('not-an-address');
    await page.getByRole('button', { name: 'Request a quote' }).click();
    await page.locator('#f-customer-email-error').filter({ hasText: 'Enter a valid e-mail address.' }).waitFor();
    await page.getByLabel('E-mail').fill('ada@example.com');
    await page.getByRole('button', { name: 'Request a quote' }).click();
    await page.getByRole('heading', { name: 'Thank you, we have received your request.' }).waitFor();
    await expect(page.getByText(`Tilt-turn window · 1,400 mm × 1,400 mm · ${euro('en', Math.round(external * 100) / 100)}`).count()).resolves.toBe(1);
    await screenshot(page, 'configurator-submitted', { docs: true });

    const submissions = (await apiCall('GET', '/submissions')).body.data;
    expect(submissions).toHaveLength(1);
    expect(submissions[0]).toMatchObject({ customer: { name: 'Ada Lovelace', email: 'ada@example.com' }, dimensions: { width: 1400, height: 1400 }, locale: 'en' });
    const submission = (await apiCall('GET', `/submissions/${submissions[0].id}`)).body;
    expect(submission.externalPricing).toMatchObject({ subtotal: Math.round(external * 100) / 100 });

    // The organization quotes and sends it through the API; the customer opens the link from the e-mail.
    const quoteId = (await apiCall('POST', `/submissions/${submission.id}/quotes`, { reference: 'Kitchen window' })).body.quoteId;
    expect((await apiCall('POST', `/quotes/${quoteId}/send`, { recipients: ['ada@example.com'] })).status).toBe(200);
    const [mail] = await new QuoteFixtures(app).awaitMails(quoteId);
    expect(mail.quoteUrl.startsWith(`${baseUrl}/q/`)).toBe(true);
    const quote = (await apiCall('GET', `/quotes/${quoteId}`)).body;

    await page.goto(mail.quoteUrl);
    await page.getByRole('heading', { name: `Quote ${quote.quoteNumber}` }).waitFor();
    await expect(page.locator('tr.grand td.n').textContent()).resolves.toBe(euro('en', quote.total));
    await expect(page.locator('tbody tr').count()).resolves.toBe(quote.lineItems.length);
    await expect(page.getByText('Reference: Kitchen window').count()).resolves.toBe(1);
    await expect(page.getByRole('link', { name: 'Download the quote as PDF' }).getAttribute('href')).resolves.toMatch(/storefront\/v1\/quotes\/[0-9A-Za-z]{43}\/pdf$/);
    expect((await apiCall('GET', `/quotes/${quoteId}`)).body.status).toBe('viewed');
    await screenshot(page, 'quote', { docs: true });

    // Accepting needs the confirmation box.
    await page.getByRole('button', { name: 'Accept quote' }).click();
    await page.getByText('Tick the box to confirm that you accept the quote.').waitFor();
    expect((await apiCall('GET', `/quotes/${quoteId}`)).body.status).toBe('viewed');
    // The rest by keyboard alone: name, Tab to the box, Space, Tab to the button, Enter.
    await page.getByLabel('Your name (optional)').focus();
    await page.keyboard.type('Ada Lovelace');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space');
    await expect(page.getByLabel('I accept this quote with its prices and terms.').isChecked()).resolves.toBe(true);
    await expect(page.locator('#confirm-error').textContent()).resolves.toBe('');
    await expect(page.getByLabel('I accept this quote with its prices and terms.').getAttribute('aria-invalid')).resolves.toBeNull();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByText(/^You accepted this quote on .+\. Glass & Frame Ltd will contact you/).waitFor();
    await expect(page.getByRole('button', { name: 'Accept quote' }).count()).resolves.toBe(0);
    expect((await apiCall('GET', `/quotes/${quoteId}`)).body.status).toBe('accepted');
    await screenshot(page, 'quote-accepted');

    await page.setViewportSize(PHONE);
    await screenshot(page, 'quote-accepted-phone', { docs: true });
  });

  it('falls back to the calculated price when the partner misses the wait, and still shows its price when it arrives late', async () => {
    expect((await admin('PATCH', `/${org.id}`, { settings: { pricingTimeoutMs: 1000 } })).status).toBe(200);
    try {
      await page.goto(`${baseUrl}/c/${org.slug}`);
      await page.getByRole('status').filter({ hasText: 'The price from Glass & Frame Ltd did not arrive in time, so this is our calculated price.' }).waitFor();
      await screenshot(page, 'configurator-fallback');
      await page.getByRole('status').filter({ hasText: 'Price confirmed by Glass & Frame Ltd.' }).waitFor({ timeout: 10000 });
    } finally {
      await admin('PATCH', `/${org.id}`, { settings: { pricingTimeoutMs: 15000 } });
    }
  });

  it('shows the partner price also when the service refuses the live stream (429): it reads the session and follows again later', async () => {
    await page.route('**/storefront/v1/sessions/*/stream*', (route) =>
      route.fulfill({ status: 429, headers: { 'retry-after': '15' }, contentType: 'application/json', body: '{"error":{"code":"rate_limited","message":"too many streams"}}' }),
    );
    await page.goto(`${baseUrl}/c/${org.slug}`);
    await page.getByRole('heading', { name: 'Configure your window' }).waitFor();
    // Without the stream the page reads the session when it is refused, and again when it retries (15 s).
    await page.getByRole('status').filter({ hasText: 'Price confirmed by Glass & Frame Ltd.' }).waitFor({ timeout: 25_000 });
    // The first refusal and the one 15 s later, not a reconnect every two seconds.
    expect(pageErrors.splice(0)).toEqual(Array(2).fill(expect.stringMatching(/^429 GET .+\/stream\?token=/)));
  }, 40_000);

  it('writes the quantities of a partner\'s price lines in the page\'s language, and says the subtotal in the status for screen readers', async () => {
    // A partner's lines may have any quantity above 0 (api-v1): decimals and thousands.
    await page.route('**/storefront/v1/sessions/*/configuration', async (route) => {
      const response = await route.fetch();
      const session = await response.json();
      session.pricing = {
        ...session.pricing,
        source: 'external',
        awaitingExternal: false,
        lineItems: [
          { description: 'Dichtung (lfm)', quantity: 5.2, unitPrice: 3.125, total: 16.25, itemKey: null },
          { description: 'Schrauben', quantity: 1200, unitPrice: 0.05, total: 60, itemKey: null },
        ],
        subtotal: 76.25,
      };
      await route.fulfill({ response, json: session });
    });
    await page.goto(`${baseUrl}/c/${org.slug}?lang=de`);
    await page.getByRole('status').filter({ hasText: 'Preis von Glass & Frame Ltd bestätigt.' }).waitFor({ timeout: 10000 });
    await expect(page.locator('aside.price tbody td:first-child').allTextContents()).resolves.toEqual([
      expect.stringMatching(/^Dichtung \(lfm\) \(5,2 × 3,125\s€\)$/),
      expect.stringMatching(/^Schrauben \(1\.200 × 0,05\s€\)$/),
    ]);
    await expect(page.getByRole('status').textContent()).resolves.toMatch(/^Preis von Glass & Frame Ltd bestätigt\. Zwischensumme \(ohne MwSt\.\): 76,25\s€$/);
    await page.unroute('**/storefront/v1/sessions/*/configuration');
  });

  it('counts a save that never answers as failed after 15 s, and saves again until the price comes', async () => {
    let puts = 0;
    // The first save is never answered (a stalled mobile connection, a stuck proxy); the next go through.
    await page.route('**/storefront/v1/sessions/*/configuration', (route) => (route.request().method() === 'PUT' && puts++ === 0 ? undefined : route.continue()));
    await page.goto(`${baseUrl}/c/${org.slug}`);
    await page.getByRole('heading', { name: 'Configure your window' }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Your last change could not be saved yet' }).waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: 'Retry now' }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Price confirmed by Glass & Frame Ltd.' }).waitFor({ timeout: 15_000 });
    expect(puts).toBeGreaterThanOrEqual(2);
    await page.unroute('**/storefront/v1/sessions/*/configuration');
  }, 45_000);

  it('takes the focus to the way on when a submit finds the session expired', async () => {
    await page.goto(`${baseUrl}/c/${org.slug}`);
    await page.getByRole('status').filter({ hasText: 'Glass & Frame Ltd' }).waitFor();
    await page.getByLabel('Name').fill('Ada Lovelace');
    await page.getByLabel('E-mail').fill('ada@example.com');
    await page.route('**/storefront/v1/sessions/*/submit', (route) =>
      route.fulfill({ status: 410, contentType: 'application/json', body: '{"error":{"code":"session_expired","message":"expired"}}' }),
    );
    await page.getByRole('button', { name: 'Request a quote' }).focus();
    await page.keyboard.press('Enter');
    await page.getByText('This configuration has expired.').waitFor();
    await expect(page.evaluate('document.activeElement?.textContent')).resolves.toBe('Continue with your choices');
    await page.unroute('**/storefront/v1/sessions/*/submit');
    expect(pageErrors.splice(0)).toEqual([expect.stringMatching(/^410 POST .+\/submit$/)]);
  });

  it('takes an enquiry on the contact form: field errors in place, then a lead in the API', async () => {
    await page.goto(`${baseUrl}/contact/${org.slug}`);
    await page.getByRole('heading', { name: 'Contact Glass & Frame Ltd' }).waitFor();
    await page.getByRole('button', { name: 'Send message' }).click();
    await page.locator('#f-name-error').filter({ hasText: 'This field is required.' }).waitFor();
    await expect(page.locator('#f-message-error').textContent()).resolves.toBe('This field is required.');
    await expect(page.getByLabel('Name').getAttribute('aria-invalid')).resolves.toBe('true');

    await page.getByLabel('Name').fill('Grace Hopper');
    await page.getByLabel('E-mail').fill('grace@example.com');
    await page.getByLabel('Your message').fill('Can you replace six <b>sash</b> windows in March?');
    await screenshot(page, 'contact', { docs: true });
    await page.getByRole('button', { name: 'Send message' }).click();
    await page.getByRole('heading', { name: 'Thank you, your message has been sent.' }).waitFor();

    const leads = (await apiCall('GET', '/leads')).body.data;
    expect(leads).toEqual([expect.objectContaining({ name: 'Grace Hopper', email: 'grace@example.com', message: 'Can you replace six sash windows in March?', status: 'new' })]);
  });

  it('sends an enquiry whose answer was lost again under the same Idempotency-Key (one lead), the focus back on the button', async () => {
    await page.goto(`${baseUrl}/contact/${org.slug}`);
    await page.getByRole('heading', { name: 'Contact Glass & Frame Ltd' }).waitFor();
    await page.getByLabel('Name').fill('Alan Turing');
    await page.getByLabel('E-mail').fill('alan@example.com');
    await page.getByLabel('Your message').fill('Two tilt-turn windows, lost answer test');
    const keys = await loseFirstAnswer('**/leads'); // the lead is made; its answer never reaches the page
    const send = page.getByRole('button', { name: 'Send message' });
    await send.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'That did not work. Please try again.' }).waitFor();
    await expect(page.evaluate('document.activeElement?.textContent')).resolves.toBe('Send message');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Thank you, your message has been sent.' }).waitFor();
    expect(keys).toHaveLength(2);
    expect(keys[0].key).toMatch(/^[0-9a-f]{32}$/);
    expect(keys[1].key).toBe(keys[0].key);
    const leads = (await apiCall('GET', '/leads')).body.data as Array<{ message: string }>;
    expect(leads.filter((lead) => lead.message === 'Two tilt-turn windows, lost answer test')).toHaveLength(1);
  });

  it('speaks German and Dutch, and shows sizes in inches to an imperial organization', async () => {
    await page.goto(`${baseUrl}/c/${org.slug}?lang=de`);
    await page.getByRole('heading', { name: 'Fenster konfigurieren' }).waitFor();
    await expect(page.locator('html').getAttribute('lang')).resolves.toBe('de');
    await page.getByRole('status').filter({ hasText: 'Preis von Glass & Frame Ltd bestätigt.' }).waitFor({ timeout: 10000 });
    await expect(page.locator('aside.price tfoot td').textContent()).resolves.toMatch(/^\d{1,3}(\.\d{3})*,\d\d\s€$/);

    // A second part does not fit beside the first until the width is shared.
    await page.getByRole('button', { name: 'Teil hinzufügen' }).click();
    await expect(page.evaluate('document.activeElement.closest("fieldset.part").querySelector("legend").textContent')).resolves.toBe('Teil 2');
    // The one part filled the window: the added one shares it.
    await expect(page.getByLabel('Breite (mm)').nth(2).inputValue()).resolves.toBe('600');
    await page.getByLabel('Breite (mm)').nth(2).fill('900');
    await page.getByText('Die Elemente sind zusammen 1.500 mm breit, breiter als das Fenster (1.200 mm).').waitFor();
    await page.getByRole('button', { name: 'Breite gleichmäßig aufteilen' }).click();
    await expect(page.getByLabel('Breite (mm)').nth(2).inputValue()).resolves.toBe('600');
    await page.getByRole('status').filter({ hasText: 'Preis von Glass & Frame Ltd bestätigt.' }).waitFor({ timeout: 10000 });
    await expect(page.getByText('Die Elemente sind zusammen').count()).resolves.toBe(0);
    await expect(page.locator('aside.price tbody td:first-child').allTextContents()).resolves.toEqual(expect.arrayContaining(['Teil 1 · Tilt-turn sash', 'Teil 2 · Tilt-turn sash']));
    await screenshot(page, 'configurator-de');

    const imperial = await admin('POST', '', { name: 'Raamwerk BV', slug: 'raamwerk', locale: 'nl', unitSystem: 'imperial', currency: 'EUR' });
    const templateId = (await admin('POST', `/${imperial.body.id}/templates`, DEMO_TEMPLATE)).body.id;
    await page.setViewportSize(PHONE);
    await page.goto(`${baseUrl}/c/raamwerk`);
    await page.getByRole('heading', { name: 'Stel uw raam samen' }).waitFor();
    const width = page.getByLabel('Breedte (in)').first();
    await expect(width.inputValue()).resolves.toBe('47,2'); // 1200 mm, written as the hints write it
    await page.getByRole('status').filter({ hasText: 'Berekende prijs.' }).waitFor();
    const saved = page.waitForRequest((request) => request.method() === 'PUT' && request.url().endsWith('/configuration'));
    await width.fill('50');
    expect(JSON.parse((await saved).postData() ?? '{}')).toMatchObject({ width: 1270, components: [{ width: 1270 }] });
    const base = await basePricing('raamwerk', templateId, {
      width: 1270, height: 1400, components: [{ id: 'c1', componentId: 'TT', width: 1270, height: 1400, options: ['hr2'] }],
    });
    await page.locator('aside.price tfoot td').filter({ hasText: euro('nl', base.subtotal) }).waitFor();
    await width.fill('200');
    await page.locator('#f-width-error').filter({ hasText: 'Maximaal 118,1 in.' }).waitFor();
    await width.fill('50');
    await page.getByRole('status').filter({ hasText: 'Berekende prijs.' }).waitFor();
    await screenshot(page, 'configurator-phone-nl', { docs: true });
  });

  it('takes a declined quote with its reason', async () => {
    const { quoteId, mail } = await sentQuote();

    await page.goto(`${mail.quoteUrl}?lang=de`);
    await page.getByLabel('Grund (optional)').fill('Zu teuer');
    await page.getByRole('button', { name: 'Angebot ablehnen' }).click();
    await page.getByText(/^Sie haben dieses Angebot am .+ abgelehnt\./).waitFor();
    await expect(page.locator('.status').textContent()).resolves.toBe('Abgelehnt');
    await expect(page.getByRole('button').count()).resolves.toBe(0);
    expect((await apiCall('GET', `/quotes/${quoteId}`)).body.status).toBe('rejected');
    const events = await app.get(EventStore).readStream(quoteStream(quoteId));
    expect(events.find((e) => e.type === 'quote.v1.rejected')?.data).toMatchObject({ reason: 'Zu teuer' });
    await screenshot(page, 'quote-rejected-de');
  });

  it('keeps the quote page within the screen with words wider than it, and every amount in view', async () => {
    const { mail } = await sentQuote({
      reference: `PO-${'1234567890'.repeat(19)}`,
      currency: 'HUF',
      taxRate: 27,
      lineItems: [
        { description: `Profile-${'x'.repeat(1990)}`, quantity: 3, unitPrice: 485000.5, itemType: 'window' },
        { description: 'Installation', quantity: 1, unitPrice: 120000, itemType: 'labor' },
      ],
    });
    for (const width of [320, 375, 1000]) {
      await page.setViewportSize({ width, height: 800 });
      await page.goto(`${mail.quoteUrl}?lang=en`);
      await page.locator('.lines').waitFor();
      // (a string: this file is compiled without the DOM's types)
      const layout = await page.evaluate<Record<string, unknown>>(`(() => {
        const wrap = document.querySelector('.table-wrap');
        const box = wrap.getBoundingClientRect();
        const figures = [...document.querySelectorAll('.lines .n')].filter((cell) => cell.offsetParent !== null);
        return {
          pageOverflow: document.documentElement.scrollWidth - window.innerWidth,
          tableOverflow: wrap.scrollWidth - wrap.clientWidth,
          figuresOutside: figures.filter((cell) => cell.getBoundingClientRect().right > box.right + 0.5).map((cell) => cell.textContent),
          grandTotal: document.querySelector('.lines tr.grand .n')?.textContent,
        };
      })()`);
      expect({ width, ...layout }).toEqual({ width, pageOverflow: 0, tableOverflow: 0, figuresOutside: [], grandTotal: expect.stringMatching(/2,000,251/) });
    }
    await screenshot(page, 'quote-long-words');
  });

  it('answers only the version it shows: when a new version was sent meanwhile, the acceptance is refused and the page shows the new one', async () => {
    const { quoteId, mail } = await sentQuote({ lineItems: [{ description: 'Tilt-turn window', quantity: 1, unitPrice: 551.88 }] });
    await page.goto(mail.quoteUrl);
    await page.getByText(/^Version 1 · /).waitFor();
    await expect(page.locator('tr.grand td.n').textContent()).resolves.toBe(euro('en', 667.77));

    // The organization replaces the breakdown and sends version 2 while the page still shows version 1.
    expect((await apiCall('PUT', `/quotes/${quoteId}/line-items`, { lineItems: [{ description: 'Lift-and-slide door', quantity: 1, unitPrice: 9999 }], revise: true })).body.total).toBe(12098.79);
    expect((await apiCall('POST', `/quotes/${quoteId}/send`, { recipients: ['ada@example.com'] })).status).toBe(200);
    await page.getByLabel('Your name (optional)').fill('Ada Lovelace');
    await page.getByLabel('Reason (optional)').fill('Maybe later');
    await page.getByLabel('I accept this quote with its prices and terms.').check();
    await page.getByRole('button', { name: 'Accept quote' }).click();
    await page.getByText('Glass & Frame Ltd has sent a new version of this quote meanwhile; nothing was answered. Please check version 2 below before you answer.').waitFor();
    await page.getByText(/^Version 2 · /).waitFor();
    // What was typed is still there; the confirmation was for version 1, so it is asked again.
    await expect(page.getByLabel('Your name (optional)').inputValue()).resolves.toBe('Ada Lovelace');
    await expect(page.getByLabel('Reason (optional)').inputValue()).resolves.toBe('Maybe later');
    await expect(page.getByLabel('I accept this quote with its prices and terms.').isChecked()).resolves.toBe(false);
    await expect(page.locator('tr.grand td.n').textContent()).resolves.toBe(euro('en', 12098.79));
    expect((await apiCall('GET', `/quotes/${quoteId}`)).body).toMatchObject({ version: 2, status: 'viewed' });
    // The refusal the page handled is the only failed request.
    expect(pageErrors.splice(0)).toEqual([expect.stringMatching(/^409 POST .+\/accept$/)]);

    await page.getByLabel('I accept this quote with its prices and terms.').check();
    await page.getByRole('button', { name: 'Accept quote' }).click();
    await page.getByText(/^You accepted this quote on /).waitFor();
    expect((await apiCall('GET', `/quotes/${quoteId}`)).body).toMatchObject({ version: 2, status: 'accepted' });
  });

  it('says only that a new version is coming while the quote is being revised, also to an answer the revision refused', async () => {
    const { quoteId, mail } = await sentQuote();
    await page.goto(mail.quoteUrl);
    await page.getByText(/^Version 1 · /).waitFor();

    // The organization starts a revision while the page still offers version 1.
    expect((await apiCall('PATCH', `/quotes/${quoteId}`, { taxRate: 9, revise: true })).status).toBe(200);
    await page.getByLabel('I accept this quote with its prices and terms.').check();
    await page.getByRole('button', { name: 'Accept quote' }).click();
    const preparing = page.getByText('Glass & Frame Ltd is preparing a new version of this quote; you will receive it by e-mail.');
    await preparing.waitFor();
    await expect(page.getByText('can no longer be accepted').count()).resolves.toBe(0);
    await expect(page.getByRole('button').count()).resolves.toBe(0);
    expect(pageErrors.splice(0)).toEqual([expect.stringMatching(/^409 POST .+\/accept$/)]);

    await page.reload();
    await preparing.waitFor();
    await expect(page.locator('.status').textContent()).resolves.toBe('Being revised');
    await expect(page.getByText('can no longer be accepted').count()).resolves.toBe(0);
    await expect(page.getByRole('button').count()).resolves.toBe(0);
    expect((await apiCall('GET', `/quotes/${quoteId}`)).body.status).toBe('draft');
  });

  it('keeps an expired quote readable but closed to acceptance', async () => {
    const { quoteId, mail } = await sentQuote({ validityDays: 1 }, { locale: 'nl' });
    clockOffset = DAY + 60_000;
    for (let i = 0; i < 100 && (await apiCall('GET', `/quotes/${quoteId}`)).body.status !== 'expired'; i++) await new Promise((done) => setTimeout(done, 50));

    await page.goto(mail.quoteUrl);
    // The customer configured in Dutch: the quote page speaks Dutch without being told.
    await page.getByText(/^Deze offerte is op .+ verlopen en kan niet meer worden geaccepteerd/).waitFor();
    await expect(page.locator('.status').textContent()).resolves.toBe('Verlopen');
    await expect(page.locator('tbody tr').count()).resolves.toBeGreaterThan(0);
    await expect(page.getByRole('button').count()).resolves.toBe(0);
    await screenshot(page, 'quote-expired-nl', { docs: true });
  });
  it('lets the customer pick one of several products, and says when a linked product does not exist', async () => {
    const door = await admin('POST', `/${org.id}/templates`, { ...DEMO_TEMPLATE, name: 'Garden door', slug: 'garden-door' });
    expect(door.status).toBe(201);
    await page.goto(`${baseUrl}/c/${org.slug}/tpl_no_such_template`);
    await page.getByText('This product is not available.').waitFor();
    expect(pageErrors.splice(0)).toEqual([expect.stringMatching(/^404 GET .*\/templates\/tpl_no_such_template$/)]);
    // No product is preselected, so that picking any is a change.
    await expect(page.getByLabel('Product').inputValue()).resolves.toBe('');
    await expect(page.locator('#template option:checked').textContent()).resolves.toBe('Choose a product');

    await page.getByLabel('Product').selectOption({ label: 'Garden door' });
    await page.getByRole('status').filter({ hasText: 'Glass & Frame Ltd' }).waitFor();
    await expect(page.getByText('This product is not available.').count()).resolves.toBe(0);
    const started = page.waitForRequest((request) => request.method() === 'POST' && request.url().endsWith(`/storefront/v1/${org.slug}/sessions`));
    await page.getByLabel('Product').selectOption({ label: 'Tilt-turn window' });
    expect(JSON.parse((await started).postData() ?? '{}')).toMatchObject({ templateId: org.templateId, locale: 'en' });
    await page.getByRole('status').filter({ hasText: 'Glass & Frame Ltd' }).waitFor();

    // An organization with a single product: the customer picks that one and configures it.
    const single = await admin('POST', '', { name: 'Single Pane Ltd', slug: 'single-pane', locale: 'en', unitSystem: 'metric', currency: 'EUR' });
    expect((await admin('POST', `/${single.body.id}/templates`, DEMO_TEMPLATE)).status).toBe(201);
    await page.goto(`${baseUrl}/c/single-pane/tpl_no_such_template`);
    await page.getByText('This product is not available.').waitFor();
    await page.getByLabel('Product').selectOption({ label: 'Tilt-turn window' });
    await page.getByRole('status').filter({ hasText: 'Calculated price.' }).waitFor();
    await expect(page.getByText('This product is not available.').count()).resolves.toBe(0);
    expect(pageErrors.splice(0)).toEqual([expect.stringMatching(/^404 GET .*\/templates\/tpl_no_such_template$/)]);
  });

  it('says next to the submit button why nothing was sent, and takes the focus to what needs correcting', async () => {
    await page.setViewportSize(PHONE);
    await page.goto(`${baseUrl}/c/${org.slug}`);
    await page.getByRole('status').filter({ hasText: 'Glass & Frame Ltd' }).waitFor();
    await page.getByLabel('Name').fill('Ada Lovelace');
    await page.getByLabel('E-mail').fill('ada@example.com');
    const submit = page.getByRole('button', { name: 'Request a quote' });
    const notSent = page.getByRole('alert').filter({ hasText: /^Not sent: / });
    const focused = () => page.evaluate('document.activeElement.id');

    // Parts wider than the window: the message describes every part's width, and the first one gets the focus.
    await page.getByRole('button', { name: 'Add a part' }).click(); // 600 + 600 mm: they share the window
    await page.getByLabel('Width (mm)').nth(2).fill('900');
    const layoutError = page.getByText('Together the components are 1,500 mm wide, more than the window (1,200 mm).');
    await layoutError.waitFor();
    const layoutErrorId = await layoutError.getAttribute('id');
    expect(layoutErrorId).toBeTruthy();
    for (const part of [1, 2]) {
      await expect(page.getByLabel('Width (mm)').nth(part).getAttribute('aria-describedby')).resolves.toContain(layoutErrorId);
    }
    await submit.click();
    await notSent.filter({ hasText: 'Not sent: correct the marked fields first.' }).waitFor();
    await expect(focused()).resolves.toBe(await page.getByLabel('Width (mm)').nth(1).getAttribute('id'));
    // Next to the button, on the phone's screen with it.
    await expect(submit.getAttribute('aria-describedby')).resolves.toBe(await notSent.getAttribute('id'));
    const [button, message] = await Promise.all([submit.boundingBox(), notSent.boundingBox()]);
    expect(message!.y - (button!.y + button!.height)).toBeLessThan(40);
    await screenshot(page, 'configurator-not-sent-phone');

    // A field in error gets the focus; a change takes the message away.
    await page.getByRole('button', { name: 'Share the width evenly' }).click();
    await expect(notSent.count()).resolves.toBe(0);
    await page.getByRole('status').filter({ hasText: 'Glass & Frame Ltd' }).waitFor();
    await page.getByLabel('Number of units').fill('1.5');
    await page.locator('#f-unitAmount-error').filter({ hasText: 'Enter a whole number.' }).waitFor();
    await submit.click();
    await notSent.filter({ hasText: 'Not sent: correct the marked fields first.' }).waitFor();
    await expect(focused()).resolves.toBe('f-unitAmount');
    await page.getByLabel('Number of units').fill('1');
    await page.getByRole('status').filter({ hasText: 'Glass & Frame Ltd' }).waitFor({ timeout: 10000 });

    // A change that cannot be saved: no field to correct, so the focus goes to the message.
    await page.route('**/storefront/v1/sessions/*/configuration', (route) => route.abort('internetdisconnected'));
    await page.getByLabel('Height (mm)').first().fill('1300');
    await page.getByRole('status').filter({ hasText: 'Your last change could not be saved yet' }).waitFor();
    await submit.click();
    await notSent.filter({ hasText: 'Not sent: your last change could not be saved yet. Please try again in a moment.' }).waitFor();
    await expect(focused()).resolves.toBe('submit-error');
    await page.unroute('**/storefront/v1/sessions/*/configuration');
    await page.getByRole('button', { name: 'Retry now' }).click();
    await notSent.waitFor({ state: 'detached' }); // saved now
    await submit.click();
    await page.getByRole('heading', { name: 'Thank you, we have received your request.' }).waitFor();
  });

  it('confirms a submit whose answer was lost: the retry under the same Idempotency-Key gets the first answer, and a 409 for the submitted session shows its confirmation', async () => {
    const loseFirstSubmitAnswer = () => loseFirstAnswer('**/storefront/v1/sessions/*/submit');
    const submitted = async () => (await apiCall('GET', '/submissions?limit=100')).body.data.length;
    const before = await submitted();

    await page.goto(`${baseUrl}/c/${org.slug}`);
    await page.getByRole('status').filter({ hasText: 'Glass & Frame Ltd' }).waitFor();
    await page.getByLabel('Name').fill('Ada Lovelace');
    await page.getByLabel('E-mail').fill('ada@example.com');
    let sent = await loseFirstSubmitAnswer();
    await page.getByRole('button', { name: 'Request a quote' }).click();
    await page.getByText('That did not work. Please try again.').waitFor();
    await page.getByRole('button', { name: 'Request a quote' }).click();
    await page.getByRole('heading', { name: 'Thank you, we have received your request.' }).waitFor();
    await expect(page.getByText(`Your reference: ${sent[0].answer.submissionId}`).count()).resolves.toBe(1);
    expect(sent).toHaveLength(2);
    expect(sent[0].key).toMatch(/^[0-9a-f]{32}$/);
    expect(sent[1].key).toBe(sent[0].key);

    // Details changed before the retry are another request (another key): the service refuses it
    // for the session submitted already, and the page shows that submission.
    await page.goto(`${baseUrl}/c/${org.slug}`);
    await page.getByRole('status').filter({ hasText: 'Glass & Frame Ltd' }).waitFor();
    await page.getByLabel('Name').fill('Ada Lovelace');
    await page.getByLabel('E-mail').fill('ada@example.com');
    sent = await loseFirstSubmitAnswer();
    await page.getByRole('button', { name: 'Request a quote' }).click();
    await page.getByText('That did not work. Please try again.').waitFor();
    await page.getByLabel('Phone (optional)').fill('+44 20 7946 0000');
    await page.getByRole('button', { name: 'Request a quote' }).click();
    await page.getByRole('heading', { name: 'Thank you, we have received your request.' }).waitFor();
    await expect(page.getByText(`Your reference: ${sent[0].answer.submissionId}`).count()).resolves.toBe(1);
    expect(sent[1].key).not.toBe(sent[0].key);
    expect(pageErrors.splice(0)).toEqual([expect.stringMatching(/^409 POST .+\/submit$/)]);
    expect(await submitted()).toBe(before + 2);
  });

  it('confirms a submit the service stored but is slow to show (503 writeStored with the submission), instead of asking to try again', async () => {
    await page.route('**/storefront/v1/sessions/*/submit', async (route) => {
      // The request reaches the service; its answer is turned into the one a lagging read side gives.
      const { submissionId } = await (await route.fetch()).json();
      await route.fulfill({
        status: 503,
        contentType: 'application/json',
        headers: { 'retry-after': '1' },
        body: JSON.stringify({ error: { code: 'unavailable', message: 'The write was stored but the read side is lagging.', details: { writeStored: true, submissionId } } }),
      });
    });
    await page.goto(`${baseUrl}/c/${org.slug}`);
    await page.getByRole('status').filter({ hasText: 'Glass & Frame Ltd' }).waitFor();
    await page.getByLabel('Name').fill('Ada Lovelace');
    await page.getByLabel('E-mail').fill('ada@example.com');
    await page.getByRole('button', { name: 'Request a quote' }).click();
    await page.getByRole('heading', { name: 'Thank you, we have received your request.' }).waitFor();
    await expect(page.getByText(/^Your reference: sub_/).count()).resolves.toBe(1);
    expect(pageErrors.splice(0)).toEqual([expect.stringMatching(/^503 POST .+\/submit$/)]);
  });

  it('sends the details the form shows, also those the browser filled in without an input event (autofill, a restored page), and keeps them in the draft', async () => {
    await page.goto(`${baseUrl}/c/${org.slug}`);
    await page.getByRole('status').filter({ hasText: 'Glass & Frame Ltd' }).waitFor();
    // As a password manager or the back button's form restoration does: the value changes, no event fires.
    const fillSilently = (label: string, value: string) => page.getByLabel(label).evaluate((input, text) => ((input as { value: string }).value = text), value);
    await fillSilently('Name', 'Ada Lovelace');
    await fillSilently('E-mail', 'ada@example.com');
    await page.getByLabel('City (optional)').fill('London');

    // The first attempt's answer is lost, so the draft is what the customer gets back on a reload.
    const sent: unknown[] = [];
    await page.route('**/storefront/v1/sessions/*/submit', (route) => {
      sent.push(route.request().postDataJSON());
      return sent.length > 1 ? route.continue() : route.abort('internetdisconnected');
    });
    await page.getByRole('button', { name: 'Request a quote' }).click();
    await page.getByText('That did not work. Please try again.').waitFor();
    expect(sent).toEqual([{ customer: expect.objectContaining({ name: 'Ada Lovelace', email: 'ada@example.com', city: 'London', phone: null }) }]);

    await page.reload();
    await page.getByRole('status').filter({ hasText: 'Glass & Frame Ltd' }).waitFor();
    await expect(page.getByLabel('Name').inputValue()).resolves.toBe('Ada Lovelace');
    await expect(page.getByLabel('E-mail').inputValue()).resolves.toBe('ada@example.com');
    await page.getByRole('button', { name: 'Request a quote' }).click();
    await page.getByRole('heading', { name: 'Thank you, we have received your request.' }).waitFor();
    expect(sent[1]).toEqual(sent[0]);
  });

  it('marks the price as outdated while a change is not saved, and saves it again until it gets through, by itself or on "Retry now"', async () => {
    await page.goto(`${baseUrl}/c/${org.slug}`);
    await page.getByRole('status').filter({ hasText: 'Glass & Frame Ltd' }).waitFor();
    const subtotal = page.locator('aside.price tfoot td');
    const price = await subtotal.textContent();
    const width = page.getByLabel('Width (mm)').first();
    const outdated = page.locator('aside.price table.outdated');

    // Offline: the old price stays readable, dimmed and said to be out of date.
    await page.route('**/storefront/v1/sessions/*/configuration', (route) => route.abort('internetdisconnected'));
    await width.fill('1450');
    await page.getByRole('status').filter({ hasText: 'Your last change could not be saved yet, so there is no up-to-date price. Trying again…' }).waitFor();
    await outdated.waitFor();
    await page.getByText('This price is not up to date: it is for your choices before the last change.').waitFor();
    await expect(subtotal.textContent()).resolves.toBe(price);
    await screenshot(page, 'configurator-offline');
    // Back online: the next retry (a second after the first failure) saves the change.
    const saved = page.waitForRequest((request) => request.method() === 'PUT' && request.url().endsWith('/configuration'));
    await page.unroute('**/storefront/v1/sessions/*/configuration');
    expect(JSON.parse((await saved).postData() ?? '{}')).toMatchObject({ width: 1450, components: [{ width: 1450 }] });
    await outdated.waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: 'Glass & Frame Ltd' }).waitFor();
    await expect(page.getByText('This price is not up to date').isVisible()).resolves.toBe(false);
    await expect(subtotal.textContent()).resolves.not.toBe(price);
    await expect(page.getByRole('button', { name: 'Retry now' }).isVisible()).resolves.toBe(false);

    // The service failing: the save is tried again by itself (the delays are the page's
    // RETRY_DELAYS_MS; only the count is checked here); "Retry now" does not wait for the next one.
    let failed = 0;
    await page.route('**/storefront/v1/sessions/*/configuration', (route) => {
      failed++;
      return route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ error: { code: 'unavailable', message: 'down' } }) });
    });
    await width.fill('1350');
    for (let i = 0; i < 100 && failed < 3; i++) await page.waitForTimeout(100);
    expect(failed).toBe(3);
    await outdated.waitFor();
    await page.unroute('**/storefront/v1/sessions/*/configuration');
    await page.getByRole('button', { name: 'Retry now' }).click();
    await outdated.waitFor({ state: 'detached', timeout: 2500 });
    await page.getByRole('status').filter({ hasText: 'Glass & Frame Ltd' }).waitFor();
    expect(pageErrors.splice(0)).toEqual(Array(3).fill(expect.stringMatching(/^503 PUT .+\/configuration$/)));
  });

  it('keeps parts filling the window when a size is emptied and typed again, reads "1.500" in German as 1500 mm, and asks for a whole number of units', async () => {
    await page.goto(`${baseUrl}/c/${org.slug}?lang=de`);
    await page.getByRole('status').filter({ hasText: 'Glass & Frame Ltd' }).waitFor();
    const width = page.getByLabel('Breite (mm)').first();
    const height = page.getByLabel('Höhe (mm)').first();
    await expect(page.getByText('400 mm bis 3.000 mm').count()).resolves.toBeGreaterThan(0);

    await width.fill('');
    await height.fill('');
    const saved = page.waitForRequest((request) => request.method() === 'PUT' && request.url().endsWith('/configuration') && JSON.parse(request.postData() ?? '{}').height === 1300);
    await width.fill('1.500');
    await height.fill('1300');
    expect(JSON.parse((await saved).postData() ?? '{}')).toMatchObject({ width: 1500, height: 1300, components: [{ width: 1500, height: 1300 }] });
    await expect(page.getByLabel('Breite (mm)').nth(1).inputValue()).resolves.toBe('1500');
    await expect(page.getByLabel('Höhe (mm)').nth(1).inputValue()).resolves.toBe('1300');
    await page.getByRole('status').filter({ hasText: 'Glass & Frame Ltd' }).waitFor();

    // Shared evenly, the parts keep sharing the window as it changes.
    await page.getByRole('button', { name: 'Teil hinzufügen' }).click();
    await page.getByRole('button', { name: 'Breite gleichmäßig aufteilen' }).click();
    await width.fill('');
    await width.fill('1601');
    await expect(page.getByLabel('Breite (mm)').nth(1).inputValue()).resolves.toBe('800');
    await expect(page.getByLabel('Breite (mm)').nth(2).inputValue()).resolves.toBe('801');
    await page.getByRole('status').filter({ hasText: 'Glass & Frame Ltd' }).waitFor();

    await page.getByLabel('Anzahl').fill('2.5');
    await page.locator('#f-unitAmount-error').filter({ hasText: 'Bitte eine ganze Zahl eingeben.' }).waitFor();
  });

  it('takes back the inches it shows: a width shared evenly and typed again as shown still fits', async () => {
    const imperial = await admin('POST', '', { name: 'Kozijn BV', slug: 'kozijn', locale: 'nl', unitSystem: 'imperial', currency: 'EUR' });
    expect((await admin('POST', `/${imperial.body.id}/templates`, DEMO_TEMPLATE)).status).toBe(201);
    await page.goto(`${baseUrl}/c/kozijn`);
    await page.getByRole('status').filter({ hasText: 'Berekende prijs.' }).waitFor();
    await page.getByLabel('Breedte (in)').first().fill('40,2'); // 1021 mm
    await page.getByRole('button', { name: 'Deel toevoegen' }).click();
    await page.getByRole('button', { name: 'Breedte gelijk verdelen' }).click();
    const [first, second] = [page.getByLabel('Breedte (in)').nth(1), page.getByLabel('Breedte (in)').nth(2)];
    await expect(Promise.all([first.inputValue(), second.inputValue()])).resolves.toEqual(['20,1', '20,1']);
    await page.getByRole('status').filter({ hasText: 'Berekende prijs.' }).waitFor();

    const saved = page.waitForRequest((request) => request.method() === 'PUT' && request.url().endsWith('/configuration'));
    await first.fill('20,1');
    await second.fill('20.1');
    expect(JSON.parse((await saved).postData() ?? '{}')).toMatchObject({ width: 1021, components: [{ width: 510 }, { width: 511 }] });
    await page.getByRole('status').filter({ hasText: 'Berekende prijs.' }).waitFor();
    await expect(page.getByText('Samen zijn de onderdelen').count()).resolves.toBe(0);
  });

  it('takes back the inches a part shows typed key by key, and a part added to a window its parts fill shares it with them', async () => {
    const imperial = await admin('POST', '', { name: 'Kozijn Twee BV', slug: 'kozijn-twee', locale: 'en', unitSystem: 'imperial', currency: 'EUR' });
    expect((await admin('POST', `/${imperial.body.id}/templates`, DEMO_TEMPLATE)).status).toBe(201);
    await page.goto(`${baseUrl}/c/kozijn-twee`);
    await page.getByRole('status').filter({ hasText: 'Calculated price.' }).waitFor();
    await page.getByLabel('Width (in)').first().fill('40.2'); // 1021 mm
    await page.getByRole('status').filter({ hasText: 'Calculated price.' }).waitFor();
    // The one part fills the window: the added one shares it (510 + 511 mm), and nothing is refused.
    await page.getByRole('button', { name: 'Add a part' }).click();
    const [first, second] = [page.getByLabel('Width (in)').nth(1), page.getByLabel('Width (in)').nth(2)];
    await expect(Promise.all([first.inputValue(), second.inputValue()])).resolves.toEqual(['20.1', '20.1']);
    await page.getByRole('status').filter({ hasText: 'Calculated price.' }).waitFor();

    const saves: Array<Record<string, any>> = [];
    page.on('request', (request) => {
      if (request.method() === 'PUT' && request.url().endsWith('/configuration')) saves.push(JSON.parse(request.postData() ?? '{}'));
    });
    await first.fill('');
    await first.pressSequentially('20.1', { delay: 60 });
    await page.getByRole('status').filter({ hasText: 'Calculated price.' }).waitFor();
    await eventually(() => saves.at(-1)?.components?.map((c: { width: number }) => c.width), [510, 511]);
    await expect(page.getByText('Together the components').count()).resolves.toBe(0);
  });

  it('keeps the focus in place for a keyboard user when the parts are drawn again', async () => {
    await page.goto(`${baseUrl}/c/${org.slug}`);
    await page.getByRole('button', { name: 'Add a part' }).waitFor();
    const focusKey = () => page.evaluate('document.activeElement?.dataset.focus ?? document.activeElement?.tagName');
    await page.getByRole('button', { name: 'Add a part' }).click();
    await page.getByRole('button', { name: 'Share the width evenly' }).focus();
    await page.keyboard.press('Enter');
    await expect(focusKey()).resolves.toBe('components.divide');
    await page.locator('[data-focus="components[0].componentId"]').focus();
    await page.keyboard.press('ArrowDown');
    await expect(focusKey()).resolves.toBe('components[0].componentId');
    await page.getByRole('button', { name: 'Remove part 2' }).focus();
    await page.keyboard.press('Enter');
    await expect(focusKey()).resolves.toBe('components.add');
  });

  it('keeps what the customer typed on the quote page when an answer fails, and says so also when the network is down', async () => {
    const { quoteId, mail } = await sentQuote();
    await page.goto(mail.quoteUrl);
    await page.getByLabel('Your name (optional)').fill('Ada Lovelace');
    await page.getByLabel('Reason (optional)').fill('Too expensive');
    const decline = page.getByRole('button', { name: 'Decline quote' });

    // The network is down: the answer does not get through.
    await page.route('**/storefront/v1/quotes/**', (route) => route.abort('internetdisconnected'));
    await decline.click();
    await page.getByRole('alert').filter({ hasText: 'That did not work. Please try again.' }).waitFor();
    await page.unroute('**/storefront/v1/quotes/**');
    // The service fails the answer.
    await page.route('**/storefront/v1/quotes/*/reject', (route) => route.fulfill({ status: 503, contentType: 'application/json', body: '{"error":{"code":"unavailable","message":"down"}}' }));
    await decline.click();
    await page.getByRole('alert').filter({ hasText: 'That did not work. Please try again.' }).waitFor();
    await expect(page.getByLabel('Reason (optional)').inputValue()).resolves.toBe('Too expensive');
    await expect(page.getByLabel('Your name (optional)').inputValue()).resolves.toBe('Ada Lovelace');
    await expect(decline.isEnabled()).resolves.toBe(true);
    // Pressed from the keyboard, the focus is back on the button to try again.
    await decline.focus();
    await page.keyboard.press('Enter');
    await eventually(() => page.evaluate('document.activeElement?.textContent'), 'Decline quote');
    await page.unroute('**/storefront/v1/quotes/*/reject');

    await decline.click();
    await page.getByText(/^You declined this quote on /).waitFor();
    const events = await app.get(EventStore).readStream(quoteStream(quoteId));
    expect(events.find((e) => e.type === 'quote.v1.rejected')?.data).toMatchObject({ reason: 'Too expensive' });
    expect(pageErrors.splice(0)).toEqual([expect.stringMatching(/^503 POST .+\/reject$/), expect.stringMatching(/^503 POST .+\/reject$/)]);
  });

  it('confirms an acceptance whose answer was lost: the retry under the same Idempotency-Key is told the quote is accepted, not that it can no longer be answered', async () => {
    const { quoteId, mail } = await sentQuote();
    await page.goto(mail.quoteUrl);
    await page.getByLabel('Your name (optional)').fill('Ada Lovelace');
    const keys = await loseFirstAnswer('**/storefront/v1/quotes/*/accept'); // the quote is accepted; the answer never reaches the page
    await page.getByLabel('I accept this quote with its prices and terms.').check();
    const accept = page.getByRole('button', { name: 'Accept quote' });
    await accept.click();
    await page.getByRole('alert').filter({ hasText: 'That did not work. Please try again.' }).waitFor();
    await accept.click();
    await page.getByText(/^You accepted this quote on /).waitFor();
    await expect(page.getByText('This quote can no longer be accepted or declined.').count()).resolves.toBe(0);
    expect(keys).toHaveLength(2);
    expect(keys[0].key).toMatch(/^[0-9a-f]{32}$/);
    expect(keys[1].key).toBe(keys[0].key);
    const events = await app.get(EventStore).readStream(quoteStream(quoteId));
    expect(events.filter((e) => e.type === 'quote.v1.accepted')).toHaveLength(1);
  });

  it('says an answer did not work when the quote changed meanwhile and cannot be loaded again, and leaves the page as it was to try again', async () => {
    const { quoteId, mail } = await sentQuote();
    await page.goto(mail.quoteUrl);
    await page.getByText(/^Version 1 · /).waitFor();
    await page.getByLabel('Your name (optional)').fill('Ada Lovelace');
    const confirm = page.getByLabel('I accept this quote with its prices and terms.');
    await confirm.check();
    const accept = page.getByRole('button', { name: 'Accept quote' });

    // The organization starts a revision, so the acceptance is refused (409); loading the quote again fails.
    expect((await apiCall('PATCH', `/quotes/${quoteId}`, { taxRate: 9, revise: true })).status).toBe(200);
    await page.route('**/storefront/v1/quotes/*', (route) => route.fulfill({ status: 503, contentType: 'application/json', body: '{"error":{"code":"unavailable","message":"down"}}' }));
    await accept.click();
    await page.getByRole('alert').filter({ hasText: 'That did not work. Please try again.' }).waitFor();
    await expect(page.getByText(/^Version 1 · /).count()).resolves.toBe(1);
    await expect(page.getByLabel('Your name (optional)').inputValue()).resolves.toBe('Ada Lovelace');
    await expect(confirm.isChecked()).resolves.toBe(true);
    await expect(accept.isEnabled()).resolves.toBe(true);
    expect(pageErrors.splice(0)).toEqual([expect.stringMatching(/^409 POST .+\/accept$/), expect.stringMatching(/^503 GET .+\/quotes\/[^/]+$/)]);

    // Tried again once the quote loads: the page shows the revision under way.
    await page.unroute('**/storefront/v1/quotes/*');
    await accept.click();
    await page.getByText('Glass & Frame Ltd is preparing a new version of this quote; you will receive it by e-mail.').waitFor();
    await expect(page.getByText('That did not work').count()).resolves.toBe(0);
    expect(pageErrors.splice(0)).toEqual([expect.stringMatching(/^409 POST .+\/accept$/)]);
  });

  it('keeps the configuration and the details across a language switch and an expired session', async () => {
    await page.goto(`${baseUrl}/c/${org.slug}`);
    await page.getByRole('status').filter({ hasText: 'Glass & Frame Ltd' }).waitFor();
    await page.getByLabel('Width (mm)').first().fill('1400');
    await page.getByLabel('Insect screen').check();
    await page.getByLabel('Outside colour').selectOption({ label: 'Anthracite' });
    await page.getByLabel('Notes').fill('Ground floor');
    await page.getByRole('status').filter({ hasText: 'Glass & Frame Ltd' }).waitFor(); // saved in this session
    await page.getByLabel('Name').fill('Ada Lovelace');
    await page.getByLabel('E-mail').fill('ada@example.com');

    const started = page.waitForRequest((request) => request.method() === 'POST' && request.url().endsWith('/sessions'));
    const saved = page.waitForRequest((request) => request.method() === 'PUT' && request.url().endsWith('/configuration'));
    await page.getByRole('link', { name: 'Deutsch' }).click();
    await page.getByRole('heading', { name: 'Fenster konfigurieren' }).waitFor();
    expect(JSON.parse((await started).postData() ?? '{}')).toMatchObject({ locale: 'de' });
    expect(JSON.parse((await saved).postData() ?? '{}')).toMatchObject({ width: 1400, options: ['screen'], outsideColorId: 'ral7016', notes: 'Ground floor', components: [{ width: 1400 }] });
    await expect(page.getByLabel('Breite (mm)').first().inputValue()).resolves.toBe('1400');
    await expect(page.getByLabel('Insect screen').isChecked()).resolves.toBe(true);
    await expect(page.getByLabel('Farbe außen').inputValue()).resolves.toBe('ral7016');
    await expect(page.getByLabel('Anmerkungen').inputValue()).resolves.toBe('Ground floor');
    await expect(page.getByLabel('Name').inputValue()).resolves.toBe('Ada Lovelace');
    await expect(page.getByLabel('E-Mail').inputValue()).resolves.toBe('ada@example.com');
    await page.getByRole('status').filter({ hasText: 'Glass & Frame Ltd' }).waitFor();

    // The session expires; the page's way back starts a new one with the same choices.
    await page.route('**/storefront/v1/sessions/*/configuration', (route) =>
      route.fulfill({ status: 410, contentType: 'application/json', body: '{"error":{"code":"session_expired","message":"expired"}}' }),
    );
    await page.getByLabel('Breite (mm)').first().fill('1500');
    await page.getByText('Diese Konfiguration ist abgelaufen.').waitFor();
    // The field the customer was typing in is gone: the focus is on the way on.
    await expect(page.evaluate('document.activeElement?.textContent')).resolves.toBe('Mit Ihrer Auswahl fortfahren');
    await page.unroute('**/storefront/v1/sessions/*/configuration');
    await page.getByRole('link', { name: 'Mit Ihrer Auswahl fortfahren' }).click();
    await page.getByRole('status').filter({ hasText: 'Glass & Frame Ltd' }).waitFor();
    await expect(page.getByLabel('Breite (mm)').first().inputValue()).resolves.toBe('1500');
    await expect(page.getByLabel('Name').inputValue()).resolves.toBe('Ada Lovelace');
    expect(pageErrors.splice(0)).toEqual([expect.stringMatching(/^410 PUT .+\/configuration$/)]);
  });
});
