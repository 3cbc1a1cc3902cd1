import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsNotEmpty, IsOptional, IsString, MaxLength, Min, ValidateIf } from 'class-validator';
import { EmptyClears, PageQuery, WholeNumberQuery } from '@lib/http';
import type { SubmissionStatus } from '../application/submission-lookup';
import { SUBMISSION_STATUSES } from '../domain/submission.events';

export const EXTERNAL_REF_MAX = 200;

export class ListSubmissionsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: SUBMISSION_STATUSES })
  @IsOptional() @IsIn(SUBMISSION_STATUSES)
  status?: SubmissionStatus;

  @ApiPropertyOptional()
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(100)
  templateId?: string;

  @ApiPropertyOptional({ type: 'integer', description: 'Unix ms; only submissions created after it (exclusive)' })
  @IsOptional() @WholeNumberQuery() @IsInt({ message: 'createdAfter must be Unix milliseconds (an integer)' }) @Min(0)
  createdAfter?: number;

  @ApiPropertyOptional({ type: 'integer', description: 'Unix ms; only submissions created before it (exclusive)' })
  @IsOptional() @WholeNumberQuery() @IsInt({ message: 'createdBefore must be Unix milliseconds (an integer)' }) @Min(0)
  createdBefore?: number;
}

export class UpdateSubmissionDto {
  @ApiPropertyOptional({ enum: SUBMISSION_STATUSES, description: 'Any status may be set' })
  @ValidateIf((_, value) => value !== undefined) @IsIn(SUBMISSION_STATUSES)
  status?: SubmissionStatus;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: EXTERNAL_REF_MAX, description: 'Stored verbatim; null or "" clears it. Convention: `<system>:<type>:<id>`' })
  @EmptyClears() @IsOptional() @IsString() @MaxLength(EXTERNAL_REF_MAX)
  externalRef?: string | null;
}
