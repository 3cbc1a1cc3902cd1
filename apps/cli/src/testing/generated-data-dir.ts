import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '@lib/event-store';
import { organizationStream, type OrganizationEvent } from '@lib/organizations/domain/organization.events';
import { GENERATED_ORGANIZATIONS, generateQuoteEvents, generatedOrganizationId } from '../../../../bench/event-generator';

/** The organization as the admin API creates it, without webhooks (so without a signing secret). */
function organizationCreated(organizationId: string): OrganizationEvent {
  return {
    type: 'organization.v1.created',
    data: {
      organizationId,
      profile: { name: organizationId, slug: organizationId.replace(/_/g, '-'), locale: 'en', unitSystem: 'metric', currency: 'EUR', plan: 'pro' },
      settings: { webhookUrl: null, pricingWebhookUrl: null, externalPricingEnabled: false, pricingTimeoutMs: 5_000, quoteDefaults: { taxRate: 21, validityDays: 30 } },
      at: Date.UTC(2026, 0, 1),
    },
  };
}

/**
 * A new DATA_DIR whose embedded event store holds the generated organizations and about `count`
 * generated quote events of theirs, and the log's head.
 */
export async function generatedDataDir(prefix: string, count: number): Promise<{ dataDir: string; head: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  const events = new SqliteEventStore({ file: join(dataDir, 'events.db') });
  try {
    for (let n = 0; n < GENERATED_ORGANIZATIONS; n++) {
      const organizationId = generatedOrganizationId(n);
      await events.appendToStream(organizationStream(organizationId), [{ ...organizationCreated(organizationId), metadata: { actor: 'admin' } }], 'no_stream');
    }
    await generateQuoteEvents(events, count);
    return { dataDir, head: await events.headPosition() };
  } finally {
    await events.close();
  }
}
