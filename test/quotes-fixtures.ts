import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEMO_TEMPLATE } from '../apps/api-gateway/src/demo-template';
import type { OrganizationSettingsPatch } from '@lib/organizations';
import { exampleConfigurationInput } from '@lib/templates/domain/example.fixture';
import { ADMIN_TOKEN, type TestApp } from './support/test-app';

export type Org = Awaited<ReturnType<TestApp['createOrganization']>> & { templateId: string };

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const fieldPaths = (res: { body: any }): string[] => res.body.error.details.fields.map((f: { path: string }) => f.path);

/** Drives the real flow over HTTP: admin template, storefront session and submit, then the quotes API. */
export class QuoteFixtures {
  constructor(private readonly app: TestApp) {}

  async organization(options: { settings?: OrganizationSettingsPatch; currency?: string } = {}): Promise<Org> {
    const org = await this.app.createOrganization({ settings: { quoteDefaults: { taxRate: 21, validityDays: 30 } }, ...options });
    const template = await this.app.request('POST', `/admin/v1/organizations/${org.organizationId}/templates`, { token: ADMIN_TOKEN, body: DEMO_TEMPLATE });
    expect(template.status).toBe(201);
    return { ...org, templateId: template.body.id };
  }

  /** A customer configures the example window on the storefront and submits it. */
  async submission(org: Org, options: { locale?: string; name?: string; email?: string; customer?: Record<string, string> } = {}): Promise<string> {
    const started = await this.app.request('POST', `/storefront/v1/${org.slug}/sessions`, { body: { templateId: org.templateId, ...(options.locale ? { locale: options.locale } : {}) } });
    expect(started.status).toBe(201);
    const { sessionId, customerToken } = started.body;
    const configured = await this.app.request('PUT', `/storefront/v1/sessions/${sessionId}/configuration`, { token: customerToken, body: exampleConfigurationInput() });
    expect(configured.status).toBe(200);
    const submitted = await this.app.request('POST', `/storefront/v1/sessions/${sessionId}/submit`, {
      token: customerToken,
      body: { customer: { name: options.name ?? 'Ada Lovelace', email: options.email ?? 'ada@example.com', ...options.customer } },
    });
    expect(submitted.status).toBe(201);
    return submitted.body.submissionId;
  }

  async createQuote(org: Org, submissionId: string, body: Record<string, unknown> = {}): Promise<string> {
    const res = await this.app.request('POST', `/api/v1/submissions/${submissionId}/quotes`, { token: org.apiKey, body });
    expect(res.status).toBe(201);
    return res.body.quoteId;
  }

  async quote(org: Org, quoteId: string): Promise<any> {
    const res = await this.app.request('GET', `/api/v1/quotes/${quoteId}`, { token: org.apiKey });
    expect(res.status).toBe(200);
    return res.body;
  }

  async send(org: Org, quoteId: string, body: Record<string, unknown> = { recipients: ['ada@example.com'] }): Promise<any> {
    const res = await this.app.request('POST', `/api/v1/quotes/${quoteId}/send`, { token: org.apiKey, body });
    expect(res.status).toBe(200);
    return res.body;
  }

  /** The e-mails the outbox wrote for a quote (DATA_DIR/mail). */
  mails(quoteId: string): any[] {
    const directory = join(this.app.config.dataDir, 'mail');
    if (!existsSync(directory)) return [];
    return readdirSync(directory)
      .filter((file) => file.endsWith('.json'))
      .map((file) => JSON.parse(readFileSync(join(directory, file), 'utf8')))
      .filter((mail) => mail.quoteId === quoteId);
  }

  /** Waits until the outbox has mailed a quote `count` times; returns the mails. */
  async awaitMails(quoteId: string, count = 1): Promise<any[]> {
    for (let waited = 0; waited < 10_000; waited += 20) {
      const mails = this.mails(quoteId);
      if (mails.length >= count) return mails;
      await pause(20);
    }
    throw new Error(`expected ${count} mail(s) for ${quoteId}, found ${this.mails(quoteId).length}`);
  }

  /** The customer's token, from the link in the quote e-mail. */
  async customerToken(quoteId: string): Promise<string> {
    const [mail] = await this.awaitMails(quoteId);
    return new URL(mail.quoteUrl).pathname.split('/').pop()!;
  }
}
