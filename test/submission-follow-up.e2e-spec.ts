import { AggregateRepository } from '@lib/event-sourcing';
import { EventStore } from '@lib/event-store';
import { quoteStream } from '@lib/quotes';
import { SubmissionLifecycleReactor } from '@lib/quotes/application/submission-lifecycle.reactor';
import { sessionDecider, sessionStream } from '@lib/sessions';
import { submissionStream, type SubmissionEvent } from '@lib/submissions';
import { exampleConfigurationInput, exampleTemplateBody } from '@lib/templates/domain/example.fixture';
import { QuoteFixtures } from './quotes-fixtures';
import { ADMIN_TOKEN, TestApp } from './support/test-app';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a submit interrupted after the session was written', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await TestApp.start();
  });
  afterAll(() => app.close());

  it('still ends with the submission and the contact, created by the outbox', async () => {
    const org = await app.createOrganization();
    const template = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/templates`, { token: ADMIN_TOKEN, body: exampleTemplateBody() });
    const started = await app.request('POST', `/storefront/v1/${org.slug}/sessions`, { body: { templateId: template.body.id } });
    const { sessionId, customerToken } = started.body;
    const configured = await app.request('PUT', `/storefront/v1/sessions/${sessionId}/configuration`, { token: customerToken, body: exampleConfigurationInput() });
    expect(configured.status).toBe(200);

    // Only the session write happens, as if the process died right after it.
    const submissionId = 'sub_interrupted0000000000001';
    const session = configured.body.session ?? configured.body;
    await app.get(AggregateRepository).handle(
      sessionDecider,
      sessionStream(sessionId),
      {
        type: 'submitSession',
        submissionId,
        customer: { name: 'Interrupted', email: 'Interrupted@Example.com', phone: null, companyName: null, address: null, postalCode: null, city: null, country: null },
        configHash: session.configHash,
        basePricing: session.basePricing,
        currency: 'EUR',
        livePricing: false,
        at: Date.now(),
        idleTtlMs: 86_400_000,
      } as never,
      { metadata: { actor: `customer:${sessionId}` } },
    );

    let found;
    for (let i = 0; i < 100; i++) {
      found = await app.request('GET', `/api/v1/submissions/${submissionId}`, { token: org.apiKey });
      if (found.status === 200) break;
      await pause(50);
    }
    expect(found!.status).toBe(200);
    expect(found!.body.customer.email).toBe('Interrupted@Example.com');
    let contacts;
    for (let i = 0; i < 100; i++) {
      contacts = await app.request('GET', '/api/v1/contacts?email=interrupted@example.com', { token: org.apiKey });
      if (contacts.body.data?.length) break;
      await pause(50);
    }
    expect(contacts!.body.data).toHaveLength(1);
    expect(contacts!.body.data[0].submissionCount).toBe(1);
  });
});

describe('a quote acceptance the outbox delivers again, late', () => {
  let app: TestApp;
  let f: QuoteFixtures;

  beforeAll(async () => {
    app = await TestApp.start();
    f = new QuoteFixtures(app);
  });
  afterAll(() => app.close());

  it('does not close a submission the organization reopened after that acceptance; another accepted quote still closes it', async () => {
    const org = await f.organization();
    const submissionId = await f.submission(org);
    const status = async () => (await app.request('GET', `/api/v1/submissions/${submissionId}`, { token: org.apiKey })).body.status;
    const accept = async (quoteId: string) => {
      await f.send(org, quoteId);
      const res = await app.request('POST', `/storefront/v1/quotes/${await f.customerToken(quoteId)}/accept`, { body: {} });
      expect(res.status).toBe(200);
    };

    const first = await f.createQuote(org, submissionId);
    await accept(first);
    expect(await status()).toBe('closed');
    const reopened = await app.request('PATCH', `/api/v1/submissions/${submissionId}`, { token: org.apiKey, body: { status: 'quoted' } });
    expect(reopened.status).toBe(200);

    // The outbox, back after being down, sees the same quote.v1.accepted again (at least once: twice here).
    const acceptance = (await app.get(EventStore).readStream(quoteStream(first))).find((e) => e.type === 'quote.v1.accepted')!;
    await app.get(SubmissionLifecycleReactor).react(acceptance);
    await app.get(SubmissionLifecycleReactor).react(acceptance);
    expect(await status()).toBe('quoted');
    const closes = async () =>
      ((await app.get(EventStore).readStream(submissionStream(submissionId))) as unknown as SubmissionEvent[])
        .flatMap((e) => (e.type === 'submission.v1.statusChanged' && e.data.to === 'closed' ? [e.data.quoteId] : []));
    expect(await closes()).toEqual([first]);

    const second = await f.createQuote(org, submissionId);
    await accept(second);
    expect(await status()).toBe('closed');
    expect(await closes()).toEqual([first, second]);
  });
});
