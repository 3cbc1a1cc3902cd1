import { QuoteFixtures, type Org } from './quotes-fixtures';
import { TestApp } from './support/test-app';

describe('quotes under concurrency', () => {
  let app: TestApp;
  let f: QuoteFixtures;

  beforeAll(async () => {
    app = await TestApp.start();
    f = new QuoteFixtures(app);
  });
  afterAll(() => app.close());

  it('numbers 30 quotes created at the same time 1..30, each number exactly once', async () => {
    const org = await f.organization();
    const submissionId = await f.submission(org);
    const responses = await Promise.all(Array.from({ length: 30 }, () => app.request('POST', `/api/v1/submissions/${submissionId}/quotes`, { token: org.apiKey, body: {} })));
    expect(responses.map((r) => r.status)).toEqual(Array(30).fill(201));
    const numbers = await Promise.all(responses.map(async (r) => (await f.quote(org, r.body.quoteId)).quoteNumber as string));
    const year = numbers[0].slice(2, 6);
    expect([...numbers].sort()).toEqual(Array.from({ length: 30 }, (_, i) => `Q-${year}-${String(i + 1).padStart(6, '0')}`));
    const listed = await app.request('GET', `/api/v1/quotes?submissionId=${submissionId}&limit=100`, { token: org.apiKey });
    expect(listed.body.data).toHaveLength(30);
  });

  it('applies 50 parallel send-and-revise cycles of one quote one after another: versions contiguous, every breakdown kept', async () => {
    const org: Org = await f.organization();
    const quoteId = await f.createQuote(org, await f.submission(org));
    const original = (await f.quote(org, quoteId)).lineItems.map((l: any) => l.description);
    const marker = (i: number) => `revision ${i}`;
    const results = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const sent = await app.request('POST', `/api/v1/quotes/${quoteId}/send`, { token: org.apiKey, body: { recipients: ['ada@example.com'] } });
        const revised = await app.request('PUT', `/api/v1/quotes/${quoteId}/line-items`, {
          token: org.apiKey,
          body: { lineItems: [{ description: marker(i), quantity: 1, unitPrice: i + 1 }], revise: true, changeDescription: marker(i) },
        });
        return [sent.status, revised.status];
      }),
    );
    expect(results).toEqual(Array(50).fill([200, 200]));

    const quote = await f.quote(org, quoteId);
    const entries = (await app.request('GET', `/api/v1/quotes/${quoteId}/versions?limit=100`, { token: org.apiKey })).body.data.reverse();
    // the original breakdown, then one entry per replacement: nothing lost, nothing twice
    expect(entries).toHaveLength(51);
    expect(entries[0].snapshot.lineItems.map((l: any) => l.description)).toEqual(original);
    const markers = entries.slice(1).map((e: any) => e.snapshot.lineItems.map((l: any) => l.description).join());
    expect([...markers].sort()).toEqual(Array.from({ length: 50 }, (_, i) => marker(i)).sort());
    expect(entries.slice(1).map((e: any) => e.changeDescription)).toEqual(markers);
    // versions 1..current, contiguous, in order
    const versionNumbers = entries.map((e: any) => e.version);
    expect(versionNumbers[0]).toBe(1);
    for (let i = 1; i < versionNumbers.length; i++) expect(versionNumbers[i] - versionNumbers[i - 1]).toBeGreaterThanOrEqual(0);
    expect([...new Set(versionNumbers)]).toEqual(Array.from({ length: quote.version }, (_, i) => i + 1));
    expect(quote.version).toBeGreaterThan(1);
    // every version before the current one was sent before it was revised: its last entry shows it as sent
    for (let version = 1; version < quote.version; version++) {
      const last = entries.filter((e: any) => e.version === version).pop();
      expect(last.snapshot.status).toBe('sent');
    }
    expect(entries[entries.length - 1].snapshot).toMatchObject({ version: quote.version, lineItems: quote.lineItems });
    // 100 writes to one stream, one after another: on FerretDB, beside other work on two cores, that took more than 20 s.
  }, 120_000);
});
