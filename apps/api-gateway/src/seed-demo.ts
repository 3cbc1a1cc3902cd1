import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { CommandBus } from '@nestjs/cqrs';
import { CreateApiKey, CreateOrganization, ORGANIZATIONS, OrganizationDirectory, type CreatedApiKey, type CreatedOrganization } from '@lib/organizations';
import { ReadStore } from '@lib/read-store';
import { CreateTemplate } from '@lib/templates';
import type { AppConfig } from '@lib/shared';
import { DEMO_TEMPLATE } from './demo-template';

export const DEMO_SLUG = 'demo-windows';

/** The actor the demo organization's events record. */
const SEEDED_BY = 'system:demo-seed';

/**
 * On an empty store, creates the demo organization (plan pro), a template, a full and a
 * read-only API key, and returns the lines to print. Keys are shown only on this first start;
 * later starts name the demo organization and how to make another key.
 */
export async function seedDemo(app: NestFastifyApplication, config: AppConfig): Promise<string[] | null> {
  const reads = app.get(ReadStore);
  if ((await reads.count(ORGANIZATIONS)) > 0) return demoReminder(app, config);
  const commands = app.get(CommandBus);
  // Recorded as the product's own doing, not the admin's: no one used the admin token (audit:export).
  const { organizationId } = await commands.execute<CreateOrganization, CreatedOrganization>(
    new CreateOrganization(
      { name: 'Demo Windows Ltd', slug: DEMO_SLUG, locale: 'en', unitSystem: 'metric', currency: 'EUR', plan: 'pro' },
      { quoteDefaults: { taxRate: 21, validityDays: 30 } },
      undefined,
      SEEDED_BY,
    ),
  );
  const templateId = await commands.execute<CreateTemplate, string>(new CreateTemplate(organizationId, DEMO_TEMPLATE, undefined, SEEDED_BY));
  const full = await commands.execute<CreateApiKey, CreatedApiKey>(new CreateApiKey(organizationId, 'Demo full access', false, undefined, SEEDED_BY));
  const readOnly = await commands.execute<CreateApiKey, CreatedApiKey>(new CreateApiKey(organizationId, 'Demo read-only', true, undefined, SEEDED_BY));
  await app.get(OrganizationDirectory).get(organizationId);
  return [
    `Demo organization "${DEMO_SLUG}" (${organizationId}) created:`,
    `  API key (full):      ${full.key}`,
    `  API key (read-only): ${readOnly.key}`,
    `  Template:            ${templateId}`,
    `  Storefront:          ${config.publicBaseUrl}/storefront/v1/${DEMO_SLUG}`,
    `  Configurator:        ${config.publicBaseUrl}/c/${DEMO_SLUG}/${templateId}   (add ?lang=de or ?lang=nl for German or Dutch)`,
    `  Contact form:        ${config.publicBaseUrl}/contact/${DEMO_SLUG}`,
  ];
}

/** The demo organization, when the store has it: its id, pages, and where a new API key comes from. */
async function demoReminder(app: NestFastifyApplication, config: AppConfig): Promise<string[] | null> {
  const demo = await app.get(OrganizationDirectory).findBySlug(DEMO_SLUG);
  if (!demo) return null;
  return [
    `Demo organization "${DEMO_SLUG}" (${demo.id}): its API keys were shown on the first start only; make another with`,
    `  POST ${config.publicBaseUrl}/admin/v1/organizations/${demo.id}/api-keys  {"name":"…"}  (admin token)`,
    `  Configurator:        ${config.publicBaseUrl}/c/${DEMO_SLUG}`,
    `  Contact form:        ${config.publicBaseUrl}/contact/${DEMO_SLUG}`,
  ];
}
