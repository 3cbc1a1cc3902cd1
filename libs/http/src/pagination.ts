import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { ValidationFailed } from '@lib/shared';

/**
 * A query parameter that must be a whole number, written in decimal digits only, a minus sign
 * allowed: `Number()` alone would also take `1e1`, `0x10`, ` 5` and `5.0`. Anything else is left
 * as the string it is, for `@IsInt()` to refuse; a negative number is left to the range checks,
 * so `limit=-1` is told that it must not be less than 1.
 */
export const WholeNumberQuery = () =>
  Transform(({ value }: { value: unknown }) => (typeof value === 'string' && /^-?\d{1,16}$/.test(value) ? Number(value) : value));

/** `limit` and `cursor` of every list endpoint. */
export class PageQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 50 })
  @IsOptional()
  @WholeNumberQuery()
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

  @ApiPropertyOptional({ description: 'Opaque cursor from the previous page (`nextCursor`).' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  cursor?: string;
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/**
 * Cursors are opaque to clients: base64url JSON of the last item's sort-key values, tagged with
 * the list they belong to so a cursor of one list cannot be replayed against another. Every list
 * of the APIs pages by a whole number (a time or a sequence number) and then the id, so a cursor
 * holds exactly those two values; anything else is refused as malformed (a cursor is not signed:
 * a client can write one).
 */
export function encodeCursor(list: string, after: unknown[]): string {
  return Buffer.from(JSON.stringify({ l: list, a: after }), 'utf8').toString('base64url');
}

export function decodeCursor(list: string, cursor: string | undefined): unknown[] | undefined {
  if (cursor === undefined) return undefined;
  const invalid = () => new ValidationFailed([{ path: 'cursor', message: 'cursor is malformed or belongs to another list' }]);
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const value = parsed as { l?: unknown; a?: unknown };
  if (!value || typeof value !== 'object' || value.l !== list || !Array.isArray(value.a)) throw invalid();
  const after = value.a as unknown[];
  if (!(after.length === 2 && Number.isSafeInteger(after[0]) && typeof after[1] === 'string')) throw invalid();
  return after;
}

/**
 * The response body of a page whose items are already JSON text (ReadStore.findJson): the items
 * are joined as they are, not decoded and encoded again.
 */
export function pageJson(page: Page<string>): string {
  return `{"data":[${page.data.join(',')}],"nextCursor":${JSON.stringify(page.nextCursor)}}`;
}

export function pageLimit(query: PageQuery): number {
  return query.limit ?? 50;
}
