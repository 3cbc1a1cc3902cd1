import { exampleTemplateBody } from '@lib/templates/domain/example.fixture';
import { ADMIN_TOKEN, TestApp } from './support/test-app';

type Org = Awaited<ReturnType<TestApp['createOrganization']>>;

const LIST_FIELDS = ['id', 'name', 'slug', 'description', 'productCategory', 'constraints', 'materialTags', 'createdAt', 'updatedAt'].sort();
const BODY_FIELDS = ['components', 'optionGroups', 'options', 'materials', 'sections', 'pricingRules'];

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const fieldPaths = (res: { body: any }) => res.body.error.details.fields.map((f: { path: string }) => f.path);

describe('templates', () => {
  let app: TestApp;
  let orgA: Org;
  let orgB: Org;

  beforeAll(async () => {
    app = await TestApp.start();
    [orgA, orgB] = await Promise.all([app.createOrganization(), app.createOrganization()]);
  });
  afterAll(() => app.close());

  const adminCreate = (orgId: string, body: unknown, token = ADMIN_TOKEN) => app.request('POST', `/admin/v1/organizations/${orgId}/templates`, { token, body });
  const adminReplace = (orgId: string, id: string, body: unknown, token = ADMIN_TOKEN) =>
    app.request('PUT', `/admin/v1/organizations/${orgId}/templates/${id}`, { token, body });
  const get = (url: string, token = orgA.apiKey) => app.request('GET', url, { token });

  async function createTemplate(org: Org, overrides: Record<string, unknown> = {}): Promise<any> {
    const res = await adminCreate(org.organizationId, { ...exampleTemplateBody(), ...overrides });
    expect(res.status).toBe(201);
    return res.body;
  }

  describe('admin POST /admin/v1/organizations/{orgId}/templates', () => {
    it('creates a template and answers 201 with the list fields and the full body', async () => {
      const res = await adminCreate(orgA.organizationId, exampleTemplateBody());
      expect(res.status).toBe(201);
      expect(res.body.id).toMatch(/^tpl_/);
      expect(Object.keys(res.body).sort()).toEqual([...LIST_FIELDS, ...BODY_FIELDS].sort());
      const { name, slug, description, productCategory, materialTags, constraints, components, optionGroups, options, materials, sections, pricingRules } = exampleTemplateBody();
      expect(res.body).toMatchObject({ name, slug, description, productCategory, materialTags, constraints, components, optionGroups, options, materials, sections, pricingRules });
      expect(res.body.createdAt).toBe(res.body.updatedAt);
    });

    it('fills optional lists and strips HTML from free text', async () => {
      const res = await adminCreate(orgA.organizationId, {
        name: '<b>Plain</b> panel', slug: 'plain-panel', productCategory: 'panel', constraints: { minWidth: 100, maxWidth: 1000, minHeight: 100, maxHeight: 1000 },
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ name: 'Plain panel', description: '', materialTags: [], components: [], options: [], pricingRules: [] });
    });

    it('refuses an invalid body with 422 and the path of every problem, and stores nothing', async () => {
      const before = (await get('/api/v1/templates?limit=100')).body.data.length;
      const body = exampleTemplateBody();
      body.constraints.minWidth = 5000;
      body.components[0].type = 'XX';
      body.pricingRules[2].target = 'nope';
      delete body.name;
      const res = await adminCreate(orgA.organizationId, body);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
      expect(fieldPaths(res)).toEqual(expect.arrayContaining(['name', 'constraints.minWidth', 'components[0].type', 'pricingRules[2].target']));
      expect((await get('/api/v1/templates?limit=100')).body.data).toHaveLength(before);
    });

    it.each([
      ['an array', []],
      ['a string', 'template'],
    ])('refuses %s as body with 422', async (_what, body) => {
      const res = await adminCreate(orgA.organizationId, body);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
    });

    it('answers 404 for an unknown organization', async () => {
      const res = await adminCreate('org_unknown', exampleTemplateBody());
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    });

    it('answers 401 without the admin token, and an API key is not one', async () => {
      for (const token of [undefined, orgA.apiKey, 'adm_wrong']) {
        const res = await app.request('POST', `/admin/v1/organizations/${orgA.organizationId}/templates`, { token, body: exampleTemplateBody() });
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('unauthorized');
      }
    });

    it('answers 415 for a body that is not JSON and 400 for malformed JSON', async () => {
      const url = `/admin/v1/organizations/${orgA.organizationId}/templates`;
      const text = await app.request('POST', url, { token: ADMIN_TOKEN, payload: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(text.status).toBe(415);
      expect(text.body.error.code).toBe('unsupported_media_type');
      const broken = await app.request('POST', url, { token: ADMIN_TOKEN, payload: '{"name":', headers: { 'content-type': 'application/json' } });
      expect(broken.status).toBe(400);
      expect(broken.body.error.code).toBe('invalid_json');
    });
  });

  describe('admin PUT /admin/v1/organizations/{orgId}/templates/{id}', () => {
    it('replaces the whole body, keeps createdAt and moves updatedAt', async () => {
      const created = await createTemplate(orgA);
      await pause(2);
      const replacement = { ...exampleTemplateBody(), name: 'Tilt-turn window XL', sections: [] as string[] };
      const res = await adminReplace(orgA.organizationId, created.id, replacement);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: created.id, name: 'Tilt-turn window XL', sections: [], createdAt: created.createdAt });
      expect(res.body.updatedAt).toBeGreaterThan(created.updatedAt);
      expect((await get(`/api/v1/templates/${created.id}`)).body).toEqual(res.body);
    });

    it('answers 200 with nothing changed when the same body is sent again', async () => {
      const created = await createTemplate(orgA);
      const res = await adminReplace(orgA.organizationId, created.id, exampleTemplateBody());
      expect(res.status).toBe(200);
      expect(res.body).toEqual(created);
    });

    it('refuses an invalid body with 422 and leaves the template as it was', async () => {
      const created = await createTemplate(orgA);
      const res = await adminReplace(orgA.organizationId, created.id, { ...exampleTemplateBody(), slug: 'Not A Slug', extra: true });
      expect(res.status).toBe(422);
      expect(fieldPaths(res)).toEqual(expect.arrayContaining(['slug', 'extra']));
      expect((await get(`/api/v1/templates/${created.id}`)).body).toEqual(created);
    });

    it('answers 401 without the admin token', async () => {
      const created = await createTemplate(orgA);
      const res = await app.request('PUT', `/admin/v1/organizations/${orgA.organizationId}/templates/${created.id}`, { token: orgA.apiKey, body: exampleTemplateBody() });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
    });

    it("answers 404 for an unknown template and for another organization's template", async () => {
      const created = await createTemplate(orgA);
      expect((await adminReplace(orgA.organizationId, 'tpl_unknown', exampleTemplateBody())).status).toBe(404);
      const foreign = await adminReplace(orgB.organizationId, created.id, { ...exampleTemplateBody(), name: 'Hijacked' });
      expect(foreign.status).toBe(404);
      expect(foreign.body.error.code).toBe('not_found');
      expect((await get(`/api/v1/templates/${created.id}`)).body.name).toBe(created.name);
    });
  });

  describe('GET /api/v1/templates', () => {
    let org: Org;
    const created: any[] = [];

    beforeAll(async () => {
      org = await app.createOrganization();
      for (const name of ['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo']) {
        created.push(await createTemplate(org, { name }));
        await pause(2);
      }
    });

    it('lists the list fields of decisions §5, newest first', async () => {
      const res = await get('/api/v1/templates', org.apiKey);
      expect(res.status).toBe(200);
      expect(res.body.nextCursor).toBeNull();
      expect(res.body.data.map((t: any) => t.name)).toEqual(['Echo', 'Delta', 'Charlie', 'Bravo', 'Alpha']);
      for (const item of res.body.data) expect(Object.keys(item).sort()).toEqual(LIST_FIELDS);
    });

    it('pages with limit and cursor until nextCursor is null', async () => {
      const names: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res = await get(`/api/v1/templates?limit=2${cursor ? `&cursor=${cursor}` : ''}`, org.apiKey);
        expect(res.status).toBe(200);
        names.push(...res.body.data.map((t: any) => t.name));
        cursor = res.body.nextCursor;
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      expect(names).toEqual(['Echo', 'Delta', 'Charlie', 'Bravo', 'Alpha']);
    });

    it.each([
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=ten', 'limit'],
      ['cursor=!!', 'cursor'],
      ['cursor=eyJsIjoic3VibWlzc2lvbnMiLCJhIjpbMSwiYSJdfQ', 'cursor'],
      ['sort=name', 'sort'],
    ])('answers 422 for %s', async (query, path) => {
      const res = await get(`/api/v1/templates?${query}`, org.apiKey);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
      expect(fieldPaths(res)).toContain(path);
    });

    it("never shows another organization's templates", async () => {
      const res = await get('/api/v1/templates?limit=100', orgB.apiKey);
      const ids = res.body.data.map((t: any) => t.id);
      for (const template of created) expect(ids).not.toContain(template.id);
    });

    it('answers 401 without a valid API key', async () => {
      for (const token of [undefined, 'qk_live_unknownunknownunknownunknown12', ADMIN_TOKEN]) {
        const res = await app.request('GET', '/api/v1/templates', { token: token as string });
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('unauthorized');
        expect(res.headers['www-authenticate']).toBe('Bearer');
      }
    });

    it('is readable with a read-only key', async () => {
      expect((await get('/api/v1/templates', org.readOnlyKey)).status).toBe(200);
    });
  });

  describe('GET /api/v1/templates/{id} and /catalog', () => {
    let template: any;
    beforeAll(async () => {
      template = await createTemplate(orgA);
    });

    it('reads the template with its full body', async () => {
      const res = await get(`/api/v1/templates/${template.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(template);
    });

    it('reads the catalog: the list item, components, option groups, options, materials and sections, without pricing rules', async () => {
      const res = await get(`/api/v1/templates/${template.id}/catalog`);
      expect(res.status).toBe(200);
      const body = exampleTemplateBody();
      expect(res.body).toEqual({
        template: Object.fromEntries(LIST_FIELDS.map((f) => [f, template[f]])),
        components: body.components,
        optionGroups: body.optionGroups,
        options: body.options,
        materials: body.materials,
        sections: body.sections,
      });
    });

    it.each(['', '/catalog'])("answers 404 not_found for an unknown id and another organization's template (%s)", async (suffix) => {
      for (const [id, token] of [['tpl_unknown', orgA.apiKey], [template.id, orgB.apiKey]]) {
        const res = await get(`/api/v1/templates/${id}${suffix}`, token);
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
    });

    it.each(['', '/catalog'])('answers 401 without an API key (%s)', async (suffix) => {
      expect((await app.request('GET', `/api/v1/templates/${template.id}${suffix}`)).status).toBe(401);
    });
  });
});
