import type { TemplateBody } from '../domain';

/**
 * The template aggregate. Its body is stored whole on every change: a template is replaced, never
 * patched, so each event is a complete, validated version of it (`version` counts from 1).
 */
export type TemplateEvent =
  | { type: 'template.v1.created'; data: { organizationId: string; templateId: string; template: TemplateBody; version: number; at: number } }
  | { type: 'template.v1.replaced'; data: { organizationId: string; templateId: string; template: TemplateBody; version: number; at: number } };

export const TEMPLATE_STREAM = 'template-';
export const templateStream = (templateId: string) => `${TEMPLATE_STREAM}${templateId}`;
