import { exampleTemplateBody } from '@lib/templates/domain/example.fixture';

/** The template of decisions §5, used for the demo organization. */
export const DEMO_TEMPLATE = exampleTemplateBody();
