import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsIn, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { EmailAddress, NullablePlainText, PageQuery, PhoneNumber, PlainText } from '@lib/http';
import { LEAD_STATUSES, type LeadStatus } from '../domain/lead.events';

export const LEAD_LIMITS = { name: 200, email: 254, phone: 50, message: 5000 } as const;

export class SubmitLeadDto {
  @ApiProperty({ maxLength: LEAD_LIMITS.name, description: 'HTML is stripped.' })
  @PlainText() @IsDefined({ message: 'name is required' }) @IsString() @IsNotEmpty() @MaxLength(LEAD_LIMITS.name)
  name: string;

  @ApiProperty({ format: 'email', maxLength: LEAD_LIMITS.email })
  @IsDefined({ message: 'email is required' }) @EmailAddress(LEAD_LIMITS.email)
  email: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: LEAD_LIMITS.phone, description: 'HTML is stripped. Digits, spaces, a leading + and ( ) . / -, as on the configurator.' })
  @IsOptional() @NullablePlainText() @IsString() @MaxLength(LEAD_LIMITS.phone) @PhoneNumber()
  phone?: string | null;

  @ApiProperty({ maxLength: LEAD_LIMITS.message, description: 'The enquiry; HTML is stripped.' })
  @PlainText() @IsDefined({ message: 'message is required' }) @IsString() @IsNotEmpty() @MaxLength(LEAD_LIMITS.message)
  message: string;
}

export class ListLeadsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: LEAD_STATUSES })
  @IsOptional() @IsIn(LEAD_STATUSES, { message: `status must be one of: ${LEAD_STATUSES.join(', ')}` })
  status?: LeadStatus;
}

export class ChangeLeadStatusDto {
  @ApiProperty({ enum: LEAD_STATUSES, description: 'Only forward: new → contacted → closed.' })
  @IsDefined({ message: 'status is required' }) @IsIn(LEAD_STATUSES, { message: `status must be one of: ${LEAD_STATUSES.join(', ')}` })
  status: LeadStatus;
}

export class LeadResponse {
  @ApiProperty({ example: 'lead_0Qx9eY2b1kAbCdEfGhIjKlMn' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ format: 'email' }) email: string;
  @ApiProperty({ type: String, nullable: true }) phone: string | null;
  @ApiProperty({ description: 'Enquiry text' }) message: string;
  @ApiProperty({ enum: LEAD_STATUSES }) status: LeadStatus;
  @ApiProperty({ type: 'integer', description: 'Unix ms' }) createdAt: number;
}

export class LeadPageResponse {
  @ApiProperty({ type: [LeadResponse] }) data: LeadResponse[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}

export class LeadCreatedResponse {
  @ApiProperty() id: string;
}
