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
}

export type OrganizationCommand =
  | { type: 'createOrganization'; organizationId: string; profile: OrganizationProfile; settings: OrganizationSettings; at: number }
  | {
      type: 'updateOrganization';
      changes: Partial<Omit<OrganizationProfile, 'slug'>>;
      settings?: OrganizationSettingsPatch;
      /** minted and sealed by the caller in case the change needs a first signing secret */
      mintedSecret: { secretId: string; sealedSecret: string };
      at: number;
    }
  | { type: 'createApiKey'; keyId: string; name: string; readOnly: boolean; keyHash: string; keyPrefix: string; at: number }
  | { type: 'revokeApiKey'; keyId: string; at: number }
  | { type: 'rotateSigningSecret'; secretId: string; sealedSecret: string; at: number };

const initialState = (): OrganizationState => ({
  exists: false,
  organizationId: null,
  profile: null,
  settings: null,
  activeKeys: [],
  hasSigningSecret: false,
});

function existing(state: OrganizationState): OrganizationState & { organizationId: string } {
  if (!state.exists || !state.organizationId) throw new NotFound('Organization');
  return state as OrganizationState & { organizationId: string };
}

function decide(command: OrganizationCommand, state: OrganizationState): OrganizationEvent[] {
  switch (command.type) {
    case 'createOrganization': {
      if (state.exists) throw new ValidationFailed([{ path: 'id', message: 'organization already exists' }]);
      return [{ type: 'organization.v1.created', data: { organizationId: command.organizationId, profile: command.profile, settings: command.settings, at: command.at } }];
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
        const next: OrganizationSettings = {
          ...current,
          ...Object.fromEntries(Object.entries(command.settings).filter(([, v]) => v !== undefined)),
          quoteDefaults: { ...current.quoteDefaults, ...(command.settings.quoteDefaults ?? {}) },
        };
        if (JSON.stringify(next) !== JSON.stringify(current)) {
          events.push({ type: 'organization.v1.settingsChanged', data: { organizationId: org.organizationId, settings: next, at: command.at } });
          // Webhooks are never sent unsigned: a first webhook URL or enabling live pricing mints
          // the signing secret if the organization has none yet.
          const needsSecret = next.externalPricingEnabled || next.webhookUrl !== null || next.pricingWebhookUrl !== null;
          if (needsSecret && !org.hasSigningSecret) {
            events.push({
              type: 'organization.v2.signingSecretRotated',
              data: { organizationId: org.organizationId, ...command.mintedSecret, previousValidUntil: command.at, at: command.at },
            });
          }
        }
      }
      return events;
    }
    case 'createApiKey': {
      const org = existing(state);
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
      return { ...state, exists: true, organizationId: event.data.organizationId, profile: event.data.profile, settings: event.data.settings };
    case 'organization.v1.profileChanged':
      return { ...state, profile: { ...state.profile!, ...event.data.changes } };
    case 'organization.v1.settingsChanged':
      return { ...state, settings: event.data.settings };
    case 'organization.v1.apiKeyCreated':
      return { ...state, activeKeys: [...state.activeKeys, { keyId: event.data.keyId, keyHash: event.data.keyHash }] };
    case 'organization.v1.apiKeyRevoked':
      return { ...state, activeKeys: state.activeKeys.filter((k) => k.keyId !== event.data.keyId) };
    case 'organization.v2.signingSecretRotated':
    case 'organization.v1.signingSecretRotated':
      return { ...state, hasSigningSecret: true };
  }
}

export const organizationDecider: Decider<OrganizationState, OrganizationCommand, OrganizationEvent> = { initialState, decide, evolve };
