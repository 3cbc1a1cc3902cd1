import type { CreatorActor } from '@lib/organizations';

/** Creates a template from an admin-API body (decisions §5); returns the new template id. */
export class CreateTemplate {
  constructor(
    readonly organizationId: string,
    /** unvalidated body; the handler validates it and fails with ValidationFailed */
    readonly body: unknown,
    /** the id the template takes (a keyed request's, the same on its retries: see idempotentId); a new one when absent */
    readonly templateId?: string,
    readonly actor: CreatorActor = 'admin',
  ) {}
}
