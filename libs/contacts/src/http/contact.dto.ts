import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { EmailAddress, EmptyClears, IfPresent, NullablePlainText, PageQuery, PlainText, Trimmed } from '@lib/http';
import { CONTACT_FIELD_LIMITS as MAX } from '../domain/contact.limits';

const nullableText = (maxLength: number, description?: string) => ({ type: String, nullable: true, maxLength, description });

/**
 * A key of another system, matched exactly there: stored as sent, neither trimmed nor stripped of
 * HTML (it is never rendered as HTML). `""` clears it like `null`, as on submissions.
 */
const EXTERNAL_REF_DOC = nullableText(MAX.externalRef, 'Link to an external system, e.g. `crm:contact:123`. Stored verbatim (not trimmed, HTML kept); null or "" clears it.');

export class UpsertContactDto {
  @ApiProperty({ format: 'email', maxLength: MAX.email, description: 'Upsert key, compared case-insensitively; stored lower-cased, in Unicode form NFC, the domain in Unicode (not punycode).' })
  @IsDefined({ message: 'email is required' }) @EmailAddress(MAX.email)
  email: string;

  @ApiPropertyOptional({ maxLength: MAX.name, description: 'HTML is stripped. Cannot be null.' })
  @IfPresent() @PlainText() @IsString() @IsNotEmpty() @MaxLength(MAX.name)
  name?: string;

  @ApiPropertyOptional(nullableText(MAX.companyName, 'HTML is stripped; null clears it.'))
  @IsOptional() @NullablePlainText() @IsString() @MaxLength(MAX.companyName)
  companyName?: string | null;

  @ApiPropertyOptional(nullableText(MAX.phone, 'HTML is stripped; null clears it.'))
  @IsOptional() @NullablePlainText() @IsString() @MaxLength(MAX.phone)
  phone?: string | null;

  @ApiPropertyOptional(EXTERNAL_REF_DOC)
  @IsOptional() @EmptyClears() @IsString() @MaxLength(MAX.externalRef)
  externalRef?: string | null;
}

export class ChangeContactDto {
  @ApiPropertyOptional({ maxLength: MAX.name, description: 'HTML is stripped. Cannot be cleared.' })
  @IfPresent() @PlainText() @IsString() @IsNotEmpty() @MaxLength(MAX.name)
  name?: string;

  @ApiPropertyOptional(nullableText(MAX.phone))
  @IsOptional() @NullablePlainText() @IsString() @MaxLength(MAX.phone)
  phone?: string | null;

  @ApiPropertyOptional(nullableText(MAX.companyName))
  @IsOptional() @NullablePlainText() @IsString() @MaxLength(MAX.companyName)
  companyName?: string | null;

  @ApiPropertyOptional(nullableText(MAX.address))
  @IsOptional() @NullablePlainText() @IsString() @MaxLength(MAX.address)
  address?: string | null;

  @ApiPropertyOptional(nullableText(MAX.postalCode))
  @IsOptional() @NullablePlainText() @IsString() @MaxLength(MAX.postalCode)
  postalCode?: string | null;

  @ApiPropertyOptional(nullableText(MAX.city))
  @IsOptional() @NullablePlainText() @IsString() @MaxLength(MAX.city)
  city?: string | null;

  @ApiPropertyOptional(nullableText(MAX.country))
  @IsOptional() @NullablePlainText() @IsString() @MaxLength(MAX.country)
  country?: string | null;

  @ApiPropertyOptional(EXTERNAL_REF_DOC)
  @IsOptional() @EmptyClears() @IsString() @MaxLength(MAX.externalRef)
  externalRef?: string | null;
}

export class ListContactsQuery extends PageQuery {
  @ApiPropertyOptional({ description: 'Exact match, case-insensitive.', maxLength: MAX.email })
  @IsOptional() @Trimmed() @IsString() @IsNotEmpty() @MaxLength(MAX.email)
  email?: string;
}

export class ContactResponse {
  @ApiProperty({ example: 'ct_5f0c6a0e4b2d4a7f9c1e2d3b4a5f6e7d' }) id: string;
  @ApiProperty({ description: 'Empty when the contact was created without a name.' }) name: string;
  @ApiProperty({ format: 'email' }) email: string;
  @ApiProperty({ type: String, nullable: true }) phone: string | null;
  @ApiProperty({ type: String, nullable: true }) companyName: string | null;
  @ApiProperty({ type: String, nullable: true }) address: string | null;
  @ApiProperty({ type: String, nullable: true }) postalCode: string | null;
  @ApiProperty({ type: String, nullable: true }) city: string | null;
  @ApiProperty({ type: String, nullable: true }) country: string | null;
  @ApiProperty() isStarred: boolean;
  @ApiProperty({ type: 'integer', description: 'Number of submissions; identifies repeat customers.' }) submissionCount: number;
  @ApiProperty({ type: String, nullable: true }) externalRef: string | null;
  @ApiProperty({ type: 'integer', description: 'Unix ms of the last submission (creation time until then).' }) lastUsedAt: number;
  @ApiProperty({ type: 'integer', description: 'Unix ms' }) createdAt: number;
  @ApiProperty({ type: 'integer', description: 'Unix ms' }) updatedAt: number;
}

export class UpsertContactResponse extends ContactResponse {
  @ApiProperty({ description: 'true when this request created the contact (201), false when it existed (200).' }) created: boolean;
}

export class ContactPageResponse {
  @ApiProperty({ type: [ContactResponse] }) data: ContactResponse[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}
