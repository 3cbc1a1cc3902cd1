import { connect } from 'node:net';
import { QuoteFixtures, type Org } from './quotes-fixtures';
import { ADMIN_TOKEN, TestApp } from './support/test-app';

/**
 * Hostile bodies on the write endpoints: each gets a clean 4xx in the error envelope (never a
 * 500), and nothing already stored changes.
 */
describe('hostile input', () => {
  let app: TestApp;
  let f: QuoteFixtures;
  let org: Org;
  let quoteId: string;
  let contactId: string;

  beforeAll(async () => {
    app = await TestApp.start();
    f = new QuoteFixtures(app);
    org = await f.organization();
    quoteId = await f.createQuote(org, await f.submission(org));
    contactId = (await app.request('POST', '/api/v1/contacts', { token: org.apiKey, body: { email: 'kept@example.com', name: 'Kept' } })).body.id;
  });
  afterAll(() => app.close());

  const deep = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
  const targets = () => [
    { method: 'POST', url: '/api/v1/contacts' },
    { method: 'PATCH', url: `/api/v1/contacts/${contactId}` },
    { method: 'PATCH', url: `/api/v1/quotes/${quoteId}` },
    { method: 'PUT', url: `/api/v1/quotes/${quoteId}/line-items` },
  ];
  // the quote without `pdf`: its status moves on its own and its link is new on every read
  const stored = async () => {
    const { pdf: _pdf, ...quote } = (await app.request('GET', `/api/v1/quotes/${quoteId}`, { token: org.apiKey })).body;
    return JSON.stringify([quote, (await app.request('GET', `/api/v1/contacts/${contactId}`, { token: org.apiKey })).body]);
  };

  const payloads: Array<{ name: string; payload: string | Buffer; contentType?: string }> = ([
    ['a body over 1 MiB', JSON.stringify({ email: 'a@example.com', name: 'x'.repeat(1_100_000) })],
    ['JSON nested 10,000 deep', `{"email":"a@example.com","name":${deep(10_000)}}`],
    ['a huge array', JSON.stringify({ lineItems: Array.from({ length: 50_000 }, () => ({ description: 'x', quantity: 1, unitPrice: 1 })) })],
    ['invalid UTF-8', Buffer.concat([Buffer.from('{"email":"a@example.com","name":"'), Buffer.from([0xc3, 0x28, 0xff, 0xfe]), Buffer.from('"}')])],
    ['NaN', '{"email":"a@example.com","notes":NaN,"lineItems":[{"description":"x","quantity":NaN,"unitPrice":1}]}'],
    ['1e308 and beyond', '{"email":"a@example.com","taxRate":1e308,"lineItems":[{"description":"x","quantity":1,"unitPrice":1e309}]}'],
    ['negative zero and negative amounts', '{"email":"a@example.com","taxRate":-0.0,"validityDays":-0,"lineItems":[{"description":"x","quantity":-0,"unitPrice":-1}]}'],
    ['a JSON string instead of an object', '"just a string"'],
    ['null', 'null'],
    ['a prototype-pollution key', '{"email":"a@example.com","__proto__":{"admin":true},"constructor":{"prototype":{"admin":true}}}'],
    ['text declared as JSON', 'hello', 'application/json'],
    ['JSON declared as text', '{"email":"a@example.com"}', 'text/plain'],
  ] as Array<[string, string | Buffer, string?]>).map(([name, payload, contentType]) => ({ name, payload, contentType }));

  it.each(payloads)('$name: a clean 4xx in the envelope on every write endpoint, nothing stored changes', async ({ payload, contentType }) => {
    const before = await stored();
    for (const target of targets()) {
      const response = await app.request(target.method, target.url, { token: org.apiKey, payload, headers: { 'content-type': contentType ?? 'application/json' } });
      if (response.status < 400) {
        // A body that is valid after all (e.g. -0 read as 0, unknown keys ignored) must not corrupt anything.
        expect(response.status).toBeLessThan(300);
        continue;
      }
      expect({ target: target.url, clientError: response.status >= 400 && response.status < 500 }).toEqual({ target: target.url, clientError: true });
      expect(response.body.error).toEqual(expect.objectContaining({ code: expect.any(String), message: expect.any(String) }));
    }
    const after = await stored();
    if (payload.toString().includes('__proto__') || payload.toString().includes('-0')) {
      expect(({} as Record<string, unknown>).admin).toBeUndefined();
    } else {
      expect(after).toBe(before);
    }
  });

  it('a prototype-pollution key in valid JSON is a validation error naming the key, on every write endpoint', async () => {
    const payload = '{"email":"a@example.com","__proto__":{"admin":true},"lineItems":[{"constructor":{"prototype":{"admin":true}}}]}';
    for (const target of targets()) {
      const response = await app.request(target.method, target.url, { token: org.apiKey, payload, headers: { 'content-type': 'application/json' } });
      expect([target.url, response.status, response.body.error.code]).toEqual([target.url, 422, 'validation_error']);
      expect(response.body.error.details.fields.map((field: { path: string }) => field.path)).toEqual(['__proto__', 'lineItems[0].constructor.prototype']);
    }
  });

  it('a key of 600,000 characters over 60,000 repeated members (960 KB, anonymous) is one refusal with a cut path, and the process stays up', async () => {
    const payload = `{"templateId":"x","${'k'.repeat(600_000)}":{${Array.from({ length: 60_000 }, () => '"x":0').join(',')}}}`;
    const response = await app.request('POST', `/storefront/v1/${org.slug}/sessions`, { payload, headers: { 'content-type': 'application/json' } });
    expect([response.status, response.body.error.details.fields]).toEqual([422, [{ path: `${'k'.repeat(200)}…`, message: 'this key is given more than once' }]]);
    expect((await app.request('GET', '/healthz')).status).toBe(200);
  });

  it('script in free text stays inert: stored and returned as plain text', async () => {
    const response = await app.request('PATCH', `/api/v1/contacts/${contactId}`, { token: org.apiKey, body: { name: '<script>alert(1)</script>Eve<img src=x onerror=alert(2)>' } });
    expect(response.status).toBe(200);
    expect(response.body.name).not.toMatch(/<|>/);
    expect(response.body.name).toContain('Eve');
  });

  describe('numbers in exponent form', () => {

    it('a quantity of 5e-324 or 1e-7 is a validation error with the field path, not a crash; other digits past the sixth are rounded like float noise', async () => {
      const quoteId = await f.createQuote(org, await f.submission(org));
      const put = (line: Record<string, number>) =>
        app.request('PUT', `/api/v1/quotes/${quoteId}/line-items`, { token: org.apiKey, body: { lineItems: [{ description: 'Window', quantity: 1, unitPrice: 1, ...line }] } });
      for (const quantity of [5e-324, 1e-7]) {
        const response = await put({ quantity });
        expect(response.status).toBe(422);
        expect(response.body.error.details.fields.map((e: { path: string }) => e.path)).toContain('lineItems[0].quantity');
      }
      // Rounded half-up to 6 decimals, as adjustments are (docs/decisions/quotes.md): a quantity of 1, a price of 0.
      expect((await put({ quantity: 1.0000001, unitPrice: 1e-7 })).status).toBe(200);
      expect((await f.quote(org, quoteId)).lineItems).toEqual([expect.objectContaining({ quantity: 1, unitPrice: 0, total: 0 })]);
      const taxRate = await app.request('PATCH', `/api/v1/quotes/${quoteId}`, { token: org.apiKey, body: { taxRate: 1e-5 } });
      expect(taxRate.status).toBe(200);
      expect((await f.quote(org, quoteId)).taxRate).toBe(0);
      const fine = await app.request('PUT', `/api/v1/quotes/${quoteId}/line-items`, { token: org.apiKey, body: { lineItems: [{ description: 'Window', quantity: 1e2, unitPrice: 0.000001 }] } });
      expect(fine.status).toBe(200);
    });
  });

  describe('bodies that are not JSON objects', () => {

    it.each(['null', '[]', '"text"', '42', 'true'])('%s is a 422 naming the body, also where every field is optional, and creates nothing', async (payload) => {
      const submissionId = await f.submission(org);
      const response = await app.request('POST', `/api/v1/submissions/${submissionId}/quotes`, { token: org.apiKey, payload, headers: { 'content-type': 'application/json' } });
      expect(response.status).toBe(422);
      expect(response.body.error.details.fields).toEqual([{ path: '', message: 'the body must be a JSON object' }]);
      expect((await app.request('GET', `/api/v1/quotes?submissionId=${submissionId}`, { token: org.apiKey })).body.data).toEqual([]);
      // no body at all still means "all defaults"
      expect((await app.request('POST', `/api/v1/submissions/${submissionId}/quotes`, { token: org.apiKey })).status).toBe(201);
    });

    it('an empty body sent as application/json is no body: all defaults where the body is optional, 422 where it is required', async () => {
      const json = { 'content-type': 'application/json' };
      const submissionId = await f.submission(org);
      const created = await app.request('POST', `/api/v1/submissions/${submissionId}/quotes`, { token: org.apiKey, payload: '', headers: json });
      expect(created.status).toBe(201);
      expect(created.body.quoteId).toMatch(/^quo_/);
      const contact = await app.request('POST', '/api/v1/contacts', { token: org.apiKey, payload: '', headers: json });
      expect(contact.status).toBe(422);
      expect(contact.body.error.code).toBe('validation_error');
      // Not JSON at all is still 400.
      expect((await app.request('POST', '/api/v1/contacts', { token: org.apiKey, payload: ' ', headers: json })).body.error.code).toBe('invalid_json');
    });
  });

  describe('arrays where objects belong', () => {
    it('a line item sent as an array is a 422 naming the item, nothing is reserved for it, and the next quote is made', async () => {
      const submissionId = await f.submission(org);
      const refused = await app.request('POST', `/api/v1/submissions/${submissionId}/quotes`, { token: org.apiKey, body: { lineItems: [{ description: 'x', quantity: 1, unitPrice: 1 }, []] } });
      expect([refused.status, refused.body.error.details.fields]).toEqual([422, [{ path: 'lineItems[1]', message: 'must be an object' }]]);
      expect((await app.request('POST', `/api/v1/submissions/${submissionId}/quotes`, { token: org.apiKey, body: {} })).status).toBe(201);
      const before = await stored();
      const replaced = await app.request('PUT', `/api/v1/quotes/${quoteId}/line-items`, { token: org.apiKey, body: { lineItems: [[]] } });
      expect([replaced.status, replaced.body.error.details.fields]).toEqual([422, [{ path: 'lineItems[0]', message: 'must be an object' }]]);
      expect(await stored()).toBe(before);
    });

    it.each([
      ['PUT line-items with 150,000 items that are no objects', () => ({ method: 'PUT', path: `/api/v1/quotes/${quoteId}/line-items`, body: { lineItems: Array.from({ length: 150_000 }, () => 1) } }), 'lineItems holds 150000 items; no array of a request holds more than 1000'],
      ['POST send with 130,000 recipients that are no strings', () => ({ method: 'POST', path: `/api/v1/quotes/${quoteId}/send`, body: { recipients: Array.from({ length: 130_000 }, () => 1) } }), 'recipients holds 130000 items; no array of a request holds more than 1000'],
      ['a lead of 100,000 unknown fields', () => ({ method: 'POST', path: `/storefront/v1/${org.slug}/leads`, body: Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`${i.toString(36)}_`, 0])) }), 'the body has 100000 fields; no object of a request has more than 200'],
      ['a line item of 100,000 unknown fields', () => ({ method: 'PUT', path: `/api/v1/quotes/${quoteId}/line-items`, body: { lineItems: [Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`${i.toString(36)}_`, 0]))] } }), 'lineItems[0] has 100000 fields; no object of a request has more than 200'],
    ])('%s (under the 1 MiB limit) is a 422 naming the part too large for any request, before it is validated field by field, and nothing is stored', async (_what, request, message) => {
      const before = await stored();
      const { method, path, body } = request();
      const res = await app.request(method, path, { token: org.apiKey, body });
      expect([res.status, res.body.error.code, res.body.error.details.fields]).toEqual([422, 'validation_error', [{ path: expect.any(String), message }]]);
      expect(await stored()).toBe(before);
    });

    it('a 422 lists 100 refusals and says how many more there are', async () => {
      const res = await app.request('PUT', `/api/v1/quotes/${quoteId}/line-items`, { token: org.apiKey, body: { lineItems: Array.from({ length: 1_000 }, () => 1) } });
      expect([res.status, res.body.error.code]).toEqual([422, 'validation_error']);
      const fields = res.body.error.details.fields as Array<{ path: string; message: string }>;
      expect(fields).toHaveLength(101);
      expect(fields.slice(0, 2)).toEqual([{ path: 'lineItems', message: 'lineItems must contain no more than 200 elements' }, { path: 'lineItems[0]', message: 'must be an object' }]);
      expect(fields[100]).toEqual({ path: '', message: 'and 901 more refusals of this request, not listed' });
    });

    it('organization settings or quote defaults sent as an array are a 422 naming them, and the settings stay as they were', async () => {
      const path = `/admin/v1/organizations/${org.organizationId}`;
      const before = (await app.request('GET', path, { token: ADMIN_TOKEN })).body;
      for (const [body, field] of [
        [{ settings: [] }, 'settings'],
        [{ settings: [{ webhookUrl: null }] }, 'settings'],
        [{ name: 'x', settings: { quoteDefaults: [{ taxRate: 5 }] } }, 'settings.quoteDefaults'],
      ] as const) {
        const res = await app.request('PATCH', path, { token: ADMIN_TOKEN, body });
        expect([res.status, res.body.error.details.fields.map((f: { path: string }) => f.path)]).toEqual([422, [field]]);
      }
      expect((await app.request('GET', path, { token: ADMIN_TOKEN })).body).toEqual(before);
    });
  });

  describe('fields named after members every object has', () => {
    it.each(['toString', 'valueOf', 'hasOwnProperty', 'constructor'])('%s is an unknown field in a body and in a query, and an ignored extra field of a line item', async (name) => {
      const contact = await app.request('POST', '/api/v1/contacts', { token: org.apiKey, body: { email: 'proto@example.com', [name]: 1 } });
      expect([contact.status, contact.body.error.details.fields]).toEqual([422, [{ path: name, message: 'unknown field' }]]);
      const changed = await app.request('PATCH', `/api/v1/quotes/${quoteId}`, { token: org.apiKey, body: { notes: 'x', [name]: 'x' } });
      expect([changed.status, changed.body.error?.details.fields]).toEqual([422, [{ path: name, message: 'unknown field' }]]);
      // api-v1: extra fields of a line item (a base item's `total`) are ignored, whatever their name.
      const lines = await app.request('PUT', `/api/v1/quotes/${quoteId}/line-items`, { token: org.apiKey, body: { lineItems: [{ description: 'x', quantity: 1, unitPrice: 1, total: 1, [name]: 'x' }] } });
      expect(lines.status).toBe(200);
      const list = await app.request('GET', `/api/v1/submissions?${name}=1`, { token: org.apiKey });
      expect([list.status, list.body.error?.details.fields]).toEqual([422, [{ path: name, message: 'unknown field' }]]);
    });
  });

  describe('POSTs that take no body', () => {
    it('refuse a field as unknown, and still take no body or an empty one', async () => {
      const admin = { token: ADMIN_TOKEN };
      const submissionId = await f.submission(org);
      for (const [url, options] of [
        ['/api/v1/events/evt_unknown/redeliver', { token: org.apiKey }],
        [`/admin/v1/organizations/${org.organizationId}/signing-secret`, admin],
        [`/admin/v1/organizations/${org.organizationId}/submissions/${submissionId}/autofill`, admin],
      ] as const) {
        const res = await app.request('POST', url, { ...options, body: { force: true } });
        expect([url, res.status, res.body.error?.details?.fields]).toEqual([url, 422, [{ path: 'force', message: 'unknown field' }]]);
      }
      expect((await app.request('POST', `/admin/v1/organizations/${org.organizationId}/signing-secret`, admin)).status).toBe(201);
      expect((await app.request('POST', `/admin/v1/organizations/${org.organizationId}/signing-secret`, { ...admin, body: {} })).status).toBe(201);
    });
  });

  describe('overlong path parameters', () => {

    it.each([
      ['GET', '/api/v1/quotes/', '', 404, 'not_found'],
      ['POST', '/storefront/v1/quotes/', '/accept', 404, 'not_found'],
      // an unknown capability token is 401 first of all (decisions §8)
      ['GET', '/api/v1/configuration-sessions/', '', 401, 'unauthorized'],
    ])('%s %s… with a 1,500-character id or token answers in the documented envelope', async (method, prefix, suffix, status, code) => {
      const response = await app.request(method, `${prefix}${'x'.repeat(1500)}${suffix}`, { token: org.apiKey, body: method === 'GET' ? undefined : {} });
      expect(response.status).toBe(status);
      expect(response.body.error.code).toBe(code);
    });
  });
  describe('crafted cursors', () => {
    // Cursors are base64url JSON, unsigned: a client can write any of these.
    const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const lists = () => [
      ['submissions', '/api/v1/submissions'],
      ['quotes', '/api/v1/quotes'],
      ['templates', '/api/v1/templates'],
      ['contacts', '/api/v1/contacts'],
      ['leads', '/api/v1/leads'],
      ['events', '/api/v1/events'],
      [`quote-versions:${quoteId}`, `/api/v1/quotes/${quoteId}/versions`],
      [`quote-emails:${quoteId}`, `/api/v1/quotes/${quoteId}/emails`],
    ];
    const shapes: Array<[string, unknown[]]> = [
      ['one value instead of two', ['x']],
      ['three values', [1, 'a', 'b']],
      ['a string where the time belongs', ['x', 'sub_1']],
      ['a fraction where the time belongs', [1.5, 'x']],
      ['a number where the id belongs', [1, 2]],
      ['nulls', [null, null]],
      ['an object', [{ $gt: 1 }, 'x']],
    ];

    it.each(shapes)('%s: 422 with the cursor path on every list, never a 500', async (_name, values) => {
      for (const [list, url] of lists()) {
        const res = await app.request('GET', `${url}?cursor=${cursorOf({ l: list, a: values })}`, { token: org.apiKey });
        expect([url, res.status, res.body.error?.code, res.body.error?.details?.fields?.map((f: { path: string }) => f.path)]).toEqual([url, 422, 'validation_error', ['cursor']]);
      }
    });

    it('still pages with a cursor the list gave', async () => {
      await f.createQuote(org, await f.submission(org));
      const first = await app.request('GET', '/api/v1/quotes?limit=1', { token: org.apiKey });
      const second = await app.request('GET', `/api/v1/quotes?limit=1&cursor=${first.body.nextCursor}`, { token: org.apiKey });
      expect(second.status).toBe(200);
      expect(second.body.data[0].id).not.toBe(first.body.data[0].id);
    });
  });

  it('a "<" that opens no complete tag is text: free text is stored as sent, not cut off there', async () => {
    const send = (method: string, url: string, body: object) => app.request(method, url, { token: org.apiKey, body });
    const read = async (url: string) => (await app.request('GET', url, { token: org.apiKey })).body;
    expect((await send('PATCH', `/api/v1/quotes/${quoteId}`, { reference: 'PO A<B-7', notes: 'Frame size<Opening, see drawing' })).status).toBe(200);
    expect((await send('PUT', `/api/v1/quotes/${quoteId}/line-items`, { lineItems: [{ description: 'a<b', quantity: 1, unitPrice: 1 }] })).status).toBe(200);
    expect((await send('PATCH', `/api/v1/contacts/${contactId}`, { companyName: 'B<Windows GmbH' })).status).toBe(200);
    const quote = await read(`/api/v1/quotes/${quoteId}`);
    expect([quote.reference, quote.notes, quote.lineItems.map((line: { description: string }) => line.description)]).toEqual(['PO A<B-7', 'Frame size<Opening, see drawing', ['a<b']]);
    expect((await read(`/api/v1/contacts/${contactId}`)).companyName).toBe('B<Windows GmbH');
  });
});

/** Requests that never become a route: the HTTP parser or the router refuses them, over a real socket. */
describe('malformed requests', () => {
  let app: TestApp;
  let base: string;
  let apiKey: string;

  beforeAll(async () => {
    app = await TestApp.start();
    base = await app.listen();
    apiKey = (await new QuoteFixtures(app).organization()).apiKey;
  });
  afterAll(() => app.close());

  /**
   * A raw HTTP exchange: fetch itself refuses to send some of these. `halfClose`: end the sending
   * side at once; a request the server answers after an await (an API key looked up in MongoDB)
   * then finds its socket gone, so such a request sends `Connection: close` and waits instead.
   */
  const raw = (head: string, halfClose = true): Promise<{ status: number; type: string; body: any }> =>
    new Promise((resolve, reject) => {
      const socket = connect(Number(new URL(base).port), '127.0.0.1', () => (halfClose ? socket.end(head) : socket.write(head)));
      let data = '';
      socket.on('data', (chunk) => (data += chunk));
      socket.on('error', reject);
      socket.on('close', () => {
        const [headers, body] = data.split('\r\n\r\n');
        resolve({ status: Number(headers.split(' ')[1]), type: /content-type: ([^\r]+)/i.exec(headers)?.[1] ?? '', body: body ? JSON.parse(body) : null });
      });
    });

  it.each([
    ['a path that is not valid percent-encoding', '/api/v1/submissions/%FF%FE'],
    ['a lone percent sign', '/api/v1/quotes/%'],
    ['a path parameter of 3,000 characters', `/api/v1/quotes/${'x'.repeat(3000)}`],
  ])('%s: 404 not_found in the envelope, with a request id', async (_case, path) => {
    const res = await fetch(base + path, { headers: { authorization: `Bearer ${apiKey}`, 'x-request-id': 'bad-url-1' } });
    expect(res.status).toBe(404);
    expect(res.headers.get('x-request-id')).toBe('bad-url-1');
    expect(await res.json()).toEqual({ error: { code: 'not_found', message: 'Not found.' } });
  });

  it('a request line and headers over 16 KiB: 431 in the envelope', async () => {
    const res = await raw(`GET /api/v1/quotes?submissionId=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(res.type).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({ error: { code: 'validation_error', message: 'The request line and headers are larger than 16 KiB.' } });
  });

  it('an absolute-form request target (`GET http://host/path`) is served as its path, with its API key', async () => {
    const res = await raw(`GET ${base}/api/v1/organization HTTP/1.1\r\nHost: ${new URL(base).host}\r\nAuthorization: Bearer ${apiKey}\r\nConnection: close\r\n\r\n`, false);
    expect([res.status, res.body?.id]).toEqual([200, expect.stringMatching(/^org_/)]);
    const anonymous = await raw(`GET ${base}/api/v1/organization HTTP/1.1\r\nHost: ${new URL(base).host}\r\nConnection: close\r\n\r\n`, false);
    expect(anonymous.status).toBe(401);
  });

  it('something that is not HTTP: 400 in the envelope', async () => {
    const res = await raw('HELLO THERE\r\n\r\n');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
  });
});


/** A path the router cannot take is still a request: counted against the caller's rate limit, with its headers. */
describe('malformed paths and the rate limits', () => {
  let app: TestApp;
  let base: string;

  beforeAll(async () => {
    app = await TestApp.start({ RATE_LIMIT_IP_PER_MIN: '3', RATE_LIMIT_KEY_PER_MIN: '2' });
    base = await app.listen();
  });
  afterAll(() => app.close());

  it('counts them per IP without a key, and answers 429 once the limit is used up', async () => {
    const statuses: Array<[number, string | null, string | null]> = [];
    for (const path of ['/api/v1/quotes/%zz', '/api/v1/quotes/%', `/api/v1/quotes/${'x'.repeat(3000)}`, '/api/v1/quotes/%zz']) {
      const res = await fetch(base + path);
      statuses.push([res.status, res.headers.get('ratelimit-remaining'), res.headers.get('retry-after')]);
      if (res.status === 429) expect(((await res.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
    }
    expect(statuses.map(([status, remaining]) => [status, remaining])).toEqual([[404, '2'], [404, '1'], [404, '0'], [429, '0']]);
    expect(Number(statuses[3][2])).toBeGreaterThan(0);
    expect((await fetch(`${base}/api/v1/nope`)).status).toBe(429);
  });

  it('counts them against the API key that sent them', async () => {
    const { apiKey } = await new QuoteFixtures(app).organization();
    const headers = { authorization: `Bearer ${apiKey}` };
    const first = await fetch(`${base}/api/v1/quotes/%zz`, { headers });
    expect([first.status, first.headers.get('ratelimit-limit'), first.headers.get('ratelimit-remaining')]).toEqual([404, '2', '1']);
    expect((await fetch(`${base}/api/v1/quotes`, { headers })).headers.get('ratelimit-remaining')).toBe('0');
  });
});
