import { Injectable } from '@nestjs/common';
import { withoutBookkeeping } from '@lib/event-sourcing';
import type { FindResult } from '@lib/read-store';
import { ReadStore } from '@lib/read-store';
import { NotFound } from '@lib/shared';
import type { TemplateBody } from '../domain';
import { TEMPLATES, type TemplateDocument } from '../projections/templates.projection';

/** A template as other libraries see it: its id, owner, bookkeeping and validated body. */
export interface TemplateView {
  id: string;
  organizationId: string;
  version: number;
  createdAt: number;
  updatedAt: number;
  body: TemplateBody;
}

/** The order of GET /api/v1/templates: newest first (the order every other list of the API uses). */
export const TEMPLATE_LIST_SORT = [
  { field: 'createdAt', direction: 'desc' },
  { field: 'id', direction: 'desc' },
] as const;

/** The order of the storefront: alphabetical, as a customer picks a product by its name. */
const STOREFRONT_SORT = [
  { field: 'sortName', direction: 'asc' },
  { field: 'id', direction: 'asc' },
] as const;

const STOREFRONT_PAGE = 100;

function toView(document: TemplateDocument): TemplateView {
  const { id, organizationId, version, createdAt, updatedAt, sortName: _sortName, ...rest } = withoutBookkeeping(document);
  const body: TemplateBody = {
    name: rest.name,
    slug: rest.slug,
    description: rest.description,
    productCategory: rest.productCategory,
    materialTags: rest.materialTags,
    constraints: rest.constraints,
    components: rest.components,
    optionGroups: rest.optionGroups,
    options: rest.options,
    materials: rest.materials,
    sections: rest.sections,
    pricingRules: rest.pricingRules,
  };
  return { id, organizationId, version, createdAt, updatedAt, body };
}

/** Read access to templates for every domain (sessions, submissions, quotes). Always organization-scoped. */
@Injectable()
export class TemplateDirectory {
  constructor(private readonly reads: ReadStore) {}

  /** null for an unknown id and for another organization's template */
  async find(organizationId: string, templateId: string): Promise<TemplateView | null> {
    const document = await this.reads.get<TemplateDocument>(TEMPLATES, templateId);
    if (!document || document.organizationId !== organizationId) return null;
    return toView(document);
  }

  async get(organizationId: string, templateId: string): Promise<TemplateView> {
    const template = await this.find(organizationId, templateId);
    if (!template) throw new NotFound('Template');
    return template;
  }

  /** One page of the organization's templates, newest first; `after` is the previous page's `nextAfter`. */
  async list(organizationId: string, limit: number, after?: unknown[]): Promise<FindResult<TemplateView>> {
    const { items, nextAfter } = await this.reads.find<TemplateDocument>(TEMPLATES, {
      filter: { organizationId },
      sort: [...TEMPLATE_LIST_SORT],
      limit,
      after,
    });
    return { items: items.map(toView), nextAfter };
  }

  /** Every template of the organization, alphabetically (the storefront shows them all). */
  async listAll(organizationId: string): Promise<TemplateView[]> {
    const all: TemplateView[] = [];
    let after: unknown[] | undefined;
    do {
      const page = await this.reads.find<TemplateDocument>(TEMPLATES, { filter: { organizationId }, sort: [...STOREFRONT_SORT], limit: STOREFRONT_PAGE, after });
      all.push(...page.items.map(toView));
      after = page.nextAfter ?? undefined;
    } while (after);
    return all;
  }
}

/** decisions §5: the fields of a GET /api/v1/templates list item. */
export function toTemplateListItem(template: TemplateView) {
  const { body } = template;
  return {
    id: template.id,
    name: body.name,
    slug: body.slug,
    description: body.description,
    productCategory: body.productCategory,
    constraints: body.constraints,
    materialTags: body.materialTags,
    createdAt: template.createdAt,
    updatedAt: template.updatedAt,
  };
}

/** GET /api/v1/templates/{id} and the admin API: the list item plus the full body. */
export function toTemplateDetail(template: TemplateView) {
  return { ...toTemplateListItem(template), ...template.body };
}

/**
 * decisions §5 catalog: `{ template, components, options, materials }`. Option groups and sections
 * are added because a configurator cannot be built without them (scope, required, multiple).
 * Pricing rules are not part of it: the catalog is what a customer may see.
 */
export function toCatalog(template: TemplateView) {
  const { body } = template;
  return {
    template: toTemplateListItem(template),
    components: body.components.map(({ id, name, type, constraints }) => ({ id, name, type, constraints })),
    optionGroups: body.optionGroups.map(({ id, name, scope, required, multiple }) => ({ id, name, scope, required, multiple })),
    options: body.options.map(({ id, code, name, optionGroup }) => ({ id, code, name, optionGroup })),
    materials: body.materials.map(({ id, name, side }) => ({ id, name, side })),
    sections: body.sections,
  };
}
