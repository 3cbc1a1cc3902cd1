import { seedDemo } from '../apps/api-gateway/src/seed-demo';
import { EventStore } from '@lib/event-store';
import { ADMIN_TOKEN, TestApp } from './support/test-app';
import { QuoteFixtures, type Org } from './quotes-fixtures';

/** The HTML shells of the customer pages and their assets (the pages themselves: test/browser). */
describe('customer pages', () => {
  let app: TestApp;
  let f: QuoteFixtures;
  let org: Org;

  const get = (url: string, headers: Record<string, string> = {}) => app.request('GET', url, { headers });
  const body = (res: { body: unknown }) => String(res.body);

  beforeAll(async () => {
    app = await TestApp.start();
    f = new QuoteFixtures(app);
    org = await f.organization();
    await app.request('PATCH', `/admin/v1/organizations/${org.organizationId}`, { token: ADMIN_TOKEN, body: { name: 'Fenster "Bau" & Söhne', locale: 'de' } });
  });
  afterAll(() => app.close());

  it('serves the configurator in the organization language, with ?lang= to choose another', async () => {
    const res = await get(`/c/${org.slug}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(body(res)).toContain('<html lang="de">');
    expect(body(res)).toContain(`data-page="configurator" data-locale="de" data-root="../" data-org="${org.slug}"`);
    expect(body(res)).toContain('<script src="../assets/configurator.js" defer></script>');
    expect(body(res)).toContain('<title>Fenster &quot;Bau&quot; &amp; Söhne</title>');
    expect(res.headers['content-security-policy']).toContain("script-src 'self';");
    expect(res.headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(res.headers['x-content-type-options']).toBe('nosniff');

    expect(body(await get(`/c/${org.slug}?lang=nl`))).toContain('<html lang="nl">');
    expect(body(await get(`/c/${org.slug}?lang=fr`))).toContain('<html lang="de">');
  });

  it('hands the template of /c/{orgSlug}/{templateId} to the page as text', async () => {
    const res = await get(`/c/${org.slug}/${org.templateId}`);
    expect(body(res)).toContain(`data-root="../../" data-org="${org.slug}" data-template="${org.templateId}"`);
    expect(body(res)).toContain('<script src="../../assets/configurator.js" defer></script>');
    const hostile = await get(`/c/${org.slug}/${encodeURIComponent('"><script>alert(1)</script>')}`);
    expect(body(hostile)).toContain('data-template="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
    expect(body(hostile)).not.toContain('<script>alert');
  });

  it('answers 404 with a page for an organization that does not exist', async () => {
    for (const url of ['/c/no-such-org', '/c/no-such-org/tpl_1', '/contact/no-such-org']) {
      const res = await get(url);
      expect([res.status, body(res)]).toEqual([404, expect.stringContaining('This page does not exist.')]);
      expect(body(res)).not.toContain('<script');
    }
  });

  it('serves the contact form', async () => {
    const res = await get(`/contact/${org.slug}?lang=en`);
    expect(res.status).toBe(200);
    expect(body(res)).toContain('data-page="contact" data-locale="en"');
    expect(body(res)).toContain('<script src="../assets/contact.js" defer></script>');
  });

  it('serves the quote page in the customer language without counting a fetch of the link as a view', async () => {
    const submissionId = await f.submission(org, { locale: 'nl' });
    const quoteId = await f.createQuote(org, submissionId);
    await f.send(org, quoteId);
    const token = await f.customerToken(quoteId);
    const quote = await f.quote(org, quoteId);

    const res = await get(`/q/${token}`);
    expect(res.status).toBe(200);
    expect(body(res)).toContain('<html lang="nl">');
    expect(body(res)).toContain('<body data-page="quote" data-locale="nl" data-root="../">');
    expect(body(res)).not.toContain(token);
    expect(body(res)).toContain(`<title>${quote.quoteNumber} · Fenster &quot;Bau&quot; &amp; Söhne</title>`);
    expect(res.headers).toMatchObject({ 'referrer-policy': 'no-referrer', 'cache-control': 'no-store', 'x-robots-tag': 'noindex', 'x-content-type-options': 'nosniff' });
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect((await f.quote(org, quoteId)).status).toBe('sent');
    expect(body(await get(`/q/${token}?lang=en`))).toContain('<html lang="en">');

    const unknown = await get(`/q/${'A'.repeat(43)}`);
    expect([unknown.status, body(unknown)]).toEqual([404, expect.stringContaining('data-page="quote"')]);
  });

  it('redirects a page address with a trailing slash to the page, keeping its query', async () => {
    const token = 'A'.repeat(43);
    for (const [path, location] of [
      [`/q/${token}/`, `../${token}`],
      [`/q/${token}/?lang=de`, `../${token}?lang=de`],
      [`/c/${org.slug}/`, `../${org.slug}`],
      [`/c/${org.slug}/tpl_1/`, '../tpl_1'],
      [`/contact/${org.slug}/?lang=nl`, `../${org.slug}?lang=nl`],
    ]) {
      const res = await get(path);
      expect([path, res.status, res.headers.location]).toEqual([path, 308, location]);
      // through the hooks of every other request (its id; authentication and rate limits are onRequest hooks too)
      expect(res.headers['x-request-id']).toEqual(expect.any(String));
      expect(new URL(String(res.headers.location), `http://host${path}`).pathname).toBe(path.replace(/\/(\?.*)?$/, ''));
    }
  });

  it('serves the page scripts and the stylesheet, revalidated by ETag', async () => {
    for (const [file, type] of [['configurator.js', 'text/javascript'], ['quote.js', 'text/javascript'], ['contact.js', 'text/javascript'], ['styles.css', 'text/css']]) {
      const res = await get(`/assets/${file}`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(new RegExp(`^${type}`));
      expect(body(res).length).toBeGreaterThan(500);
      const again = await get(`/assets/${file}`, { 'if-none-match': String(res.headers.etag) });
      expect(again.status).toBe(304);
    }
    // The bundle is self-contained: no module imports, nothing fetched from elsewhere.
    const script = body(await get('/assets/configurator.js'));
    expect(script).not.toMatch(/\bimport\s*[({'"]|https?:\/\/(?!www\.w3\.org)/);
    expect((await get('/assets/missing.js')).status).toBe(404);
  });
});

describe('the demo seed', () => {
  it('prints a configurator URL and a contact form URL that open the demo organization pages', async () => {
    const app = await TestApp.start();
    try {
      const lines = (await seedDemo(app.app, app.config))!;
      const urls = lines.map((line) => line.match(/(?:Configurator|Contact form): +(\S+)/)?.[1]).filter((url): url is string => !!url);
      expect(urls).toHaveLength(2);
      for (const url of urls) {
        expect(url.startsWith(app.config.publicBaseUrl)).toBe(true);
        const res = await app.request('GET', url.slice(app.config.publicBaseUrl.length));
        expect([res.status, String(res.body)]).toEqual([200, expect.stringContaining('data-org="demo-windows"')]);
      }
      const templateId = lines.find((line) => line.includes('Template:'))!.split(/\s+/).pop();
      expect(urls[0]).toBe(`${app.config.publicBaseUrl}/c/demo-windows/${templateId}`);

      // A later start names the demo organization and where another API key comes from; no key.
      const organizationId = lines[0].match(/\((org_[^)]+)\)/)![1];
      const again = (await seedDemo(app.app, app.config))!;
      expect(again.join('\n')).toContain(`POST ${app.config.publicBaseUrl}/admin/v1/organizations/${organizationId}/api-keys`);
      expect(again.join('\n')).not.toMatch(/qk_/);
      expect(again.some((line) => line.includes(`Configurator:        ${app.config.publicBaseUrl}/c/demo-windows`))).toBe(true);

      // Recorded as the product's doing (audit:export shows `system`), not the admin's: no one used the admin token.
      const all = await app.get(EventStore).readAll({ after: 0, maxCount: 100 });
      const seeded = all.filter((event) => (event.data as { organizationId?: string }).organizationId === organizationId);
      expect(seeded.map((event) => event.type)).toEqual(expect.arrayContaining(['organizationSlug.v1.claimed', 'organization.v1.created', 'template.v1.created', 'organization.v1.apiKeyCreated']));
      expect(new Set(seeded.map((event) => event.metadata.actor))).toEqual(new Set(['system:demo-seed']));
    } finally {
      await app.close();
    }
  });
});
