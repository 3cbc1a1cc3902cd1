import { CommandBus } from '@nestjs/cqrs';
import { CloseSubmissionOnAcceptance, MarkSubmissionQuoted, SubmissionLookup } from '@lib/submissions';
import { exampleConfigurationInput, exampleTemplateBody } from '@lib/templates/domain/example.fixture';
import { ADMIN_TOKEN, TestApp } from './support/test-app';

type Org = Awaited<ReturnType<TestApp['createOrganization']>>;

const LIST_FIELDS = ['id', 'templateId', 'status', 'customer', 'dimensions', 'unitAmount', 'locale', 'externalRef', 'createdAt'].sort();
const DETAIL_FIELDS = [...LIST_FIELDS, 'configuration', 'resolvedConfiguration', 'externalPricing', 'latestQuoteId', 'configHash', 'basePricing', 'currency', 'origin', 'updatedAt'].sort();

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const fieldPaths = (res: { body: any }) => res.body.error.details.fields.map((f: { path: string }) => f.path);

describe('submissions API', () => {
  let app: TestApp;
  let org: Org;
  let other: Org;
  let templateA: string;
  let templateB: string;

  async function createTemplate(organizationId: string, overrides: Record<string, unknown> = {}): Promise<string> {
    const res = await app.request('POST', `/admin/v1/organizations/${organizationId}/templates`, { token: ADMIN_TOKEN, body: { ...exampleTemplateBody(), ...overrides } });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  /** A customer configures and submits on the storefront; returns the submission id. */
  async function submitted(owner: Org, templateId: string, options: { locale?: string; width?: number; email?: string } = {}): Promise<string> {
    const started = await app.request('POST', `/storefront/v1/${owner.slug}/sessions`, { body: { templateId, ...(options.locale ? { locale: options.locale } : {}) } });
    const { sessionId, customerToken } = started.body;
    const configured = await app.request('PUT', `/storefront/v1/sessions/${sessionId}/configuration`, {
      token: customerToken,
      body: { ...exampleConfigurationInput(), width: options.width ?? 1200 },
    });
    expect(configured.status).toBe(200);
    const res = await app.request('POST', `/storefront/v1/sessions/${sessionId}/submit`, {
      token: customerToken,
      body: { customer: { name: 'Grace Hopper', email: options.email ?? 'grace@example.com', phone: '0612345678' } },
    });
    expect(res.status).toBe(201);
    return res.body.submissionId;
  }

  const get = (url: string, token = org.apiKey) => app.request('GET', url, { token });
  const patch = (id: string, body: unknown, token = org.apiKey) => app.request('PATCH', `/api/v1/submissions/${id}`, { token, body });

  async function listAll(query: string, token = org.apiKey, limit = 2): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(`/api/v1/submissions?limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ''}`, token);
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(limit);
      ids.push(...res.body.data.map((s: any) => s.id));
      cursor = res.body.nextCursor;
      pages++;
    } while (cursor && pages < 50);
    return ids;
  }

  // created oldest to newest: [a1 (template A), b1 (template B, de), a2 (template A), a3 (template A)]
  const ids: Record<'a1' | 'b1' | 'a2' | 'a3', string> = {} as any;
  const createdAt: Record<string, number> = {};
  let foreignId: string;

  beforeAll(async () => {
    app = await TestApp.start();
    [org, other] = await Promise.all([app.createOrganization(), app.createOrganization()]);
    templateA = await createTemplate(org.organizationId);
    templateB = await createTemplate(org.organizationId, { name: 'Second window' });
    for (const [key, template, locale] of [['a1', templateA], ['b1', templateB, 'de'], ['a2', templateA], ['a3', templateA]] as const) {
      ids[key] = await submitted(org, template, { locale });
      createdAt[key] = (await get(`/api/v1/submissions/${ids[key]}`)).body.createdAt;
      await pause(3);
    }
    foreignId = await submitted(other, await createTemplate(other.organizationId));
  });
  afterAll(() => app.close());

  describe('GET /api/v1/submissions', () => {
    it('lists the list fields of api-v1, newest first', async () => {
      const res = await get('/api/v1/submissions');
      expect(res.status).toBe(200);
      expect(res.body.data.map((s: any) => s.id)).toEqual([ids.a3, ids.a2, ids.b1, ids.a1]);
      expect(res.body.nextCursor).toBeNull();
      for (const item of res.body.data) expect(Object.keys(item).sort()).toEqual(LIST_FIELDS);
      expect(res.body.data.find((s: any) => s.id === ids.b1)).toEqual({
        id: ids.b1,
        templateId: templateB,
        status: 'new',
        customer: { name: 'Grace Hopper', email: 'grace@example.com', phone: '0612345678', companyName: null, address: null, postalCode: null, city: null, country: null },
        dimensions: { width: 1200, height: 1400 },
        unitAmount: 1,
        locale: 'de',
        externalRef: null,
        createdAt: createdAt.b1,
      });
    });

    it('pages through with limit and cursor', async () => {
      expect(await listAll('')).toEqual([ids.a3, ids.a2, ids.b1, ids.a1]);
      expect(await listAll('', org.apiKey, 1)).toEqual([ids.a3, ids.a2, ids.b1, ids.a1]);
    });

    it('filters by templateId, and pages within the filter', async () => {
      expect(await listAll(`&templateId=${templateA}`)).toEqual([ids.a3, ids.a2, ids.a1]);
      expect(await listAll(`&templateId=${templateB}`)).toEqual([ids.b1]);
      expect(await listAll('&templateId=tpl_unknown')).toEqual([]);
    });

    it('filters by createdAfter and createdBefore, both exclusive', async () => {
      expect(await listAll(`&createdAfter=${createdAt.b1}`)).toEqual([ids.a3, ids.a2]);
      expect(await listAll(`&createdBefore=${createdAt.a2}`)).toEqual([ids.b1, ids.a1]);
      expect(await listAll(`&createdAfter=${createdAt.a1}&createdBefore=${createdAt.a3}`)).toEqual([ids.a2, ids.b1]);
      expect(await listAll(`&createdAfter=${createdAt.a1}&createdBefore=${createdAt.a3}&templateId=${templateA}`)).toEqual([ids.a2]);
    });

    it('filters by status', async () => {
      const closed = await submitted(org, templateB);
      expect((await patch(closed, { status: 'closed' })).status).toBe(200);
      expect(await listAll('&status=closed')).toEqual([closed]);
      expect(await listAll(`&status=closed&templateId=${templateA}`)).toEqual([]);
      expect(await listAll('&status=new')).not.toContain(closed);
      expect((await patch(closed, { status: 'new' })).status).toBe(200);
    });

    it.each([
      ['status=open', 'status'],
      ['status=new&status=quoted', 'status'],
      ['createdAfter=yesterday', 'createdAfter'],
      ['createdAfter=1.5', 'createdAfter'],
      ['createdAfter=', 'createdAfter'],
      ['createdBefore=-1', 'createdBefore'],
      ['createdBefore=1e12', 'createdBefore'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['cursor=not*a*cursor', 'cursor'],
      ['orderBy=createdAt', 'orderBy'],
    ])('answers 422 validation_error for %s', async (query, path) => {
      const res = await get(`/api/v1/submissions?${query}`);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
      expect(fieldPaths(res)).toContain(path);
    });

    it("rejects a cursor of another list", async () => {
      const templates = await get('/api/v1/templates?limit=1');
      expect(templates.body.nextCursor).not.toBeNull();
      const res = await get(`/api/v1/submissions?cursor=${templates.body.nextCursor}`);
      expect(res.status).toBe(422);
      expect(fieldPaths(res)).toEqual(['cursor']);
    });

    it('refuses a cursor under other filters than it was made with, and takes it under the same ones, in any order', async () => {
      const unfiltered = await get('/api/v1/submissions?limit=1');
      const filtered = await get(`/api/v1/submissions?limit=1&templateId=${templateA}&createdAfter=${createdAt.a1}`);
      const refused = [
        `templateId=${templateA}&cursor=${unfiltered.body.nextCursor}`,
        `cursor=${filtered.body.nextCursor}`,
        `templateId=${templateB}&createdAfter=${createdAt.a1}&cursor=${filtered.body.nextCursor}`,
      ];
      for (const query of refused) {
        const res = await get(`/api/v1/submissions?${query}`);
        expect([query, res.status, res.body.error.details.fields]).toEqual([query, 422, [{ path: 'cursor', message: expect.stringContaining('other filters') }]]);
      }
      const same = await get(`/api/v1/submissions?createdAfter=${createdAt.a1}&cursor=${filtered.body.nextCursor}&templateId=${templateA}`);
      expect([same.status, same.body.data.map((each: { id: string }) => each.id)]).toEqual([200, [ids.a2]]);
    });

    it("never lists another organization's submissions", async () => {
      expect(await listAll('', other.apiKey)).toEqual([foreignId]);
      expect(await listAll('')).not.toContain(foreignId);
    });

    it('answers 401 without a valid key', async () => {
      const res = await app.request('GET', '/api/v1/submissions');
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
    });

    it('is readable with a read-only key', async () => {
      expect((await get('/api/v1/submissions', org.readOnlyKey)).status).toBe(200);
    });
  });

  describe('GET /api/v1/submissions/{id}', () => {
    it('adds the configuration, its resolved form, external pricing and the latest quote', async () => {
      const res = await get(`/api/v1/submissions/${ids.a1}`);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(DETAIL_FIELDS);
      expect(res.body).toMatchObject({
        id: ids.a1,
        configuration: exampleConfigurationInput(),
        configHash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        externalPricing: null,
        latestQuoteId: null,
        origin: 'storefront',
        resolvedConfiguration: {
          componentSelections: [
            { componentName: 'Tilt-turn sash', componentType: 'TT', width: 600, height: 1400, selectedOptions: [{ code: 'HR+++', name: 'Triple glazing', optionGroup: 'Glazing' }] },
            { componentName: 'Fixed glazing', componentType: 'F', width: 600, height: 1400, selectedOptions: [{ code: 'HR++', name: 'Double glazing', optionGroup: 'Glazing' }] },
          ],
          selectedOptions: [{ code: 'SCR', name: 'Insect screen' }],
          insideColor: { name: 'White' },
          outsideColor: { name: 'Anthracite' },
          notes: '',
          selectedSection: 'Ground floor',
        },
      });
      expect(res.body.basePricing.subtotal).toBeGreaterThan(0);
    });

    it('keeps the names the customer chose when the template is renamed later', async () => {
      const template = await createTemplate(org.organizationId);
      const id = await submitted(org, template);
      const renamed = exampleTemplateBody();
      renamed.options[1].name = 'Triple glazing, renamed';
      expect((await app.request('PUT', `/admin/v1/organizations/${org.organizationId}/templates/${template}`, { token: ADMIN_TOKEN, body: renamed })).status).toBe(200);
      const res = await get(`/api/v1/submissions/${id}`);
      expect(res.body.resolvedConfiguration.componentSelections[0].selectedOptions[0].name).toBe('Triple glazing');
    });

    it("answers 404 not_found for an unknown id and for another organization's submission", async () => {
      for (const res of [await get('/api/v1/submissions/sub_unknown'), await get(`/api/v1/submissions/${foreignId}`), await get(`/api/v1/submissions/${ids.a1}`, other.apiKey)]) {
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
    });

    it('answers 401 without a key', async () => {
      expect((await app.request('GET', `/api/v1/submissions/${ids.a1}`)).status).toBe(401);
    });
  });

  describe('PATCH /api/v1/submissions/{id}', () => {
    it('sets the status and externalRef and answers with the updated submission', async () => {
      const id = await submitted(org, templateA);
      const res = await patch(id, { status: 'quoted', externalRef: 'hubspot:deal:42' });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(DETAIL_FIELDS);
      expect(res.body).toMatchObject({ id, status: 'quoted', externalRef: 'hubspot:deal:42' });
      expect((await get(`/api/v1/submissions/${id}`)).body).toEqual(res.body);
    });

    it('sets either field alone, clears externalRef with null, and allows any status move', async () => {
      const id = await submitted(org, templateA);
      expect((await patch(id, { externalRef: 'x'.repeat(200) })).body).toMatchObject({ status: 'new', externalRef: 'x'.repeat(200) });
      expect((await patch(id, { status: 'closed' })).body).toMatchObject({ status: 'closed', externalRef: 'x'.repeat(200) });
      expect((await patch(id, { status: 'new', externalRef: null })).body).toMatchObject({ status: 'new', externalRef: null });
      await patch(id, { externalRef: 'crm:deal:1' });
      // api-v1 allows any string up to 200 characters: an empty one clears it, as null does.
      expect((await patch(id, { externalRef: '' })).body).toMatchObject({ status: 'new', externalRef: null });
    });

    it.each([' a:b ', '<b>x</b>', '   '])('stores externalRef %j verbatim: a partner matches it exactly (not trimmed, HTML kept)', async (value) => {
      const id = await submitted(org, templateA);
      expect((await patch(id, { externalRef: value })).body.externalRef).toBe(value);
      expect((await get(`/api/v1/submissions/${id}`)).body.externalRef).toBe(value);
    });

    it.each([
      ['an empty body', {}, ''],
      ['an unknown status', { status: 'won' }, 'status'],
      ['a null status', { status: null }, 'status'],
      ['an externalRef over 200 characters', { externalRef: 'x'.repeat(201) }, 'externalRef'],
      ['a number as externalRef', { externalRef: 42 }, 'externalRef'],
      ['an unknown field', { status: 'closed', note: 'hi' }, 'note'],
    ])('refuses %s with 422 and changes nothing', async (_what, body, path) => {
      const before = (await get(`/api/v1/submissions/${ids.a1}`)).body;
      const res = await patch(ids.a1, body);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
      expect(fieldPaths(res)).toContain(path);
      expect((await get(`/api/v1/submissions/${ids.a1}`)).body).toEqual(before);
    });

    it("answers 404 for an unknown id and for another organization's submission", async () => {
      for (const res of [await patch('sub_unknown', { status: 'closed' }), await patch(foreignId, { status: 'closed' })]) {
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
      expect((await get(`/api/v1/submissions/${foreignId}`, other.apiKey)).body.status).toBe('new');
    });

    it('answers 403 read_only_key for a read-only key and 401 without a key', async () => {
      const readOnly = await patch(ids.a1, { status: 'closed' }, org.readOnlyKey);
      expect(readOnly.status).toBe(403);
      expect(readOnly.body.error.code).toBe('read_only_key');
      expect((await app.request('PATCH', `/api/v1/submissions/${ids.a1}`, { body: { status: 'closed' } })).status).toBe(401);
    });

    it('answers 415 without a JSON content type and 400 for malformed JSON', async () => {
      const url = `/api/v1/submissions/${ids.a1}`;
      expect((await app.request('PATCH', url, { token: org.apiKey, payload: 'status=closed', headers: { 'content-type': 'text/plain' } })).status).toBe(415);
      expect((await app.request('PATCH', url, { token: org.apiKey, payload: '{"status":', headers: { 'content-type': 'application/json' } })).status).toBe(400);
    });
  });

  describe('lifecycle commands', () => {
    const commands = () => app.get(CommandBus);
    const markQuoted = (id: string, quoteId: string, organizationId = org.organizationId) =>
      commands().execute(new MarkSubmissionQuoted(organizationId, id, quoteId, 'system'));
    const close = (id: string, quoteId: string) => commands().execute(new CloseSubmissionOnAcceptance(org.organizationId, id, quoteId, 'system'));
    const read = async (id: string) => (await get(`/api/v1/submissions/${id}`)).body;

    it('the first quote moves new to quoted; every quote becomes the latest; only the first moves the status', async () => {
      const id = await submitted(org, templateA);
      await markQuoted(id, 'quo_1');
      expect(await read(id)).toMatchObject({ status: 'quoted', latestQuoteId: 'quo_1' });
      await markQuoted(id, 'quo_1');
      await markQuoted(id, 'quo_2');
      expect(await read(id)).toMatchObject({ status: 'quoted', latestQuoteId: 'quo_2' });
      await patch(id, { status: 'new' });
      await markQuoted(id, 'quo_3');
      expect(await read(id)).toMatchObject({ status: 'new', latestQuoteId: 'quo_3' });
      // a repeated delivery of an older quote does not make it the latest again
      await markQuoted(id, 'quo_2');
      expect((await read(id)).latestQuoteId).toBe('quo_3');
    });

    it('an accepted quote closes the submission; closing again changes nothing', async () => {
      const id = await submitted(org, templateA);
      await markQuoted(id, 'quo_9');
      await close(id, 'quo_9');
      const closed = await read(id);
      expect(closed).toMatchObject({ status: 'closed', latestQuoteId: 'quo_9' });
      await close(id, 'quo_9');
      expect(await read(id)).toEqual(closed);
    });

    it("refuses another organization's submission as not found", async () => {
      await expect(markQuoted(foreignId, 'quo_x')).rejects.toMatchObject({ code: 'not_found' });
    });

    it('SubmissionLookup finds a submission only within its organization', async () => {
      const lookup = app.get(SubmissionLookup);
      const view = await lookup.find(org.organizationId, ids.b1);
      expect(view).toMatchObject({ id: ids.b1, organizationId: org.organizationId, templateId: templateB, templateName: 'Second window', status: 'new', unitAmount: 1, locale: 'de' });
      expect(view!.basePricing.lineItems.length).toBeGreaterThan(0);
      expect(await lookup.find(other.organizationId, ids.b1)).toBeNull();
      expect(await lookup.find(org.organizationId, 'sub_unknown')).toBeNull();
    });
  });
});
