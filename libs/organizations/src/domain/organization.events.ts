export type Plan = 'free' | 'essential' | 'pro' | 'enterprise';
export type Locale = 'en' | 'de' | 'nl';
export type UnitSystem = 'metric' | 'imperial';

export interface QuoteDefaults {
  taxRate: number;
  validityDays: number;
}

export interface OrganizationSettings {
  webhookUrl: string | null;
  pricingWebhookUrl: string | null;
  externalPricingEnabled: boolean;
  pricingTimeoutMs: number;
  quoteDefaults: QuoteDefaults;
}

/** A partial settings change; quote defaults merge field by field. */
export type OrganizationSettingsPatch = Partial<Omit<OrganizationSettings, 'quoteDefaults'>> & { quoteDefaults?: Partial<QuoteDefaults> };

export interface OrganizationProfile {
  name: string;
  slug: string;
  locale: Locale;
  unitSystem: UnitSystem;
  currency: string;
  plan: Plan;
}

export type OrganizationEvent =
  | {
      type: 'organization.v1.created';
      /**
       * `request`: the keyed request that created it (idempotentId), absent without a key. Its
       * retry after a lost answer finds the organization by it: the id alone does not say so, as
       * another creation may take over a claim its request left without an organization.
       */
      data: { organizationId: string; profile: OrganizationProfile; settings: OrganizationSettings; at: number; request?: string };
    }
  | { type: 'organization.v1.profileChanged'; data: { organizationId: string; changes: Partial<Omit<OrganizationProfile, 'slug'>>; at: number } }
  | { type: 'organization.v1.settingsChanged'; data: { organizationId: string; settings: OrganizationSettings; at: number } }
  | {
      type: 'organization.v1.apiKeyCreated';
      data: { organizationId: string; keyId: string; name: string; readOnly: boolean; keyHash: string; keyPrefix: string; at: number };
    }
  | { type: 'organization.v1.apiKeyRevoked'; data: { organizationId: string; keyId: string; keyHash: string; at: number } }
  | {
      type: 'organization.v2.signingSecretRotated';
      /**
       * A new signing secret, sealed (SigningSecretSeal): the outbox opens it to sign. The previous
       * one keeps signing until `previousValidUntil`.
       */
      data: { organizationId: string; secretId: string; sealedSecret: string; previousValidUntil: number; at: number };
    }
  | {
      /** Written until 2026-11-26, with the secret in clear (found by a review); still read, never written. */
      type: 'organization.v1.signingSecretRotated';
      data: { organizationId: string; secretId: string; secret: string; previousValidUntil: number; at: number };
    };

/** The events that issue a signing secret: the current one, and the clear-text one stored before secrets were sealed. */
export type SigningSecretRotated = Extract<OrganizationEvent, { type: 'organization.v2.signingSecretRotated' | 'organization.v1.signingSecretRotated' }>;

export const ORGANIZATION_STREAM = 'organization-';
export const organizationStream = (organizationId: string) => `${ORGANIZATION_STREAM}${organizationId}`;
/** The one event of a slug stream: the slug belongs to this organization (created after the claim). */
export type OrganizationSlugClaimed = { type: 'organizationSlug.v1.claimed'; data: { slug: string; organizationId: string; at: number } };
/** One stream per slug makes the slug unique without a global lock. */
export const slugStream = (slug: string) => `orgslug-${slug}`;
