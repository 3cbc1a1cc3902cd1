import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { CALCULATIONS, COMPONENT_TYPES, ITEM_TYPES, MATERIAL_SIDES, OPTION_SCOPES, RULE_LEVELS } from '../domain';

/*
 * OpenAPI descriptions of template bodies and views. Template and configuration bodies are
 * validated by the pricing engine's validators (validateTemplate, validateConfiguration), which
 * report every problem with its field path; these classes only describe the shapes.
 */

export class TemplateSizeConstraints {
  @ApiProperty({ description: 'mm' }) minWidth: number;
  @ApiProperty({ description: 'mm' }) maxWidth: number;
  @ApiProperty({ description: 'mm' }) minHeight: number;
  @ApiProperty({ description: 'mm' }) maxHeight: number;
}

export class TemplateComponentSchema {
  @ApiProperty({ example: 'TT' }) id: string;
  @ApiProperty({ example: 'Tilt-turn sash' }) name: string;
  @ApiProperty({ enum: COMPONENT_TYPES }) type: string;
  @ApiProperty({ type: TemplateSizeConstraints }) constraints: TemplateSizeConstraints;
}

export class TemplateOptionGroupSchema {
  @ApiProperty({ example: 'glazing' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: OPTION_SCOPES, description: '`component`: chosen per component; `product`: once for the product' }) scope: string;
  @ApiProperty({ default: false }) required: boolean;
  @ApiProperty({ default: false }) multiple: boolean;
}

export class TemplateOptionSchema {
  @ApiProperty({ example: 'hr3' }) id: string;
  @ApiProperty({ example: 'HR+++' }) code: string;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'id of its option group' }) optionGroup: string;
}

export class TemplateMaterialSchema {
  @ApiProperty({ example: 'ral7016' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: MATERIAL_SIDES }) side: string;
}

export class TemplatePriceTierSchema {
  @ApiProperty({ type: Number, nullable: true, description: 'm²; null on the last, open-ended tier' }) upTo: number | null;
  @ApiProperty() rate: number;
}

export class TemplatePricingRuleSchema {
  @ApiProperty({ enum: RULE_LEVELS }) level: string;
  @ApiProperty({ enum: CALCULATIONS }) calculation: string;
  @ApiPropertyOptional({ description: 'component, option or material id; absent on template rules' }) target?: string;
  @ApiPropertyOptional({ description: 'fixed and perUnit' }) amount?: number;
  @ApiPropertyOptional({ description: 'area (per m²) and runningMetre (per m)' }) rate?: number;
  @ApiPropertyOptional({ type: [TemplatePriceTierSchema], description: 'tieredArea' }) tiers?: TemplatePriceTierSchema[];
  @ApiPropertyOptional({ description: 'percentage (template level): percent of the subtotal before it' }) percent?: number;
  @ApiPropertyOptional() description?: string;
  @ApiPropertyOptional({ enum: ITEM_TYPES }) itemType?: string;
}

/** The admin API body of decisions §5. */
export class TemplateBodySchema {
  @ApiProperty({ maxLength: 200 }) name: string;
  @ApiProperty({ pattern: '^[a-z0-9]+(-[a-z0-9]+)*$' }) slug: string;
  @ApiPropertyOptional({ maxLength: 2000 }) description?: string;
  @ApiProperty({ example: 'window' }) productCategory: string;
  @ApiPropertyOptional({ type: [String] }) materialTags?: string[];
  @ApiProperty({ type: TemplateSizeConstraints }) constraints: TemplateSizeConstraints;
  @ApiPropertyOptional({ type: [TemplateComponentSchema] }) components?: TemplateComponentSchema[];
  @ApiPropertyOptional({ type: [TemplateOptionGroupSchema] }) optionGroups?: TemplateOptionGroupSchema[];
  @ApiPropertyOptional({ type: [TemplateOptionSchema] }) options?: TemplateOptionSchema[];
  @ApiPropertyOptional({ type: [TemplateMaterialSchema] }) materials?: TemplateMaterialSchema[];
  @ApiPropertyOptional({ type: [String] }) sections?: string[];
  @ApiPropertyOptional({ type: [TemplatePricingRuleSchema] }) pricingRules?: TemplatePricingRuleSchema[];
}

export class TemplateListItem {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty() slug: string;
  @ApiProperty() description: string;
  @ApiProperty() productCategory: string;
  @ApiProperty({ type: TemplateSizeConstraints }) constraints: TemplateSizeConstraints;
  @ApiProperty({ type: [String] }) materialTags: string[];
  @ApiProperty({ description: 'Unix ms' }) createdAt: number;
  @ApiProperty({ description: 'Unix ms' }) updatedAt: number;
}

export class TemplatePage {
  @ApiProperty({ type: [TemplateListItem] }) data: TemplateListItem[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}

export class TemplateDetail extends TemplateListItem {
  @ApiProperty({ type: [TemplateComponentSchema] }) components: TemplateComponentSchema[];
  @ApiProperty({ type: [TemplateOptionGroupSchema] }) optionGroups: TemplateOptionGroupSchema[];
  @ApiProperty({ type: [TemplateOptionSchema] }) options: TemplateOptionSchema[];
  @ApiProperty({ type: [TemplateMaterialSchema] }) materials: TemplateMaterialSchema[];
  @ApiProperty({ type: [String] }) sections: string[];
  @ApiProperty({ type: [TemplatePricingRuleSchema] }) pricingRules: TemplatePricingRuleSchema[];
}

export class TemplateCatalog {
  @ApiProperty({ type: TemplateListItem }) template: TemplateListItem;
  @ApiProperty({ type: [TemplateComponentSchema] }) components: TemplateComponentSchema[];
  @ApiProperty({ type: [TemplateOptionGroupSchema] }) optionGroups: TemplateOptionGroupSchema[];
  @ApiProperty({ type: [TemplateOptionSchema] }) options: TemplateOptionSchema[];
  @ApiProperty({ type: [TemplateMaterialSchema] }) materials: TemplateMaterialSchema[];
  @ApiProperty({ type: [String] }) sections: string[];
}

export class ConfiguredComponentSchema {
  @ApiProperty({ description: 'Instance id chosen by the client, unique in the configuration', example: 'c1' }) id: string;
  @ApiProperty({ description: 'A component id of the template', example: 'TT' }) componentId: string;
  @ApiProperty({ description: 'mm' }) width: number;
  @ApiProperty({ description: 'mm' }) height: number;
  @ApiProperty({ type: [String], description: 'Option ids of component-scoped groups' }) options: string[];
}

/** decisions §5 configuration, canonical form (raw ids; defaults filled in, option lists sorted). */
export class ConfigurationSchema {
  @ApiProperty({ description: 'mm, within the template constraints' }) width: number;
  @ApiProperty({ description: 'mm, within the template constraints' }) height: number;
  @ApiProperty({ minimum: 1, maximum: 999, default: 1, description: 'Number of identical units' }) unitAmount: number;
  @ApiProperty({ type: [ConfiguredComponentSchema], description: 'Side by side, left to right; widths together at most the product width. At least one when the template has components (422 at `components` otherwise)' })
  components: ConfiguredComponentSchema[];
  @ApiProperty({ type: [String], description: 'Option ids of product-scoped groups' }) options: string[];
  @ApiProperty({ type: String, nullable: true }) insideColorId: string | null;
  @ApiProperty({ type: String, nullable: true }) outsideColorId: string | null;
  @ApiProperty({ maxLength: 2000 }) notes: string;
  @ApiProperty({ type: String, nullable: true, description: 'One of the template sections' }) section: string | null;
}
