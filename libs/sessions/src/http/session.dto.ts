import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsIn, IsNotEmpty, IsNotEmptyObject, IsOptional, IsString, MaxLength, ValidateNested } from 'class-validator';
import { EmailAddress, IfPresent, PhoneNumber } from '@lib/http';
import { SESSION_LOCALES, SESSION_ORIGINS, type SessionLocale, type SessionOrigin } from '../domain/session.events';

export class StartSessionDto {
  @ApiProperty({ description: 'A template of the organization' })
  @IsString() @IsNotEmpty() @MaxLength(100)
  templateId: string;

  @ApiPropertyOptional({ enum: SESSION_ORIGINS, default: 'storefront', description: '`org_customize`: an organization user configuring for a customer' })
  @IfPresent() @IsIn(SESSION_ORIGINS)
  origin?: SessionOrigin;

  @ApiPropertyOptional({ enum: SESSION_LOCALES, description: "Defaults to the organization's locale" })
  @IfPresent() @IsIn(SESSION_LOCALES)
  locale?: SessionLocale;
}

/** Customer limits: generous for real addresses, bounded for storage. */
export const CUSTOMER_LIMITS = { name: 200, email: 254, phone: 50, companyName: 200, address: 500, postalCode: 20, city: 200, country: 100 } as const;

/**
 * The customer object (api-v1). A submission must be answerable, so `name` and `email` are
 * required on submit; every other field may be omitted or null.
 */
export class CustomerDto {
  @ApiProperty({ maxLength: CUSTOMER_LIMITS.name })
  @IsString() @IsNotEmpty() @MaxLength(CUSTOMER_LIMITS.name)
  name: string;

  @ApiProperty({ format: 'email', maxLength: CUSTOMER_LIMITS.email })
  @IsDefined() @EmailAddress(CUSTOMER_LIMITS.email)
  email: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: CUSTOMER_LIMITS.phone })
  // Empty (or blank) is no phone: stored as null, as every empty customer field.
  @IsOptional() @IsString() @MaxLength(CUSTOMER_LIMITS.phone) @PhoneNumber()
  phone?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: CUSTOMER_LIMITS.companyName })
  @IsOptional() @IsString() @MaxLength(CUSTOMER_LIMITS.companyName)
  companyName?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: CUSTOMER_LIMITS.address })
  @IsOptional() @IsString() @MaxLength(CUSTOMER_LIMITS.address)
  address?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: CUSTOMER_LIMITS.postalCode })
  @IsOptional() @IsString() @MaxLength(CUSTOMER_LIMITS.postalCode)
  postalCode?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: CUSTOMER_LIMITS.city })
  @IsOptional() @IsString() @MaxLength(CUSTOMER_LIMITS.city)
  city?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: CUSTOMER_LIMITS.country })
  @IsOptional() @IsString() @MaxLength(CUSTOMER_LIMITS.country)
  country?: string | null;
}

export class SubmitSessionDto {
  @ApiProperty({ type: CustomerDto })
  @IsDefined() @IsNotEmptyObject() @ValidateNested() @Type(() => CustomerDto)
  customer: CustomerDto;
}
