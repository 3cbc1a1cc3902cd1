import type { Projection } from '@lib/event-sourcing';
import { contactsProjection } from '@lib/contacts';
import { leadsProjection } from '@lib/leads';
import { organizationsProjection } from '@lib/organizations';
import { pricingGrantsProjection } from '@lib/pricing-loop';
import { quotesProjection } from '@lib/quotes';
import { sessionsProjection } from '@lib/sessions';
import { submissionsProjection } from '@lib/submissions';
import { templatesProjection } from '@lib/templates';

/**
 * Every projection the domain modules register, for tools that run without starting the
 * application (the CLI: starting it would run start-up work such as quote-number recovery).
 * projections.int-spec.ts keeps this list equal to what the modules register.
 */
export function allProjections(): Projection[] {
  return [
    organizationsProjection,
    templatesProjection,
    sessionsProjection,
    submissionsProjection,
    quotesProjection,
    contactsProjection,
    leadsProjection,
    pricingGrantsProjection,
  ];
}
