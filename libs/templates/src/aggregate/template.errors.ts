import { DomainError } from '@lib/shared';

/** Template ids are generated, so this only happens when an id is reused by mistake. */
export class TemplateAlreadyExists extends DomainError {
  readonly code = 'conflict';
  constructor(templateId: string) {
    super(`Template ${templateId} already exists.`);
  }
}
