/** Creates a template from an admin-API body (decisions §5); returns the new template id. */
export class CreateTemplate {
  constructor(
    readonly organizationId: string,
    /** unvalidated body; the handler validates it and fails with ValidationFailed */
    readonly body: unknown,
  ) {}
}
