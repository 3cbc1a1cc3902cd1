import { createHash } from 'node:crypto';
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

  @ApiPropertyOptional({ description: 'Opaque cursor from the previous page (`nextCursor`), asked with the same filters as that page (else 422 at `cursor`).' })
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
 * The filters a page was asked with, as a cursor carries them: a digest of those given (none:
 * undefined), so a cursor made under some filters is refused under others. A client that changed
 * the filters mid-walk got a page of the new query cut at the old one's place (found by a review).
 */
function filtersDigest(filters: Record<string, unknown>): string | undefined {
  const given = Object.entries(filters)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (given.length === 0) return undefined;
  return createHash('sha256').update(JSON.stringify(given)).digest('base64url').slice(0, 16);
}

/**
 * Cursors are opaque to clients: base64url JSON of the last item's sort-key values, tagged with
 * the list they belong to so a cursor of one list cannot be replayed against another, and with
 * the digest of the list's `filters` so it cannot be replayed under other filters. Every list of
 * the APIs pages by a whole number (a time or a sequence number) and then the id, so a cursor
 * holds exactly those two values; anything else is refused as malformed (a cursor is not signed:
 * a client can write one).
 */
export function encodeCursor(list: string, after: unknown[], filters: Record<string, unknown> = {}): string {
  const f = filtersDigest(filters);
  return Buffer.from(JSON.stringify(f === undefined ? { l: list, a: after } : { l: list, a: after, f }), 'utf8').toString('base64url');
}

export function decodeCursor(list: string, cursor: string | undefined, filters: Record<string, unknown> = {}): unknown[] | undefined {
  if (cursor === undefined) return undefined;
  const invalid = () => new ValidationFailed([{ path: 'cursor', message: 'cursor is malformed or belongs to another list' }]);
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const value = parsed as { l?: unknown; a?: unknown; f?: unknown };
  if (!value || typeof value !== 'object' || value.l !== list || !Array.isArray(value.a)) throw invalid();
  const after = value.a as unknown[];
  if (!(after.length === 2 && Number.isSafeInteger(after[0]) && typeof after[1] === 'string')) throw invalid();
  if (value.f !== filtersDigest(filters)) {
    throw new ValidationFailed([{ path: 'cursor', message: 'cursor belongs to the same list with other filters: ask with the filters it was given with, or start without a cursor' }]);
  }
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
