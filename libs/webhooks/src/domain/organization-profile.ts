import type { RecordedEvent } from '@lib/event-store';
import type { OrganizationEvent, SigningSecretRotated } from '@lib/organizations/domain/organization.events';

/** A signing secret and, once it has been replaced, the moment it stops signing. */
export interface SigningSecret {
  /** null when this process cannot unseal it: it does not sign */
  secret: string | null;
  /** null for the current secret */
  validUntil: number | null;
}

/** What webhook delivery needs to know about an organization, folded from its event stream. */
export interface WebhookOrganization {
  id: string;
  name: string;
  slug: string;
  locale: string;
  webhookUrl: string | null;
  pricingWebhookUrl: string | null;
  pricingTimeoutMs: number;
  /** newest first */
  secrets: SigningSecret[];
}

/** A replaced secret keeps its promise (`previousValidUntil`); at most this many replaced secrets are kept. */
const MAX_RETIRED_SECRETS = 4;

/** Opens the sealed secret of an `organization.v2.signingSecretRotated`: null when it cannot (SigningSecretSeal, which logs why). */
export interface SigningSecretOpener {
  open(sealedSecret: string, ref: { organizationId: string; secretId: string }): string | null;
}

/**
 * Folds the `organization-<id>` stream. Signing secrets exist only in the signing-secret events
 * (never in a read model), so the outbox reads them here: sealed in
 * `organization.v2.signingSecretRotated`, opened with `seal`; in clear in the
 * `organization.v1.signingSecretRotated` stored before secrets were sealed. Every replaced
 * secret keeps signing until the `previousValidUntil` it was given.
 */
export function foldWebhookOrganization(events: Iterable<RecordedEvent>, seal: SigningSecretOpener, upToPosition = Number.POSITIVE_INFINITY): WebhookOrganization | null {
  let org: WebhookOrganization | null = null;
  for (const recorded of events) {
    if (recorded.position > upToPosition) break;
    org = evolve(org, recorded as unknown as OrganizationEvent, seal);
  }
  return org;
}

function issuedSecret(event: SigningSecretRotated, seal: SigningSecretOpener): string | null {
  if (event.type === 'organization.v1.signingSecretRotated') return event.data.secret;
  return seal.open(event.data.sealedSecret, { organizationId: event.data.organizationId, secretId: event.data.secretId });
}

function evolve(org: WebhookOrganization | null, event: OrganizationEvent, seal: SigningSecretOpener): WebhookOrganization | null {
  if (event.type === 'organization.v1.created') {
    return {
      id: event.data.organizationId,
      name: event.data.profile.name,
      slug: event.data.profile.slug,
      locale: event.data.profile.locale,
      webhookUrl: event.data.settings.webhookUrl,
      pricingWebhookUrl: event.data.settings.pricingWebhookUrl,
      pricingTimeoutMs: event.data.settings.pricingTimeoutMs,
      secrets: [],
    };
  }
  if (!org) return org;
  switch (event.type) {
    case 'organization.v1.profileChanged':
      return {
        ...org,
        ...(event.data.changes.name !== undefined ? { name: event.data.changes.name } : {}),
        ...(event.data.changes.locale !== undefined ? { locale: event.data.changes.locale } : {}),
      };
    case 'organization.v1.settingsChanged':
      return {
        ...org,
        webhookUrl: event.data.settings.webhookUrl,
        pricingWebhookUrl: event.data.settings.pricingWebhookUrl,
        pricingTimeoutMs: event.data.settings.pricingTimeoutMs,
      };
    case 'organization.v2.signingSecretRotated':
    case 'organization.v1.signingSecretRotated': {
      const [current, ...retired] = org.secrets;
      const replaced: SigningSecret[] = current ? [{ secret: current.secret, validUntil: event.data.previousValidUntil }] : [];
      const secrets = [{ secret: issuedSecret(event, seal), validUntil: null }, ...replaced, ...retired]
        .filter((s) => s.validUntil === null || s.validUntil > event.data.at)
        .slice(0, 1 + MAX_RETIRED_SECRETS);
      return { ...org, secrets };
    }
    default:
      return org;
  }
}

/** The secrets that sign at `now`: the current one and every replaced one still inside its overlap, except those that cannot be unsealed. */
export function liveSecrets(org: Pick<WebhookOrganization, 'secrets'>, now: number): string[] {
  return org.secrets.flatMap((s) => (s.secret !== null && (s.validUntil === null || s.validUntil > now) ? [s.secret] : []));
}

/** Where a delivery of this target kind goes right now; null when the organization has no URL for it. */
export function targetUrl(org: Pick<WebhookOrganization, 'webhookUrl' | 'pricingWebhookUrl'>, target: 'webhook' | 'pricing'): string | null {
  return target === 'pricing' ? (org.pricingWebhookUrl ?? org.webhookUrl) : org.webhookUrl;
}
