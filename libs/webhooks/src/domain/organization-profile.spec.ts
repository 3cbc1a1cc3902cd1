import type { RecordedEvent } from '@lib/event-store';
import { foldWebhookOrganization, liveSecrets, targetUrl } from './organization-profile';

const DAY = 86_400_000;
let position = 0;
function event(type: string, data: Record<string, unknown>): RecordedEvent {
  position += 1;
  return { id: `e${position}`, streamId: 'organization-org_1', type, data: { organizationId: 'org_1', ...data }, metadata: {}, revision: position - 1, position, recordedAt: 0 };
}

const settings = { webhookUrl: 'https://crm.example/hooks', pricingWebhookUrl: null, externalPricingEnabled: false, pricingTimeoutMs: 10_000, quoteDefaults: { taxRate: 0, validityDays: 30 } };

describe('the organization as webhook delivery sees it', () => {
  const created = event('organization.v1.created', { profile: { name: 'Acme', slug: 'acme', locale: 'de', unitSystem: 'metric', currency: 'EUR', plan: 'pro' }, settings, at: 0 });
  const first = event('organization.v1.signingSecretRotated', { secretId: 's1', secret: 'whsec_one', previousValidUntil: 1_000, at: 1_000 });
  const second = event('organization.v1.signingSecretRotated', { secretId: 's2', secret: 'whsec_two', previousValidUntil: 2_000 + DAY, at: 2_000 });
  const renamed = event('organization.v1.profileChanged', { changes: { name: 'Acme BV' }, at: 3_000 });
  const pricingUrl = event('organization.v1.settingsChanged', { settings: { ...settings, pricingWebhookUrl: 'https://pricing.example/hook', pricingTimeoutMs: 4_000 }, at: 4_000 });
  const all = [created, first, second, renamed, pricingUrl];

  it('given a rotation, then both secrets sign until previousValidUntil, then only the new one', () => {
    const org = foldWebhookOrganization(all)!;
    expect(liveSecrets(org, 2_000)).toEqual(['whsec_two', 'whsec_one']);
    expect(liveSecrets(org, 2_000 + DAY - 1)).toEqual(['whsec_two', 'whsec_one']);
    expect(liveSecrets(org, 2_000 + DAY)).toEqual(['whsec_two']);
  });

  it('given no secret was ever issued, then nothing can sign', () => {
    expect(liveSecrets(foldWebhookOrganization([created])!, 0)).toEqual([]);
  });

  it('given a position, then the organization is as it was when that event was appended', () => {
    const then = foldWebhookOrganization(all, second.position)!;
    expect(then).toMatchObject({ name: 'Acme', locale: 'de', pricingWebhookUrl: null });
    expect(foldWebhookOrganization(all)).toMatchObject({ name: 'Acme BV', pricingWebhookUrl: 'https://pricing.example/hook', pricingTimeoutMs: 4_000 });
  });

  it('given the target kind, then pricing events prefer pricingWebhookUrl and fall back to webhookUrl', () => {
    expect(targetUrl({ webhookUrl: 'a', pricingWebhookUrl: 'b' }, 'pricing')).toBe('b');
    expect(targetUrl({ webhookUrl: 'a', pricingWebhookUrl: null }, 'pricing')).toBe('a');
    expect(targetUrl({ webhookUrl: null, pricingWebhookUrl: 'b' }, 'webhook')).toBeNull();
  });
});
