import { Injectable } from '@nestjs/common';
import { withoutBookkeeping } from '@lib/event-sourcing';
import { ReadStore } from '@lib/read-store';
import { NotFound } from '@lib/shared';
import { knownSettings } from '../domain/organization.decider';
import { ORGANIZATIONS, type OrganizationDocument } from '../projections/organizations.projection';

export type OrganizationView = OrganizationDocument;

/** Read access to organizations for every other domain (currency, quote defaults, live pricing). */
@Injectable()
export class OrganizationDirectory {
  constructor(private readonly reads: ReadStore) {}

  async find(organizationId: string): Promise<OrganizationView | null> {
    const doc = await this.reads.get<OrganizationDocument>(ORGANIZATIONS, organizationId);
    return doc ? withoutBookkeeping(doc) : null;
  }

  async get(organizationId: string): Promise<OrganizationView> {
    const org = await this.find(organizationId);
    if (!org) throw new NotFound('Organization');
    return org;
  }

  async findBySlug(slug: string): Promise<OrganizationView | null> {
    const { items } = await this.reads.find<OrganizationDocument>(ORGANIZATIONS, { filter: { slug }, sort: [{ field: 'id', direction: 'asc' }], limit: 1 });
    return items[0] ? withoutBookkeeping(items[0]) : null;
  }

  async getBySlug(slug: string): Promise<OrganizationView> {
    const org = await this.findBySlug(slug);
    if (!org) throw new NotFound('Organization');
    return org;
  }
}

/** The organization as the external API shows it (api-v1 Organization). */
export function toPublicOrganization(org: OrganizationView) {
  return {
    id: org.id,
    name: org.name,
    slug: org.slug,
    locale: org.locale,
    unitSystem: org.unitSystem,
    currency: org.currency,
    plan: org.plan,
    externalPricingEnabled: org.settings.externalPricingEnabled,
  };
}

/** The admin API's view: the public organization plus its settings and bookkeeping. */
export function toAdminOrganization(org: OrganizationView) {
  return {
    ...toPublicOrganization(org),
    createdAt: org.createdAt,
    updatedAt: org.updatedAt,
    settings: { ...knownSettings(org.settings), signingSecretConfigured: org.hasSigningSecret },
  };
}
