import { CommandBus } from '@nestjs/cqrs';
import { contactIdOf, contactKey, contactStream, RecordSubmissionContact } from '@lib/contacts';
import { EventStore } from '@lib/event-store';
import { TestApp } from './support/test-app';

type Org = Awaited<ReturnType<TestApp['createOrganization']>>;

const CONTACT_FIELDS = [
  'id', 'name', 'email', 'phone', 'companyName', 'address', 'postalCode', 'city', 'country',
  'isStarred', 'submissionCount', 'externalRef', 'lastUsedAt', 'createdAt', 'updatedAt',
].sort();

const customer = (overrides: Partial<RecordSubmissionContact['customer']> = {}): RecordSubmissionContact['customer'] => ({
  name: null, email: null, phone: null, companyName: null, address: null, postalCode: null, city: null, country: null, ...overrides,
});

describe('contacts API', () => {
  let app: TestApp;
  let org: Org;
  let other: Org;

  beforeAll(async () => {
    app = await TestApp.start();
    [org, other] = await Promise.all([app.createOrganization(), app.createOrganization()]);
  });
  afterAll(() => app.close());

  const post = (body: unknown, token = org.apiKey) => app.request('POST', '/api/v1/contacts', { token, body });
  const patch = (id: string, body: unknown, token = org.apiKey) => app.request('PATCH', `/api/v1/contacts/${id}`, { token, body });
  const get = (url: string, token = org.apiKey) => app.request('GET', url, { token });
  const record = (submissionId: string, from: RecordSubmissionContact['customer'], organizationId = org.organizationId) =>
    app.get(CommandBus).execute<RecordSubmissionContact, string | null>(new RecordSubmissionContact(organizationId, submissionId, from, 'customer:ses_test'));
  const fieldPaths = (res: { body: any }) => res.body.error.details.fields.map((f: { path: string }) => f.path);

  async function pageThrough(token: string, query = '', limit = 3): Promise<{ ids: string[]; pages: number; items: any[] }> {
    const items: any[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(`/api/v1/contacts?limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, token);
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(limit);
      items.push(...res.body.data);
      cursor = res.body.nextCursor;
      pages++;
    } while (cursor && pages < 50);
    return { ids: items.map((c) => c.id), pages, items };
  }

  describe('authentication', () => {
    // Every row has three entries: jest would take a missing third parameter for `done`.
    const endpoints: Array<[string, string, unknown]> = [
      ['GET', '/api/v1/contacts', undefined],
      ['POST', '/api/v1/contacts', { email: 'auth@example.com' }],
      ['GET', '/api/v1/contacts/ct_00000000000000000000000000000000', undefined],
      ['PATCH', '/api/v1/contacts/ct_00000000000000000000000000000000', { name: 'X' }],
    ];

    it.each(endpoints)('%s %s without a key is 401 unauthorized', async (method, url, body) => {
      const res = await app.request(method, url, { body });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
      expect(res.headers['www-authenticate']).toBe('Bearer');
    });

    it.each(endpoints)('%s %s with an invalid key is 401 unauthorized', async (method, url, body) => {
      const res = await app.request(method, url, { body, token: `qk_live_${'Z'.repeat(40)}` });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
    });

    it('refuses every endpoint to a key of an organization whose plan has no API access (403 forbidden_plan)', async () => {
      const essential = await app.createOrganization({ plan: 'essential' });
      for (const [method, url, body] of endpoints) {
        const res = await app.request(method, url, { body, token: essential.apiKey });
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('forbidden_plan');
      }
    });

    it('a read-only key reads but cannot create or change (403 read_only_key), and nothing is written', async () => {
      const created = await post({ email: 'readonly-target@example.com', name: 'Target' });
      expect(created.status).toBe(201);

      const write = await post({ email: 'readonly-new@example.com' }, org.readOnlyKey);
      expect(write.status).toBe(403);
      expect(write.body.error.code).toBe('read_only_key');
      const change = await patch(created.body.id, { name: 'Changed' }, org.readOnlyKey);
      expect(change.status).toBe(403);
      expect(change.body.error.code).toBe('read_only_key');

      expect((await get('/api/v1/contacts?email=readonly-new@example.com', org.readOnlyKey)).body.data).toEqual([]);
      const read = await get(`/api/v1/contacts/${created.body.id}`, org.readOnlyKey);
      expect(read.status).toBe(200);
      expect(read.body.name).toBe('Target');
    });
  });

  describe('POST /contacts (upsert by e-mail)', () => {
    it('creates a contact: 201, created true, the full contact with defaults', async () => {
      const res = await post({ email: 'jane.doe@example.com', name: 'Jane Doe', companyName: 'Doe Windows', phone: '+31 6 1234 5678', externalRef: 'crm:contact:1' });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual([...CONTACT_FIELDS, 'created'].sort());
      expect(res.body).toEqual({
        id: expect.stringMatching(/^ct_[0-9a-f]{32}$/),
        name: 'Jane Doe',
        email: 'jane.doe@example.com',
        phone: '+31 6 1234 5678',
        companyName: 'Doe Windows',
        address: null,
        postalCode: null,
        city: null,
        country: null,
        isStarred: false,
        submissionCount: 0,
        externalRef: 'crm:contact:1',
        lastUsedAt: res.body.createdAt,
        createdAt: expect.any(Number),
        updatedAt: res.body.createdAt,
        created: true,
      });
      expect(Number.isInteger(res.body.createdAt)).toBe(true);
      expect((await get(`/api/v1/contacts/${res.body.id}`)).body).toEqual({ ...res.body, created: undefined });
    });

    it('is idempotent: the same body again is 200, created false, and changes nothing, not even updatedAt', async () => {
      const body = { email: 'idem@example.com', name: 'Idem', phone: '123' };
      const first = await post(body);
      const again = await post(body);
      expect(first.status).toBe(201);
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ ...first.body, created: false });
      const third = await post(body);
      expect(third.body.updatedAt).toBe(first.body.updatedAt);
    });

    it('matches e-mails case-insensitively and stores them lower-cased and trimmed', async () => {
      const first = await post({ email: 'Mixed.Case@Example.COM', name: 'Mixed' });
      expect(first.status).toBe(201);
      expect(first.body.email).toBe('mixed.case@example.com');
      const again = await post({ email: '  mixed.CASE@example.com ', name: 'Mixed' });
      expect(again.status).toBe(200);
      expect(again.body.created).toBe(false);
      expect(again.body.id).toBe(first.body.id);
      expect(again.body.updatedAt).toBe(first.body.updatedAt);
    });

    it('keeps one contact for one mailbox however it is written: composed or decomposed, its domain in punycode or capitals', async () => {
      const first = await post({ email: 'jos\u00e9@b\u00fccher.de', name: 'Jos\u00e9' });
      expect(first.status).toBe(201);
      expect(first.body.email).toBe('jos\u00e9@b\u00fccher.de');
      for (const email of ['jose\u0301@bu\u0308cher.de', 'jos\u00e9@xn--bcher-kva.de', 'JOS\u00c9@B\u00dcCHER.DE']) {
        const again = await post({ email, name: 'Jos\u00e9' });
        expect({ email, status: again.status, id: again.body.id }).toEqual({ email, status: 200, id: first.body.id });
        const listed = await get(`/api/v1/contacts?email=${encodeURIComponent(email)}`);
        expect(listed.body.data.map((c: { id: string }) => c.id)).toEqual([first.body.id]);
      }
      expect(await record('sub_idn', customer({ email: 'jose\u0301@xn--bcher-kva.de' }))).toBe(first.body.id);
    });

    it('updates a contact created under the form e-mails were stored in until 2026-11-28, rather than making a second one', async () => {
      // Until then an e-mail was only trimmed and lower-cased: this one was stored decomposed, under the key of that form.
      const legacy = 'ana.mu\u0308ller@example.com';
      const key = contactKey(org.organizationId, legacy);
      await app.get(EventStore).appendToStream(contactStream(org.organizationId, key), [
        {
          type: 'contact.v1.created',
          data: { organizationId: org.organizationId, contactId: contactIdOf(key), email: legacy, at: Date.now(),
            details: { name: 'Ana', phone: null, companyName: null, address: null, postalCode: null, city: null, country: null, externalRef: null } },
          metadata: { actor: 'apiKey:key_legacy' },
        },
      ], 'no_stream');
      const again = await post({ email: 'Ana.Mu\u0308ller@example.com', name: 'Ana' });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ id: contactIdOf(key), email: legacy, created: false });
      for (const email of [legacy, ' ANA.MU\u0308LLER@example.com']) {
        const listed = await get(`/api/v1/contacts?email=${encodeURIComponent(email)}`);
        expect(listed.body.data.map((c: { id: string }) => c.id)).toEqual([contactIdOf(key)]);
      }
      expect(await record('sub_legacy', customer({ email: legacy }))).toBe(contactIdOf(key));
      // The composed form was never stored in the decomposed one: that contact is reached only by the form it was stored in.
      const composed = await post({ email: 'ana.m\u00fcller@example.com', name: 'Ana' });
      expect(composed.status).toBe(201);
      expect(composed.body.id).not.toBe(contactIdOf(key));
      // Each form's filter finds the contact its upsert updates, and only that one.
      for (const [email, id] of [[legacy, contactIdOf(key)], ['ana.m\u00fcller@example.com', composed.body.id]]) {
        const listed = await get(`/api/v1/contacts?email=${encodeURIComponent(email)}`);
        expect(listed.body.data.map((c: { id: string }) => c.id)).toEqual([id]);
        expect((await post({ email, name: 'Ana' })).body.id).toBe(id);
      }
    });

    it('updates the given fields, clears fields sent as null and keeps omitted ones', async () => {
      const first = await post({ email: 'update@example.com', name: 'Before', companyName: 'Acme', phone: '111', externalRef: 'crm:contact:9' });
      const res = await post({ email: 'UPDATE@example.com', name: 'After', companyName: null });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: first.body.id, created: false, name: 'After', companyName: null, phone: '111', externalRef: 'crm:contact:9', createdAt: first.body.createdAt });
      expect(res.body.updatedAt).toBeGreaterThanOrEqual(first.body.updatedAt);
      expect((await get(`/api/v1/contacts/${first.body.id}`)).body).toMatchObject({ name: 'After', companyName: null, phone: '111' });
    });

    it('creates a contact from the e-mail alone, with an empty name', async () => {
      const res = await post({ email: 'only-email@example.com' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ name: '', phone: null, companyName: null, externalRef: null });
    });

    it('strips HTML from free text', async () => {
      const res = await post({ email: 'html@example.com', name: '<b>Jane</b> <script>alert(1)</script>Roe', companyName: '<i>Acme</i> & Sons' });
      expect(res.status).toBe(201);
      expect(res.body.name).toBe('Jane Roe');
      expect(res.body.companyName).toBe('Acme & Sons');
    });

    it.each([
      ['no e-mail', { name: 'X' }, ['email']],
      ['an invalid e-mail', { email: 'not-an-email' }, ['email']],
      ['an e-mail that is not a string', { email: 42 }, ['email']],
      ['an over-long e-mail', { email: `${'a'.repeat(250)}@example.com` }, ['email']],
      ['a null name', { email: 'v1@example.com', name: null }, ['name']],
      ['a name that is only markup', { email: 'v2@example.com', name: '<b></b>' }, ['name']],
      ['an over-long name', { email: 'v3@example.com', name: 'x'.repeat(201) }, ['name']],
      ['an over-long phone and externalRef', { email: 'v4@example.com', phone: '1'.repeat(51), externalRef: 'r'.repeat(201) }, ['phone', 'externalRef']],
      ['a number as company name', { email: 'v5@example.com', companyName: 7 }, ['companyName']],
      ['a field POST does not take', { email: 'v6@example.com', city: 'Delft' }, ['city']],
    ])('answers %s with 422 validation_error naming the fields, and stores nothing', async (_label, body, paths) => {
      const res = await post(body);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
      expect(fieldPaths(res)).toEqual(expect.arrayContaining(paths));
      const email = (body as { email?: unknown }).email;
      if (typeof email === 'string' && email.includes('@') && email.length <= 254) {
        expect((await get(`/api/v1/contacts?email=${encodeURIComponent(email)}`)).body.data).toEqual([]);
      }
    });

    it('names only the kind a value of the wrong kind must be', async () => {
      const res = await post({ email: 42 });
      expect(res.body.error.details.fields).toEqual([{ path: 'email', message: 'email must be a string' }]);
    });

    it('answers a body that is not JSON with 415 unsupported_media_type', async () => {
      const res = await app.request('POST', '/api/v1/contacts', { token: org.apiKey, payload: 'email=form@example.com', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(res.status).toBe(415);
      expect(res.body.error.code).toBe('unsupported_media_type');
    });

    it('answers an unparseable body with 400 invalid_json', async () => {
      const res = await app.request('POST', '/api/v1/contacts', { token: org.apiKey, payload: '{"email":', headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_json');
    });

    it('keeps one e-mail in two organizations as two unrelated contacts', async () => {
      const mine = await post({ email: 'shared@example.com', name: 'Mine' });
      const theirs = await post({ email: 'shared@example.com', name: 'Theirs' }, other.apiKey);
      expect(mine.status).toBe(201);
      expect(theirs.status).toBe(201);
      expect(theirs.body.id).not.toBe(mine.body.id);
      expect((await get(`/api/v1/contacts/${mine.body.id}`)).body.name).toBe('Mine');
    });

    it('under 20 parallel upserts of one e-mail in different letter cases, creates exactly one contact (one 201, the rest 200)', async () => {
      const variants = Array.from({ length: 20 }, (_, i) =>
        [...'race.condition@example.com'].map((ch, j) => ((i >> (j % 5)) & 1 ? ch.toUpperCase() : ch)).join(''),
      );
      const responses = await Promise.all(variants.map((email) => post({ email, name: 'Racer' })));
      const statuses = responses.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 200)).toHaveLength(19);
      expect(responses.filter((r) => r.body.created === true)).toHaveLength(1);
      expect(new Set(responses.map((r) => r.body.id)).size).toBe(1);
      const list = await get('/api/v1/contacts?email=RACE.CONDITION@example.com');
      expect(list.body.data).toHaveLength(1);
      expect(list.body.data[0]).toMatchObject({ email: 'race.condition@example.com', name: 'Racer' });
    });
  });

  describe('GET /contacts/{id}', () => {
    it('answers 404 not_found for an unknown id, a malformed id and another organization\'s contact', async () => {
      const theirs = await post({ email: 'theirs-only@example.com', name: 'Theirs' }, other.apiKey);
      for (const id of ['ct_ffffffffffffffffffffffffffffffff', 'nonsense', theirs.body.id]) {
        const res = await get(`/api/v1/contacts/${id}`);
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
    });
  });

  describe('PATCH /contacts/{id}', () => {
    let contact: any;
    beforeAll(async () => {
      contact = (await post({ email: 'patch.me@example.com', name: 'Patch Me', phone: '555', companyName: 'Acme' })).body;
    });

    it('changes any subset of fields, clears nullable ones with null, and returns the contact', async () => {
      const res = await patch(contact.id, { address: 'Main Street 1', postalCode: '1234 AB', city: 'Utrecht', country: 'NL', phone: null, externalRef: 'erp:customer:77' });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(CONTACT_FIELDS);
      expect(res.body).toMatchObject({
        id: contact.id, email: 'patch.me@example.com', name: 'Patch Me', phone: null, companyName: 'Acme',
        address: 'Main Street 1', postalCode: '1234 AB', city: 'Utrecht', country: 'NL', externalRef: 'erp:customer:77', createdAt: contact.createdAt,
      });
      expect((await get(`/api/v1/contacts/${contact.id}`)).body).toEqual(res.body);
    });

    it('changes nothing, not even updatedAt, when the values are the same', async () => {
      const before = (await get(`/api/v1/contacts/${contact.id}`)).body;
      const res = await patch(contact.id, { name: before.name, city: before.city });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(before);
    });

    it('strips HTML', async () => {
      const res = await patch(contact.id, { city: '<em>Delft</em>' });
      expect(res.body.city).toBe('Delft');
    });

    it.each([
      ['an empty body', {}, ['']],
      ['a null name', { name: null }, ['name']],
      ['an empty name', { name: '' }, ['name']],
      ['the e-mail (it is the key)', { email: 'other@example.com' }, ['email']],
      ['a number as city', { city: 5 }, ['city']],
      ['an over-long postal code and address', { postalCode: '9'.repeat(21), address: 'a'.repeat(501) }, ['postalCode', 'address']],
    ])('answers %s with 422 validation_error and changes nothing', async (_label, body, paths) => {
      const before = (await get(`/api/v1/contacts/${contact.id}`)).body;
      const res = await patch(contact.id, body);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
      expect(fieldPaths(res)).toEqual(expect.arrayContaining(paths));
      expect((await get(`/api/v1/contacts/${contact.id}`)).body).toEqual(before);
    });

    it('answers 404 for an unknown id and for another organization\'s contact, which stays unchanged', async () => {
      const theirs = (await post({ email: 'patch.theirs@example.com', name: 'Theirs' }, other.apiKey)).body;
      const unknown = await patch('ct_ffffffffffffffffffffffffffffffff', { name: 'X' });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.code).toBe('not_found');
      const foreign = await patch(theirs.id, { name: 'Hijacked' });
      expect(foreign.status).toBe(404);
      expect(foreign.body.error.code).toBe('not_found');
      expect((await get(`/api/v1/contacts/${theirs.id}`, other.apiKey)).body.name).toBe('Theirs');
    });
  });

  describe('externalRef (a key of another system, matched exactly there)', () => {
    // F5 (black-box audit, 2026-11-26): contacts trimmed and HTML-stripped it, unlike every other resource.
    it.each([
      ['surrounding spaces', ' a:b '],
      ['markup', '<b>x</b>'],
      ['only spaces', '   '],
      ['200 characters', 'r'.repeat(200)],
    ])('keeps a value with %s verbatim through POST, PATCH and both reads', async (label, value) => {
      const email = `ref-${label.replace(/\W+/g, '-')}@example.com`;
      const created = await post({ email, externalRef: value });
      expect(created.status).toBe(201);
      expect(created.body.externalRef).toBe(value);
      const cleared = await patch(created.body.id, { externalRef: null });
      expect(cleared.body.externalRef).toBeNull();
      const patched = await patch(created.body.id, { externalRef: value });
      expect(patched.status).toBe(200);
      expect(patched.body.externalRef).toBe(value);
      expect((await get(`/api/v1/contacts/${created.body.id}`)).body.externalRef).toBe(value);
      expect((await get(`/api/v1/contacts?email=${encodeURIComponent(email)}`)).body.data[0].externalRef).toBe(value);
    });

    it('clears it with an empty string as with null, on PATCH and on POST, as PATCH /submissions/{id} does', async () => {
      const created = await post({ email: 'ref-empty@example.com', externalRef: 'erp:customer:1' });
      const byPatch = await patch(created.body.id, { externalRef: '' });
      expect(byPatch.status).toBe(200);
      expect(byPatch.body.externalRef).toBeNull();
      await patch(created.body.id, { externalRef: 'erp:customer:2' });
      const byPost = await post({ email: 'ref-empty@example.com', externalRef: '' });
      expect(byPost.status).toBe(200);
      expect(byPost.body.externalRef).toBeNull();
      expect((await post({ email: 'ref-empty-new@example.com', externalRef: '' })).body).toMatchObject({ created: true, externalRef: null });
    });

    it('refuses 201 characters, counted as sent (markup included), and changes nothing', async () => {
      const contact = (await post({ email: 'ref-long@example.com', externalRef: 'erp:customer:3' })).body;
      const res = await patch(contact.id, { externalRef: `<b>${'r'.repeat(194)}</b>` });
      expect(res.status).toBe(422);
      expect(fieldPaths(res)).toEqual(['externalRef']);
      expect((await get(`/api/v1/contacts/${contact.id}`)).body.externalRef).toBe('erp:customer:3');
    });
  });

  describe('GET /contacts (list)', () => {
    let lister: Org;
    const created: any[] = [];

    beforeAll(async () => {
      lister = await app.createOrganization();
      for (let i = 0; i < 7; i++) {
        created.push((await post({ email: `person${i}@example.com`, name: `Person ${i}` }, lister.apiKey)).body);
      }
    });

    it('pages newest first through every contact exactly once', async () => {
      const { ids, pages, items } = await pageThrough(lister.apiKey, '', 3);
      expect(pages).toBe(3);
      expect(ids).toHaveLength(7);
      expect(new Set(ids)).toEqual(new Set(created.map((c) => c.id)));
      const order = [...items].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1)).map((c) => c.id);
      expect(ids).toEqual(order);
      for (const item of items) {
        const { created: _flag, ...contact } = created.find((c) => c.id === item.id);
        expect(item).toEqual(contact);
      }
    });

    it('defaults to 50 per page and ends with nextCursor null', async () => {
      const res = await get('/api/v1/contacts', lister.apiKey);
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(7);
      expect(res.body.nextCursor).toBeNull();
    });

    it('filters by exact e-mail, case-insensitively', async () => {
      const hit = await get('/api/v1/contacts?email=PERSON3@Example.com', lister.apiKey);
      expect(hit.body.data.map((c: any) => c.email)).toEqual(['person3@example.com']);
      expect(hit.body.nextCursor).toBeNull();
      expect((await get('/api/v1/contacts?email=person3@example', lister.apiKey)).body.data).toEqual([]);
    });

    it('shows only the calling organization\'s contacts', async () => {
      const { ids } = await pageThrough(other.apiKey, '', 100);
      expect(ids.some((id) => created.some((c) => c.id === id))).toBe(false);
    });

    it.each([
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1e1', 'limit'],
      ['limit=0x10', 'limit'],
      ['limit=%205', 'limit'],
      ['limit=5.0', 'limit'],
      ['cursor=not*a*cursor', 'cursor'],
      [`cursor=${Buffer.from('{"l":"leads","a":[1,"x"]}').toString('base64url')}`, 'cursor'],
      [`cursor=${Buffer.from('{"l":"contacts","a":["x"]}').toString('base64url')}`, 'cursor'],
      ['status=new', 'status'],
      ['email=', 'email'],
      ['email=%20%20', 'email'],
    ])('answers %s with 422 validation_error', async (query, path) => {
      const res = await get(`/api/v1/contacts?${query}`, lister.apiKey);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
      expect(fieldPaths(res)).toContain(path);
    });

    it.each([
      ['limit=5&limit=5', 'limit', 'given more than once'],
      ['email=a@example.com&email=b@example.com', 'email', 'given more than once'],
      ['foo=1&foo=2', 'foo', 'unknown field'],
    ])('answers %s, a parameter given twice, with 422 saying what is wrong', async (query, path, message) => {
      const res = await get(`/api/v1/contacts?${query}`, lister.apiKey);
      expect([res.status, res.body.error.details.fields]).toEqual([422, [{ path, message }]]);
    });

    it('refuses text with half of a surrogate pair, in a field or a key, and changes nothing', async () => {
      const { created, ...contact } = (await post({ email: 'surrogate@example.com', name: 'Whole', companyName: 'Delft Co' })).body;
      expect(created).toBe(true);
      const json = { 'content-type': 'application/json' };
      const res = await app.request('PATCH', `/api/v1/contacts/${contact.id}`, { token: org.apiKey, headers: json, payload: '{"companyName":"x\\ud800y","name":"ok"}' });
      expect(res.status).toBe(422);
      expect(res.body.error.details.fields).toEqual([{ path: 'companyName', message: 'must be well-formed Unicode text (it holds half of a surrogate pair)' }]);
      expect((await get(`/api/v1/contacts/${contact.id}`)).body).toEqual(contact);
      const key = await app.request('POST', '/api/v1/contacts', { token: org.apiKey, headers: json, payload: '{"email":"k@example.com","name":"K","\\udc00":1}' });
      expect(key.status).toBe(422);
      expect(key.body.error.details.fields.map((field: { path: string }) => field.path)).toEqual(['\udc00']);
    });

    it('refuses text holding the NUL character, in a field or a key, and changes nothing', async () => {
      const { created, ...contact } = (await post({ email: 'nul@example.com', name: 'Whole' })).body;
      expect(created).toBe(true);
      const res = await patch(contact.id, { name: 'A\u0000B', city: 'Delft' });
      expect([res.status, res.body.error.details.fields]).toEqual([422, [{ path: 'name', message: 'must not hold the character U+0000 (NUL)' }]]);
      expect((await get(`/api/v1/contacts/${contact.id}`)).body).toEqual(contact);
      const key = await post({ email: 'nul@example.com', name: 'Whole', ['x\u0000']: 1 });
      expect(key.status).toBe(422);
      expect(fieldPaths(key)).toEqual(['x\u0000']);
    });

    it('refuses a key given twice in one object, and changes nothing', async () => {
      const { created: _created, ...contact } = (await post({ email: 'twice@example.com', name: 'Once' })).body;
      const res = await app.request('PATCH', `/api/v1/contacts/${contact.id}`, { token: org.apiKey, headers: { 'content-type': 'application/json' }, payload: '{"name":"First","name":"Second"}' });
      expect(res.status).toBe(422);
      expect(res.body.error.details.fields).toEqual([{ path: 'name', message: 'this key is given more than once' }]);
      expect((await get(`/api/v1/contacts/${contact.id}`)).body).toEqual(contact);
    });

    it('refuses a body nested too deep for its depth, whatever else is wrong with it', async () => {
      const deep = `{"name":"a","name":"b","x":${'['.repeat(40)}${']'.repeat(40)}}`;
      const res = await app.request('POST', '/api/v1/contacts', { token: org.apiKey, headers: { 'content-type': 'application/json' }, payload: deep });
      expect([res.status, res.body.error.code]).toEqual([400, 'invalid_json']);
    });

    it('answers a negative limit with its range, not with its kind', async () => {
      const res = await get('/api/v1/contacts?limit=-1', lister.apiKey);
      expect(res.status).toBe(422);
      expect(res.body.error.details.fields).toEqual([{ path: 'limit', message: 'limit must not be less than 1' }]);
    });
  });

  describe('contacts from submissions (RecordSubmissionContact)', () => {

    it('creates the contact of a new customer and counts the submission once, however often it is dispatched', async () => {
      const id = await record('sub_a1', customer({ name: 'Sam Buyer', email: 'Sam.Buyer@Example.com', phone: '0612', city: 'Delft' }));
      expect(id).toMatch(/^ct_/);
      const first = (await get(`/api/v1/contacts/${id}`)).body;
      expect(first).toMatchObject({ name: 'Sam Buyer', email: 'sam.buyer@example.com', phone: '0612', city: 'Delft', submissionCount: 1 });
      expect(first.lastUsedAt).toBeGreaterThanOrEqual(first.createdAt);

      expect(await record('sub_a1', customer({ name: 'Sam Buyer', email: 'sam.buyer@example.com' }))).toBe(id);
      expect((await get(`/api/v1/contacts/${id}`)).body).toEqual(first);

      await record('sub_a2', customer({ email: 'SAM.BUYER@example.com' }));
      const second = (await get(`/api/v1/contacts/${id}`)).body;
      expect(second.submissionCount).toBe(2);
      expect(second.lastUsedAt).toBeGreaterThanOrEqual(first.lastUsedAt);
    });

    it('fills only the empty fields of an existing contact', async () => {
      const existing = (await post({ email: 'crm.known@example.com', name: 'Known Name', companyName: 'Known Co' })).body;
      await record('sub_b1', customer({ name: 'Other Name', email: 'crm.known@example.com', companyName: 'Other Co', phone: '0700', address: 'Canal 3' }));
      const after = (await get(`/api/v1/contacts/${existing.id}`)).body;
      expect(after).toMatchObject({ name: 'Known Name', companyName: 'Known Co', phone: '0700', address: 'Canal 3', submissionCount: 1 });
    });

    it('cuts a customer\'s text to the contact\'s limits in characters, never between the halves of an emoji', async () => {
      const id = await record('sub_e1', customer({ name: `a${'😀'.repeat(250)}`, email: 'emoji@example.com', city: `${'a'.repeat(99)}😀😀` }));
      const contact = (await get(`/api/v1/contacts/${id}`)).body;
      expect(contact.name).toBe(`a${'😀'.repeat(199)}`);
      expect(contact.city).toBe(`${'a'.repeat(99)}😀`);
    });

    it('records no contact for a customer without an e-mail', async () => {
      expect(await record('sub_c1', customer({ name: 'Anonymous', email: null }))).toBeNull();
      expect(await record('sub_c2', customer({ name: 'Blank', email: '   ' }))).toBeNull();
    });

    it('counts parallel submissions of one new customer exactly once each, in one contact', async () => {
      const ids = await Promise.all(
        Array.from({ length: 8 }, (_, i) => record(`sub_p${i}`, customer({ name: 'Parallel', email: i % 2 ? 'PARALLEL@example.com' : 'parallel@example.com' }))),
      );
      expect(new Set(ids).size).toBe(1);
      expect((await get(`/api/v1/contacts/${ids[0]}`)).body.submissionCount).toBe(8);
    });
  });
});
