import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { RecordedEvent } from '@lib/event-store';
import { SigningSecretSeal } from '@lib/organizations/application/signing-secret-seal';
import { foldWebhookOrganization, liveSecrets, targetUrl } from './organization-profile';

const DAY = 86_400_000;
let position = 0;
function event(type: string, data: Record<string, unknown>): RecordedEvent {
  position += 1;
  return { id: `e${position}`, streamId: 'organization-org_1', type, data: { organizationId: 'org_1', ...data }, metadata: {}, revision: position - 1, position, recordedAt: 0 };
}

const settings = { webhookUrl: 'https://crm.example/hooks', pricingWebhookUrl: null, externalPricingEnabled: false, pricingTimeoutMs: 10_000, quoteDefaults: { taxRate: 0, validityDays: 30 } };
const seal = new SigningSecretSeal(randomBytes(32));
/** A rotation as the gateway now stores it: the secret sealed. */
const sealedRotation = (secretId: string, secret: string, previousValidUntil: number, at: number, by = seal) =>
  event('organization.v2.signingSecretRotated', { secretId, sealedSecret: by.seal(secret, { organizationId: 'org_1', secretId }), previousValidUntil, at });

describe('the organization as webhook delivery sees it', () => {
  afterEach(() => jest.restoreAllMocks());
  const created = event('organization.v1.created', { profile: { name: 'Acme', slug: 'acme', locale: 'de', unitSystem: 'metric', currency: 'EUR', plan: 'pro' }, settings, at: 0 });
  // stored in clear before secrets were sealed (2026-11-26): it must go on signing
  const first = event('organization.v1.signingSecretRotated', { secretId: 's1', secret: 'whsec_one', previousValidUntil: 1_000, at: 1_000 });
  const second = sealedRotation('s2', 'whsec_two', 2_000 + DAY, 2_000);
  const renamed = event('organization.v1.profileChanged', { changes: { name: 'Acme BV' }, at: 3_000 });
  const pricingUrl = event('organization.v1.settingsChanged', { settings: { ...settings, pricingWebhookUrl: 'https://pricing.example/hook', pricingTimeoutMs: 4_000 }, at: 4_000 });
  const all = [created, first, second, renamed, pricingUrl];

  it('given a secret stored in clear before secrets were sealed, then it signs as before', () => {
    expect(liveSecrets(foldWebhookOrganization([created, first], seal)!, 1_000)).toEqual(['whsec_one']);
  });

  it('given a rotation, then both secrets sign until previousValidUntil, then only the new one, opened from its seal', () => {
    const org = foldWebhookOrganization(all, seal)!;
    expect(liveSecrets(org, 2_000)).toEqual(['whsec_two', 'whsec_one']);
    expect(liveSecrets(org, 2_000 + DAY - 1)).toEqual(['whsec_two', 'whsec_one']);
    expect(liveSecrets(org, 2_000 + DAY)).toEqual(['whsec_two']);
  });

  it('given two sealed rotations, then both sealed secrets sign during the overlap', () => {
    const third = sealedRotation('s3', 'whsec_three', 5_000 + DAY, 5_000);
    expect(liveSecrets(foldWebhookOrganization([...all, third], seal)!, 2_000 + DAY)).toEqual(['whsec_three', 'whsec_two']);
  });

  it('given a secret sealed with another key, then it does not sign (nothing throws), and the secrets that open still do', () => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const foreign = sealedRotation('s4', 'whsec_foreign', 6_000 + DAY, 6_000, new SigningSecretSeal(randomBytes(32)));
    const org = foldWebhookOrganization([created, first, foreign], seal)!;
    expect(liveSecrets(org, 6_000)).toEqual(['whsec_one']);
    expect(liveSecrets(org, 6_000 + DAY)).toEqual([]);
  });

  it('given no secret was ever issued, then nothing can sign', () => {
    expect(liveSecrets(foldWebhookOrganization([created], seal)!, 0)).toEqual([]);
  });

  it('given a position, then the organization is as it was when that event was appended', () => {
    const then = foldWebhookOrganization(all, seal, second.position)!;
    expect(then).toMatchObject({ name: 'Acme', locale: 'de', pricingWebhookUrl: null });
    expect(foldWebhookOrganization(all, seal)).toMatchObject({ name: 'Acme BV', pricingWebhookUrl: 'https://pricing.example/hook', pricingTimeoutMs: 4_000 });
  });

  it('given the target kind, then pricing events prefer pricingWebhookUrl and fall back to webhookUrl', () => {
    expect(targetUrl({ webhookUrl: 'a', pricingWebhookUrl: 'b' }, 'pricing')).toBe('b');
    expect(targetUrl({ webhookUrl: 'a', pricingWebhookUrl: null }, 'pricing')).toBe('a');
    expect(targetUrl({ webhookUrl: null, pricingWebhookUrl: 'b' }, 'webhook')).toBeNull();
  });
});
