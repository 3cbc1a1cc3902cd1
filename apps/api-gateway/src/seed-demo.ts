import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { CommandBus } from '@nestjs/cqrs';
import { CreateApiKey, CreateOrganization, ORGANIZATIONS, OrganizationDirectory, type CreatedApiKey, type CreatedOrganization } from '@lib/organizations';
import { ReadStore } from '@lib/read-store';
import { CreateTemplate } from '@lib/templates';
import type { AppConfig } from '@lib/shared';
import { DEMO_TEMPLATE } from './demo-template';

export const DEMO_SLUG = 'demo-windows';

/**
 * On an empty store, creates the demo organization (plan pro), a template, a full and a
 * read-only API key, and returns the lines to print. Keys are shown only on this first start.
 */
export async function seedDemo(app: NestFastifyApplication, config: AppConfig): Promise<string[] | null> {
  const reads = app.get(ReadStore);
  if ((await reads.count(ORGANIZATIONS)) > 0) return null;
  const commands = app.get(CommandBus);
  const { organizationId } = await commands.execute<CreateOrganization, CreatedOrganization>(
    new CreateOrganization({ name: 'Demo Windows Ltd', slug: DEMO_SLUG, locale: 'en', unitSystem: 'metric', currency: 'EUR', plan: 'pro' }, {
      quoteDefaults: { taxRate: 21, validityDays: 30 },
    }),
  );
  const templateId = await commands.execute<CreateTemplate, string>(new CreateTemplate(organizationId, DEMO_TEMPLATE));
  const full = await commands.execute<CreateApiKey, CreatedApiKey>(new CreateApiKey(organizationId, 'Demo full access', false));
  const readOnly = await commands.execute<CreateApiKey, CreatedApiKey>(new CreateApiKey(organizationId, 'Demo read-only', true));
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
