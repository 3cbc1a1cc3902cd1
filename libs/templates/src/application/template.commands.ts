import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { AggregateRepository } from '@lib/event-sourcing';
import { OrganizationDirectory } from '@lib/organizations';
import { Clock, IdGenerator, idOfRequest, ValidationFailed } from '@lib/shared';
import { validateTemplate, type TemplateBody } from '../domain';
import { templateDecider } from '../aggregate/template.decider';
import { templateStream } from '../aggregate/template.events';
import { CreateTemplate } from './create-template.command';
import { TemplateDirectory } from './template-directory';

const ADMIN = { actor: 'admin' };

function validTemplate(body: unknown): TemplateBody {
  const { template, errors } = validateTemplate(body);
  if (!template) throw new ValidationFailed(errors);
  return template;
}

@CommandHandler(CreateTemplate)
export class CreateTemplateHandler implements ICommandHandler<CreateTemplate, string> {
  constructor(
    private readonly repository: AggregateRepository,
    private readonly organizations: OrganizationDirectory,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
  ) {}

  async execute({ organizationId, body, templateId: requestedId, actor }: CreateTemplate): Promise<string> {
    await this.organizations.get(organizationId);
    const template = validTemplate(body);
    // A retry whose first attempt made the template finds it (the decider makes it once).
    const createdAt = async (id: string) => (await this.repository.load(templateDecider, templateStream(id))).state.createdAt;
    const templateId = await idOfRequest(requestedId, createdAt, this.clock.now(), () => this.ids.next('tpl'));
    await this.repository.handle(
      templateDecider,
      templateStream(templateId),
      { type: 'createTemplate', templateId, organizationId, template, at: this.clock.now() },
      { metadata: { actor }, made: { templateId } },
    );
    return templateId;
  }
}

/** Replaces a template's whole body (admin PUT); the same body again changes nothing. */
export class ReplaceTemplate {
  constructor(
    readonly organizationId: string,
    readonly templateId: string,
    /** unvalidated body; the handler validates it and fails with ValidationFailed */
    readonly body: unknown,
  ) {}
}

@CommandHandler(ReplaceTemplate)
export class ReplaceTemplateHandler implements ICommandHandler<ReplaceTemplate, void> {
  constructor(
    private readonly repository: AggregateRepository,
    private readonly organizations: OrganizationDirectory,
    private readonly templates: TemplateDirectory,
    private readonly clock: Clock,
  ) {}

  async execute({ organizationId, templateId, body }: ReplaceTemplate): Promise<void> {
    await this.organizations.get(organizationId);
    // An unknown template is 404 whatever the body says.
    await this.templates.get(organizationId, templateId);
    const template = validTemplate(body);
    await this.repository.handle(
      templateDecider,
      templateStream(templateId),
      { type: 'replaceTemplate', organizationId, template, at: this.clock.now() },
      { metadata: ADMIN, what: 'The template' },
    );
  }
}

export const TEMPLATE_COMMAND_HANDLERS = [CreateTemplateHandler, ReplaceTemplateHandler];
