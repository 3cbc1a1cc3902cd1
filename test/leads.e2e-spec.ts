import { EventStore } from '@lib/event-store';
import { leadStream } from '@lib/leads';
import { ADMIN_TOKEN, TestApp } from './support/test-app';

type Org = Awaited<ReturnType<TestApp['createOrganization']>>;

const LEAD_FIELDS = ['id', 'name', 'email', 'phone', 'message', 'status', 'createdAt'].sort();

describe('leads', () => {
  let app: TestApp;
  let org: Org;
  let other: Org;

  beforeAll(async () => {
    app = await TestApp.start();
    [org, other] = await Promise.all([app.createOrganization(), app.createOrganization()]);
  });
  afterAll(() => app.close());

  const submit = (body: unknown, slug = org.slug) => app.request('POST', `/storefront/v1/${slug}/leads`, { body });
  const get = (url: string, token = org.apiKey) => app.request('GET', url, { token });
  const move = (leadId: string, body: unknown, orgId = org.organizationId, token = ADMIN_TOKEN) =>
    app.request('PATCH', `/admin/v1/organizations/${orgId}/leads/${leadId}`, { token, body });
  const fieldPaths = (res: { body: any }) => res.body.error.details.fields.map((f: { path: string }) => f.path);
  const enquiry = (overrides: Record<string, unknown> = {}) => ({ name: 'Jane Doe', email: 'jane@example.com', message: 'I need six tilt-turn windows.', ...overrides });

  async function newLead(target = org, overrides: Record<string, unknown> = {}): Promise<string> {
    const res = await submit(enquiry(overrides), target.slug);
    expect(res.status).toBe(201);
    return res.body.id;
  }

  describe('POST /storefront/v1/{orgSlug}/leads (public contact form)', () => {
    it('creates a lead without authentication: 201 { id }, status new, readable through the API', async () => {
      const res = await submit(enquiry({ phone: '+31 6 1234 5678' }));
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: expect.stringMatching(/^lead_/) });
      const lead = await get(`/api/v1/leads/${res.body.id}`);
      expect(lead.status).toBe(200);
      expect(Object.keys(lead.body).sort()).toEqual(LEAD_FIELDS);
      expect(lead.body).toEqual({
        id: res.body.id,
        name: 'Jane Doe',
        email: 'jane@example.com',
        phone: '+31 6 1234 5678',
        message: 'I need six tilt-turn windows.',
        status: 'new',
        createdAt: expect.any(Number),
      });
    });

    it('stores plain text: HTML is stripped, a missing phone is null', async () => {
      const res = await submit({ name: '<b>Jan</b>', email: ' jan@example.com ', message: '<p>Hello <script>alert(1)</script>there</p> & bye' });
      expect(res.status).toBe(201);
      expect((await get(`/api/v1/leads/${res.body.id}`)).body).toMatchObject({ name: 'Jan', email: 'jan@example.com', phone: null, message: 'Hello there & bye' });
    });

    it('takes a phone as the configurator does: digits, spaces, a leading + and ( ) . / -; anything else is 422 at phone', async () => {
      const accepted = await submit(enquiry({ phone: '+31 (0)15 123-45.67' }));
      expect(accepted.status).toBe(201);
      expect((await get(`/api/v1/leads/${accepted.body.id}`)).body.phone).toBe('+31 (0)15 123-45.67');
      for (const phone of ['call me maybe', '0612345678 ext. 3', '++31 6', '12\n34', '12\t34']) {
        const res = await submit(enquiry({ phone }));
        expect({ phone, status: res.status, fields: res.body.error?.details.fields }).toEqual({
          phone, status: 422, fields: [{ path: 'phone', message: 'phone may hold digits, spaces, a leading + and ( ) . / -' }],
        });
      }
    });

    it('refuses a NUL character in any field (422 at its path), and records no lead', async () => {
      const before = (await get('/api/v1/leads?limit=100')).body.data.length;
      const res = await submit(enquiry({ message: 'Call me\u0000 tomorrow' }));
      expect([res.status, res.body.error.details.fields]).toEqual([422, [{ path: 'message', message: 'must not hold the character U+0000 (NUL)' }]]);
      expect((await get('/api/v1/leads?limit=100')).body.data.length).toBe(before);
    });

    it('accepts a message of exactly 5000 characters', async () => {
      const res = await submit(enquiry({ message: 'm'.repeat(5000) }));
      expect(res.status).toBe(201);
    });

    it('records everything the lead.created webhook needs in the event', async () => {
      const id = await newLead(org, { phone: '0612' });
      const [event] = await app.get(EventStore).readStream(leadStream(id));
      expect(event.type).toBe('lead.v1.created');
      expect(event.data).toEqual({
        organizationId: org.organizationId,
        leadId: id,
        name: 'Jane Doe',
        email: 'jane@example.com',
        phone: '0612',
        message: 'I need six tilt-turn windows.',
        createdAt: expect.any(Number),
      });
    });

    it('answers an unknown organization slug with 404 not_found', async () => {
      const res = await submit(enquiry(), 'no-such-org');
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    });

    it.each([
      ['an empty body', {}, ['name', 'email', 'message']],
      ['an invalid e-mail', enquiry({ email: 'jane-at-example' }), ['email']],
      ['a message over 5000 characters', enquiry({ message: 'm'.repeat(5001) }), ['message']],
      ['a message that is only markup', enquiry({ message: '<div><br/></div>' }), ['message']],
      ['a name over 200 characters', enquiry({ name: 'n'.repeat(201) }), ['name']],
      ['a phone that is not a string', enquiry({ phone: 612 }), ['phone']],
      ['an e-mail that is not a string', enquiry({ email: 612 }), ['email']],
      ['an unknown field', enquiry({ status: 'closed' }), ['status']],
    ])('answers %s with 422 validation_error naming the fields, and stores nothing', async (_label, body, paths) => {
      const probe = await app.createOrganization();
      const res = await submit(body, probe.slug);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
      expect(fieldPaths(res)).toEqual(expect.arrayContaining(paths));
      // A value of the wrong kind is told only the kind it must be.
      if (typeof (body as { email?: unknown }).email === 'number') expect(res.body.error.details.fields).toEqual([{ path: 'email', message: 'email must be a string' }]);
      expect((await get('/api/v1/leads', probe.apiKey)).body.data).toEqual([]);
    });
  });

  describe('GET /api/v1/leads and /api/v1/leads/{id}', () => {
    it.each([
      ['the list', '/api/v1/leads'],
      ['a lead', '/api/v1/leads/lead_0000000000'],
    ])('answers %s without a key, or with an invalid one, with 401 unauthorized', async (_label, url) => {
      for (const token of [undefined, 'qk_live_invalid', `qk_live_${'Q'.repeat(40)}`]) {
        const res = await app.request('GET', url, { token });
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('unauthorized');
        expect(res.headers['www-authenticate']).toBe('Bearer');
      }
    });

    it('refuses keys of an organization whose plan has no API access (403 forbidden_plan)', async () => {
      const essential = await app.createOrganization({ plan: 'essential' });
      const id = await newLead(essential);
      for (const url of ['/api/v1/leads', `/api/v1/leads/${id}`]) {
        const res = await get(url, essential.apiKey);
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('forbidden_plan');
      }
    });

    it('lets a read-only key read leads', async () => {
      const id = await newLead();
      expect((await get(`/api/v1/leads/${id}`, org.readOnlyKey)).status).toBe(200);
      expect((await get('/api/v1/leads', org.readOnlyKey)).status).toBe(200);
    });

    it('answers an unknown id, a malformed id and another organization\'s lead with 404 not_found', async () => {
      const theirs = await newLead(other);
      for (const id of ['lead_doesnotexist', 'nonsense', theirs]) {
        const res = await get(`/api/v1/leads/${id}`);
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
    });

    describe('list', () => {
      let lister: Org;
      const ids: string[] = [];

      beforeAll(async () => {
        lister = await app.createOrganization();
        for (let i = 0; i < 7; i++) ids.push(await newLead(lister, { name: `Lead ${i}` }));
        await move(ids[1], { status: 'contacted' }, lister.organizationId);
        await move(ids[4], { status: 'contacted' }, lister.organizationId);
        await move(ids[4], { status: 'closed' }, lister.organizationId);
      });

      async function pageThrough(query: string, limit: number) {
        const items: any[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const res = await get(`/api/v1/leads?limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ''}`, lister.apiKey);
          expect(res.status).toBe(200);
          expect(res.body.data.length).toBeLessThanOrEqual(limit);
          items.push(...res.body.data);
          cursor = res.body.nextCursor;
          pages++;
        } while (cursor && pages < 50);
        return { items, pages };
      }

      it('pages newest first through every lead exactly once', async () => {
        const { items, pages } = await pageThrough('', 2);
        expect(pages).toBe(4);
        expect(items.map((l) => l.id).sort()).toEqual([...ids].sort());
        const newestFirst = [...items].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
        expect(items.map((l) => l.id)).toEqual(newestFirst.map((l) => l.id));
        for (const item of items) expect(Object.keys(item).sort()).toEqual(LEAD_FIELDS);
      });

      it('defaults to one page of up to 50 with nextCursor null', async () => {
        const res = await get('/api/v1/leads', lister.apiKey);
        expect(res.body.data).toHaveLength(7);
        expect(res.body.nextCursor).toBeNull();
      });

      it.each([
        ['new', 5],
        ['contacted', 1],
        ['closed', 1],
      ])('filters by status %s', async (status, count) => {
        const { items } = await pageThrough(`&status=${status}`, 2);
        expect(items).toHaveLength(count);
        expect(items.every((l) => l.status === status)).toBe(true);
      });

      it('shows only the calling organization\'s leads', async () => {
        const res = await get('/api/v1/leads?limit=100', other.apiKey);
        expect(res.body.data.some((l: any) => ids.includes(l.id))).toBe(false);
      });

      it.each([
        ['status=open', 'status'],
        ['limit=0', 'limit'],
        ['limit=101', 'limit'],
        ['cursor=%%%', 'cursor'],
        [`cursor=${Buffer.from('{"l":"contacts","a":[1,"x"]}').toString('base64url')}`, 'cursor'],
        [`cursor=${Buffer.from('not json').toString('base64url')}`, 'cursor'],
        ['email=a@b.c', 'email'],
      ])('answers %s with 422 validation_error', async (query, path) => {
        const res = await get(`/api/v1/leads?${query}`, lister.apiKey);
        expect(res.status).toBe(422);
        expect(res.body.error.code).toBe('validation_error');
        expect(fieldPaths(res)).toContain(path);
      });
    });

    it('offers no way to write leads through the external API', async () => {
      const res = await app.request('POST', '/api/v1/leads', { token: org.apiKey, body: enquiry() });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    });
  });

  describe('PATCH /admin/v1/organizations/{orgId}/leads/{leadId}', () => {
    it('moves a lead forward, new → contacted → closed, and returns it', async () => {
      const id = await newLead();
      const contacted = await move(id, { status: 'contacted' });
      expect(contacted.status).toBe(200);
      expect(contacted.body).toMatchObject({ id, status: 'contacted', name: 'Jane Doe' });
      expect(Object.keys(contacted.body).sort()).toEqual(LEAD_FIELDS);
      const closed = await move(id, { status: 'closed' });
      expect(closed.status).toBe(200);
      expect(closed.body.status).toBe('closed');
      expect((await get(`/api/v1/leads/${id}`)).body.status).toBe('closed');
    });

    it('may close a new lead directly', async () => {
      const id = await newLead();
      expect((await move(id, { status: 'closed' })).body.status).toBe('closed');
    });

    it.each([
      ['backwards', ['contacted'], 'new', /cannot move back from contacted to new/],
      ['backwards from closed', ['contacted', 'closed'], 'contacted', /cannot move back from closed to contacted/],
      ['to the status it has', [], 'new', /already new/],
      ['closed again', ['closed'], 'closed', /already closed/],
    ])('refuses a move %s with 422 validation_error and a clear message, changing nothing', async (_label, path, status, message) => {
      const id = await newLead();
      for (const step of path) expect((await move(id, { status: step })).status).toBe(200);
      const before = (await get(`/api/v1/leads/${id}`)).body;
      const res = await move(id, { status });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.details.fields).toEqual([{ path: 'status', message: expect.stringMatching(message) }]);
      expect((await get(`/api/v1/leads/${id}`)).body).toEqual(before);
    });

    it.each([
      ['an unknown status', { status: 'won' }],
      ['no status', {}],
      ['an unknown field', { status: 'contacted', note: 'x' }],
    ])('answers %s with 422 validation_error', async (_label, body) => {
      const id = await newLead();
      const res = await move(id, body);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
      expect((await get(`/api/v1/leads/${id}`)).body.status).toBe('new');
    });

    it('answers 404 for an unknown organization, an unknown lead and another organization\'s lead', async () => {
      const mine = await newLead();
      const theirs = await newLead(other);
      const cases: Array<[string, string]> = [
        ['org_unknown', mine],
        [org.organizationId, 'lead_doesnotexist'],
        [org.organizationId, 'not-a-lead-id'],
        [org.organizationId, theirs],
      ];
      for (const [orgId, leadId] of cases) {
        const res = await move(leadId, { status: 'contacted' }, orgId);
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
      expect((await get(`/api/v1/leads/${theirs}`, other.apiKey)).body.status).toBe('new');
    });

    it('answers an unknown organization 404 before it looks at the body', async () => {
      const res = await move(await newLead(), { status: 'won' }, 'org_unknown');
      expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
    });

    it('requires the admin token (an API key is not enough)', async () => {
      const id = await newLead();
      for (const token of [undefined, org.apiKey]) {
        const res = await app.request('PATCH', `/admin/v1/organizations/${org.organizationId}/leads/${id}`, { token, body: { status: 'contacted' } });
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('unauthorized');
      }
    });
  });
});
