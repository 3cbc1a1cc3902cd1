import { UsageError } from './usage-error';

/**
 * An --from/--to value: Unix ms (five digits or more), or an ISO date or date-time. A date-time
 * without an offset is UTC, like a date alone and like the times the export writes, whatever the
 * machine's time zone; a four-digit value is a year.
 */
export function parseTime(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const withoutOffset = /^\d{4}-\d{2}-\d{2}T[\d:.]+$/.test(value);
  const ms = /^\d{5,}$/.test(value) ? Number(value) : Date.parse(withoutOffset ? `${value}Z` : value);
  if (!Number.isFinite(ms)) throw new UsageError(`--${name} must be an ISO date or Unix ms, got ${value}`);
  return ms;
}

/** --from and --to, the first not after the second. */
export function parseTimeRange(values: { from?: string; to?: string }): { from?: number; to?: number } {
  const from = parseTime('from', values.from);
  const to = parseTime('to', values.to);
  if (from !== undefined && to !== undefined && from > to) throw new UsageError(`--from (${values.from}) is after --to (${values.to})`);
  return { from, to };
}
