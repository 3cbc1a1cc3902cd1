import type { Decider } from '@lib/event-sourcing';
import { NotFound, ValidationFailed } from '@lib/shared';
import { ApiKeyLimitReached, PlanWithoutApiAccess } from './organization.errors';
import type { OrganizationEvent, OrganizationProfile, OrganizationSettings, OrganizationSettingsPatch, Plan } from './organization.events';

export const MAX_API_KEYS = 10;
export const SECRET_ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export function planAllowsApi(plan: Plan): boolean {
  return plan === 'pro' || plan === 'enterprise';
}

export interface OrganizationState {
  exists: boolean;
  organizationId: string | null;
  profile: OrganizationProfile | null;
  settings: OrganizationSettings | null;
  activeKeys: Array<{ keyId: string; keyHash: string }>;
  hasSigningSecret: boolean;
  /** when the organization was created; null before */
  createdAt: number | null;
  /** the keyed request that created it (idempotentId); null without a key, or before */
  createdBy: string | null;
  /** every API key ever made, revoked ones too, by id: a keyed request's retry finds its key (createApiKey) */
  keysMade: Readonly<Record<string, { name: string; readOnly: boolean; at: number }>>;
  /** when each signing secret was made, by id: a keyed rotation's retry finds its secret (rotateSigningSecret) */
  secretsMade: Readonly<Record<string, number>>;
}

export type OrganizationCommand =
  | {
      type: 'createOrganization';
      organizationId: string;
      profile: OrganizationProfile;
      settings: OrganizationSettings;
      /** minted and sealed by the caller in case the settings need a signing secret */
      mintedSecret: MintedSecret;
      /** the keyed request creating it (idempotentId), recorded on the creation */
      request?: string;
      at: number;
    }
  | {
      type: 'updateOrganization';
      changes: Partial<Omit<OrganizationProfile, 'slug'>>;
      settings?: OrganizationSettingsPatch;
      /** minted and sealed by the caller in case the change needs a first signing secret */
      mintedSecret: MintedSecret;
      at: number;
    }
  | { type: 'createApiKey'; keyId: string; name: string; readOnly: boolean; keyHash: string; keyPrefix: string; at: number }
  | { type: 'revokeApiKey'; keyId: string; at: number }
  | { type: 'rotateSigningSecret'; secretId: string; sealedSecret: string; at: number };

/** A signing secret the caller minted and sealed, used only when the command needs a first one. */
export interface MintedSecret {
  secretId: string;
  sealedSecret: string;
}

/**
 * Webhooks are never sent unsigned: settings with a webhook URL or live pricing need a signing
 * secret, and the command that gives an organization such settings first mints it.
 */
function needsSigningSecret(settings: OrganizationSettings): boolean {
  return settings.externalPricingEnabled || settings.webhookUrl !== null || settings.pricingWebhookUrl !== null;
}

/**
 * The settings without keys no setting has: until 2026-11-26 an array sent as `settings` or
 * `quoteDefaults` was stored with its items as keys "0", "1", … (docs/decisions/platform.md,
 * Validation); the next change of such an organization's settings leaves them out.
 */
export function knownSettings(settings: OrganizationSettings): OrganizationSettings {
  const { webhookUrl, pricingWebhookUrl, externalPricingEnabled, pricingTimeoutMs, quoteDefaults } = settings;
  return { webhookUrl, pricingWebhookUrl, externalPricingEnabled, pricingTimeoutMs, quoteDefaults: { taxRate: quoteDefaults.taxRate, validityDays: quoteDefaults.validityDays } };
}

function firstSecret(organizationId: string, minted: MintedSecret, at: number): OrganizationEvent {
  return { type: 'organization.v2.signingSecretRotated', data: { organizationId, ...minted, previousValidUntil: at, at } };
}

const initialState = (): OrganizationState => ({
  exists: false,
  organizationId: null,
  profile: null,
  settings: null,
  activeKeys: [],
  hasSigningSecret: false,
  createdAt: null,
  createdBy: null,
  keysMade: {},
  secretsMade: {},
});

function existing(state: OrganizationState): OrganizationState & { organizationId: string } {
  if (!state.exists || !state.organizationId) throw new NotFound('Organization');
  return state as OrganizationState & { organizationId: string };
}

function decide(command: OrganizationCommand, state: OrganizationState): OrganizationEvent[] {
  switch (command.type) {
    case 'createOrganization': {
      if (state.exists) throw new ValidationFailed([{ path: 'id', message: 'organization already exists' }]);
      const data = { organizationId: command.organizationId, profile: command.profile, settings: command.settings, at: command.at };
      const created: OrganizationEvent = { type: 'organization.v1.created', data: command.request === undefined ? data : { ...data, request: command.request } };
      return needsSigningSecret(command.settings) ? [created, firstSecret(command.organizationId, command.mintedSecret, command.at)] : [created];
    }
    case 'updateOrganization': {
      const org = existing(state);
      const events: OrganizationEvent[] = [];
      const changes = Object.fromEntries(
        Object.entries(command.changes).filter(([k, v]) => v !== undefined && org.profile![k as keyof OrganizationProfile] !== v),
      ) as Partial<OrganizationProfile>;
      if (Object.keys(changes).length) {
        events.push({ type: 'organization.v1.profileChanged', data: { organizationId: org.organizationId, changes, at: command.at } });
      }
      if (command.settings) {
        const current = org.settings!;
        const next = knownSettings({
          ...current,
          ...Object.fromEntries(Object.entries(command.settings).filter(([, v]) => v !== undefined)),
          quoteDefaults: { ...current.quoteDefaults, ...(command.settings.quoteDefaults ?? {}) },
        });
        if (JSON.stringify(next) !== JSON.stringify(current)) {
          events.push({ type: 'organization.v1.settingsChanged', data: { organizationId: org.organizationId, settings: next, at: command.at } });
          if (needsSigningSecret(next) && !org.hasSigningSecret) events.push(firstSecret(org.organizationId, command.mintedSecret, command.at));
        }
      }
      return events;
    }
    case 'createApiKey': {
      const org = existing(state);
      // The retry of the keyed request that made it (its answer lost): nothing more to make.
      if (Object.hasOwn(org.keysMade, command.keyId)) return [];
      if (!planAllowsApi(org.profile!.plan)) throw new PlanWithoutApiAccess();
      if (org.activeKeys.length >= MAX_API_KEYS) throw new ApiKeyLimitReached(MAX_API_KEYS);
      return [
        {
          type: 'organization.v1.apiKeyCreated',
          data: {
            organizationId: org.organizationId,
            keyId: command.keyId,
            name: command.name,
            readOnly: command.readOnly,
            keyHash: command.keyHash,
            keyPrefix: command.keyPrefix,
            at: command.at,
          },
        },
      ];
    }
    case 'revokeApiKey': {
      const org = existing(state);
      const key = org.activeKeys.find((k) => k.keyId === command.keyId);
      if (!key) throw new NotFound('API key');
      return [{ type: 'organization.v1.apiKeyRevoked', data: { organizationId: org.organizationId, keyId: key.keyId, keyHash: key.keyHash, at: command.at } }];
    }
    case 'rotateSigningSecret': {
      const org = existing(state);
      if (Object.hasOwn(org.secretsMade, command.secretId)) return [];
      return [
        {
          type: 'organization.v2.signingSecretRotated',
          data: {
            organizationId: org.organizationId,
            secretId: command.secretId,
            sealedSecret: command.sealedSecret,
            previousValidUntil: command.at + SECRET_ROTATION_OVERLAP_MS,
            at: command.at,
          },
        },
      ];
    }
  }
}

function evolve(state: OrganizationState, event: OrganizationEvent): OrganizationState {
  switch (event.type) {
    case 'organization.v1.created':
      return { ...state, exists: true, organizationId: event.data.organizationId, profile: event.data.profile, settings: event.data.settings, createdAt: event.data.at, createdBy: event.data.request ?? null };
    case 'organization.v1.profileChanged':
      return { ...state, profile: { ...state.profile!, ...event.data.changes } };
    case 'organization.v1.settingsChanged':
      return { ...state, settings: event.data.settings };
    case 'organization.v1.apiKeyCreated':
      return {
        ...state,
        activeKeys: [...state.activeKeys, { keyId: event.data.keyId, keyHash: event.data.keyHash }],
        keysMade: { ...state.keysMade, [event.data.keyId]: { name: event.data.name, readOnly: event.data.readOnly, at: event.data.at } },
      };
    case 'organization.v1.apiKeyRevoked':
      return { ...state, activeKeys: state.activeKeys.filter((k) => k.keyId !== event.data.keyId) };
    case 'organization.v2.signingSecretRotated':
    case 'organization.v1.signingSecretRotated':
      return { ...state, hasSigningSecret: true, secretsMade: { ...state.secretsMade, [event.data.secretId]: event.data.at } };
  }
}

export const organizationDecider: Decider<OrganizationState, OrganizationCommand, OrganizationEvent> = { initialState, decide, evolve };
