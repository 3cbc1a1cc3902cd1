import { configHash, priceConfiguration, resolveConfiguration, validateConfiguration, validateTemplate } from '@lib/templates';
import { exampleConfigurationInput, exampleTemplateBody } from '@lib/templates/domain/example.fixture';
import type { SubmissionCreatedData } from '../domain/submission.events';

/** A submission of the decisions §5 example configuration, for unit tests. */
const template = validateTemplate(exampleTemplateBody()).template!;
const configuration = validateConfiguration(template, exampleConfigurationInput()).configuration!;

export const createdData: SubmissionCreatedData = {
  organizationId: 'org_a',
  submissionId: 'sub_1',
  sessionId: 'ses_1',
  templateId: 'tpl_1',
  templateName: template.name,
  templateSlug: template.slug,
  customer: { name: 'Ada', email: 'ada@example.com', phone: null, companyName: null, address: null, postalCode: null, city: null, country: null },
  configuration,
  configHash: configHash(configuration),
  resolvedConfiguration: resolveConfiguration(template, configuration),
  basePricing: priceConfiguration(template, 'tpl_1', configuration, 'EUR'),
  externalPricing: null,
  locale: 'en',
  origin: 'storefront',
  at: 1_000,
};
