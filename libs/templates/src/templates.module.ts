import { Module } from '@nestjs/common';
import { OrganizationsModule } from '@lib/organizations';
import { ProjectionRegistry } from '@lib/runtime';
import { TEMPLATE_COMMAND_HANDLERS } from './application/template.commands';
import { TemplateDirectory } from './application/template-directory';
import { AdminTemplatesController } from './http/admin-templates.controller';
import { TemplatesController } from './http/templates.controller';
import { templatesProjection } from './projections/templates.projection';

@Module({
  imports: [OrganizationsModule],
  controllers: [AdminTemplatesController, TemplatesController],
  providers: [...TEMPLATE_COMMAND_HANDLERS, TemplateDirectory],
  exports: [TemplateDirectory],
})
export class TemplatesModule {
  constructor(registry: ProjectionRegistry) {
    registry.register(templatesProjection);
  }
}
