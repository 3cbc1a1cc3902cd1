import { UsageError } from './usage-error';

/** The largest time a JavaScript date holds: 8.64e15 ms after 1970. */
const MAX_DATE_MS = 8_640_000_000_000_000;

const FORMS = 'YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS[.sss]] (UTC, unless it ends in Z or ±HH:MM) or Unix ms (five digits or more)';

/** A date, or a date-time with an optional offset: the ISO 8601 forms the export itself writes. */
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/**
 * An --from/--to value: Unix ms (five digits or more), or an ISO date or date-time. A date-time
 * without an offset is UTC, like a date alone and like the times the export writes, whatever the
 * machine's time zone. Nothing else is guessed at: Date.parse reads `2026-02-30` as 2 March, `1`
 * as the year 2001 and `2026-11-26 08:19:30` in the machine's time zone.
 */
export function parseTime(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = /^\d{5,}$/.test(value) ? Number(value) : isoTime(value);
  if (ms === null || !Number.isSafeInteger(ms)) throw new UsageError(`--${name} must be ${FORMS}; got ${JSON.stringify(value)}`);
  // Past the last instant a date can name (the year 275760): refused before anything is written,
  // rather than failing on the summary after the export (found by a review, 2026-11-27).
  if (ms > MAX_DATE_MS) throw new UsageError(`--${name} is past the last date there is (${new Date(MAX_DATE_MS).toISOString()}); got ${JSON.stringify(value)}`);
  return ms;
}

/** Unix ms of an ISO date or date-time; null when it is not one, or names no such day or time (2026-02-30, 24:00). */
function isoTime(value: string): number | null {
  const match = ISO_TIME.exec(value);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => Number(part ?? 0));
  const offset = offsetMinutes(match[8] ?? 'Z');
  // setUTCFullYear, as Date.UTC reads the years 0–99 as 1900–1999.
  const time = new Date(0);
  time.setUTCFullYear(year, month - 1, day);
  time.setUTCHours(hour, minute, second, Number((match[7] ?? '').padEnd(3, '0')));
  // A part out of range carries over into the next (30 February is 2 March): it must read back the same.
  const readsBack =
    time.getUTCFullYear() === year &&
    time.getUTCMonth() === month - 1 &&
    time.getUTCDate() === day &&
    time.getUTCHours() === hour &&
    time.getUTCMinutes() === minute &&
    time.getUTCSeconds() === second;
  return readsBack && offset !== null ? time.getTime() - offset * 60_000 : null;
}

/** `Z` or `±HH:MM` in minutes east of UTC; null for an hour over 23 or minutes over 59. */
function offsetMinutes(offset: string): number | null {
  if (offset === 'Z') return 0;
  const hours = Number(offset.slice(1, 3));
  const minutes = Number(offset.slice(4, 6));
  if (hours > 23 || minutes > 59) return null;
  return (offset.startsWith('-') ? -1 : 1) * (hours * 60 + minutes);
}

/** --from and --to, the first not after the second. */
export function parseTimeRange(values: { from?: string; to?: string }): { from?: number; to?: number } {
  const from = parseTime('from', values.from);
  const to = parseTime('to', values.to);
  if (from !== undefined && to !== undefined && from > to) throw new UsageError(`--from (${values.from}) is after --to (${values.to})`);
  return { from, to };
}
