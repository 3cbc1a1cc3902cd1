import { ForbiddenPlan, NotFound } from '@lib/shared';
import { MAX_API_KEYS, organizationDecider, SECRET_ROTATION_OVERLAP_MS, type OrganizationCommand } from './organization.decider';
import { ApiKeyLimitReached } from './organization.errors';
import type { OrganizationEvent, OrganizationSettings } from './organization.events';

const AT = Date.UTC(2026, 10, 1);
const settings: OrganizationSettings = {
  webhookUrl: null,
  pricingWebhookUrl: null,
  externalPricingEnabled: false,
  pricingTimeoutMs: 10_000,
  quoteDefaults: { taxRate: 0, validityDays: 30 },
};
const created: OrganizationEvent = {
  type: 'organization.v1.created',
  data: { organizationId: 'org_1', profile: { name: 'Acme', slug: 'acme', locale: 'en', unitSystem: 'metric', currency: 'EUR', plan: 'pro' }, settings, at: AT },
};
const keyCreated = (keyId: string): OrganizationEvent => ({
  type: 'organization.v1.apiKeyCreated',
  data: { organizationId: 'org_1', keyId, name: keyId, readOnly: false, keyHash: `hash-${keyId}`, keyPrefix: 'qk_live_abcd', at: AT },
});
/** as SigningSecretSeal writes it: the decider only carries it */
const minted = { secretId: 'whs_1', sealedSecret: 'v1.0a1b2c3d.c2VhbGVk' };

/** given events, when a command: the events decided */
function when(given: OrganizationEvent[], command: OrganizationCommand): OrganizationEvent[] {
  return organizationDecider.decide(command, given.reduce(organizationDecider.evolve, organizationDecider.initialState()));
}

describe('organization decider', () => {
  it('creates an organization once', () => {
    const command: OrganizationCommand = { type: 'createOrganization', organizationId: 'org_1', profile: created.data.profile as never, settings, mintedSecret: minted, at: AT };
    expect(when([], command)).toEqual([created]);
    expect(() => when([created], command)).toThrow();
  });

  it.each([
    ['live pricing', { externalPricingEnabled: true }],
    ['a webhook URL', { webhookUrl: 'https://crm.example.com/hooks' }],
    ['a pricing webhook URL', { pricingWebhookUrl: 'https://crm.example.com/pricing' }],
  ])('mints the signing secret in the creation of an organization with %s', (_, change) => {
    const withHooks = { ...settings, ...change };
    const events = when([], { type: 'createOrganization', organizationId: 'org_1', profile: created.data.profile as never, settings: withHooks, mintedSecret: minted, at: AT });
    expect(events).toEqual([
      { ...created, data: { ...created.data, settings: withHooks } },
      { type: 'organization.v2.signingSecretRotated', data: { organizationId: 'org_1', ...minted, previousValidUntil: AT, at: AT } },
    ]);
  });

  it('records only the profile fields that change', () => {
    expect(when([created], { type: 'updateOrganization', changes: { name: 'Acme', locale: 'de' }, mintedSecret: minted, at: AT + 1 })).toEqual([
      { type: 'organization.v1.profileChanged', data: { organizationId: 'org_1', changes: { locale: 'de' }, at: AT + 1 } },
    ]);
    expect(when([created], { type: 'updateOrganization', changes: { name: 'Acme' }, mintedSecret: minted, at: AT + 1 })).toEqual([]);
  });

  it('merges quote defaults field by field', () => {
    const [event] = when([created], { type: 'updateOrganization', changes: {}, settings: { quoteDefaults: { taxRate: 21 } }, mintedSecret: minted, at: AT + 1 });
    expect(event).toEqual({
      type: 'organization.v1.settingsChanged',
      data: { organizationId: 'org_1', settings: { ...settings, quoteDefaults: { taxRate: 21, validityDays: 30 } }, at: AT + 1 },
    });
  });

  it.each([
    ['enabling live pricing', { externalPricingEnabled: true }],
    ['a first webhook URL', { webhookUrl: 'https://crm.example.com/hooks' }],
  ])('mints a signing secret on %s when there is none', (_, change) => {
    const events = when([created], { type: 'updateOrganization', changes: {}, settings: change, mintedSecret: minted, at: AT + 1 });
    expect(events.map((e) => e.type)).toEqual(['organization.v1.settingsChanged', 'organization.v2.signingSecretRotated']);
    const rotated: OrganizationEvent = { type: 'organization.v2.signingSecretRotated', data: { organizationId: 'org_1', ...minted, previousValidUntil: AT, at: AT } };
    expect(events[1]).toEqual({ ...rotated, data: { ...rotated.data, previousValidUntil: AT + 1, at: AT + 1 } });
    expect(when([created, rotated], { type: 'updateOrganization', changes: {}, settings: change, mintedSecret: minted, at: AT + 1 }).map((e) => e.type)).toEqual([
      'organization.v1.settingsChanged',
    ]);
  });

  it('leaves out keys no setting has, stored when an array passed as the settings, with the next settings change', () => {
    const junk = { ...settings, 0: { webhookUrl: null }, quoteDefaults: { ...settings.quoteDefaults, 0: { taxRate: 5 } } } as unknown as OrganizationSettings;
    const stored: OrganizationEvent = { type: 'organization.v1.settingsChanged', data: { organizationId: 'org_1', settings: junk, at: AT } };
    expect(when([created, stored], { type: 'updateOrganization', changes: {}, settings: { pricingTimeoutMs: 5_000 }, mintedSecret: minted, at: AT + 1 })).toEqual([
      { type: 'organization.v1.settingsChanged', data: { organizationId: 'org_1', settings: { ...settings, pricingTimeoutMs: 5_000 }, at: AT + 1 } },
    ]);
  });

  it('counts a secret stored in clear before secrets were sealed as a secret: nothing is minted over it', () => {
    const legacy: OrganizationEvent = { type: 'organization.v1.signingSecretRotated', data: { organizationId: 'org_1', secretId: 'whs_0', secret: 'whsec_c2VjcmV0', previousValidUntil: AT, at: AT } };
    const events = when([created, legacy], { type: 'updateOrganization', changes: {}, settings: { externalPricingEnabled: true }, mintedSecret: minted, at: AT + 1 });
    expect(events.map((e) => e.type)).toEqual(['organization.v1.settingsChanged']);
  });

  it('keeps the previous signing secret valid for 24 hours after a rotation', () => {
    expect(when([created], { type: 'rotateSigningSecret', ...minted, at: AT })).toEqual([
      { type: 'organization.v2.signingSecretRotated', data: { organizationId: 'org_1', ...minted, previousValidUntil: AT + SECRET_ROTATION_OVERLAP_MS, at: AT } },
    ]);
  });

  it('creates API keys up to the limit, on plans with API access only', () => {
    const command: OrganizationCommand = { type: 'createApiKey', keyId: 'key_new', name: 'n', readOnly: true, keyHash: 'h', keyPrefix: 'p', at: AT };
    expect(when([created], command)).toHaveLength(1);
    const full = Array.from({ length: MAX_API_KEYS }, (_, i) => keyCreated(`key_${i}`));
    expect(() => when([created, ...full], command)).toThrow(ApiKeyLimitReached);
    const downgraded: OrganizationEvent = { type: 'organization.v1.profileChanged', data: { organizationId: 'org_1', changes: { plan: 'essential' }, at: AT } };
    expect(() => when([created, downgraded], command)).toThrow(ForbiddenPlan);
  });

  it('revokes an active key by id, carrying its hash; an unknown or revoked key is not found', () => {
    expect(when([created, keyCreated('key_1')], { type: 'revokeApiKey', keyId: 'key_1', at: AT })).toEqual([
      { type: 'organization.v1.apiKeyRevoked', data: { organizationId: 'org_1', keyId: 'key_1', keyHash: 'hash-key_1', at: AT } },
    ]);
    const revoked = when([created, keyCreated('key_1')], { type: 'revokeApiKey', keyId: 'key_1', at: AT });
    expect(() => when([created, keyCreated('key_1'), ...revoked], { type: 'revokeApiKey', keyId: 'key_1', at: AT })).toThrow(NotFound);
  });

  it('makes nothing for a key or a secret whose id it already made (the retry of a keyed request), even at the key limit or after a revocation', () => {
    const full = Array.from({ length: MAX_API_KEYS }, (_, i) => keyCreated(`key_${i}`));
    const again: OrganizationCommand = { type: 'createApiKey', keyId: 'key_3', name: 'n', readOnly: true, keyHash: 'h2', keyPrefix: 'p', at: AT + 1 };
    expect(when([created, ...full], again)).toEqual([]);
    const revoked: OrganizationEvent = { type: 'organization.v1.apiKeyRevoked', data: { organizationId: 'org_1', keyId: 'key_1', keyHash: 'hash-key_1', at: AT } };
    expect(when([created, keyCreated('key_1'), revoked], { ...again, keyId: 'key_1' })).toEqual([]);
    const rotated: OrganizationEvent = { type: 'organization.v2.signingSecretRotated', data: { organizationId: 'org_1', ...minted, previousValidUntil: AT, at: AT } };
    expect(when([created, rotated], { type: 'rotateSigningSecret', ...minted, at: AT + 1 })).toEqual([]);
    expect(when([created, rotated], { type: 'rotateSigningSecret', ...minted, secretId: 'whs_2', at: AT + 1 })).toHaveLength(1);
    const state = [created, keyCreated('key_1'), rotated].reduce(organizationDecider.evolve, organizationDecider.initialState());
    expect(state).toMatchObject({ createdAt: AT, keysMade: { key_1: { name: 'key_1', readOnly: false, at: AT } }, secretsMade: { whs_1: AT } });
  });

  it('refuses commands on an organization that does not exist', () => {
    expect(() => when([], { type: 'rotateSigningSecret', ...minted, at: AT })).toThrow(NotFound);
  });
});
