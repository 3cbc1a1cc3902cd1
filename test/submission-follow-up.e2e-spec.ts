import { AggregateRepository } from '@lib/event-sourcing';
import { sessionDecider, sessionStream } from '@lib/sessions';
import { exampleConfigurationInput, exampleTemplateBody } from '@lib/templates/domain/example.fixture';
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
