/** Creates a template from an admin-API body (decisions §5); returns the new template id. */
export class CreateTemplate {
  constructor(
    readonly organizationId: string,
    /** unvalidated body; the handler validates it and fails with ValidationFailed */
    readonly body: unknown,
    /** the id the template takes (a keyed request's, the same on its retries: see idempotentId); a new one when absent */
    readonly templateId?: string,
    /** who it is recorded as made by: the admin API, or the product itself (`system:demo-seed`) */
    readonly actor: 'admin' | `system:${string}` = 'admin',
  ) {}
}
