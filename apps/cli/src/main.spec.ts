import { UsageError } from './commands';
import { parseTime, parseTimeRange } from './main';

describe('audit:export --from / --to', () => {
  // Only a machine whose local time is not UTC tells this apart from reading it as local time
  // (Jest gives a test a copy of process.env, so TZ cannot be changed from here).
  it('reads a date-time without an offset as UTC, like a date alone, whatever the time zone of the machine', () => {
    expect(parseTime('from', '2026-11-22T10:00')).toBe(Date.UTC(2026, 10, 22, 10, 0));
    expect(parseTime('from', '2026-11-22T10:00:30.5')).toBe(Date.UTC(2026, 10, 22, 10, 0, 30, 500));
    expect(parseTime('from', '2026-11-22')).toBe(Date.UTC(2026, 10, 22));
    expect(parseTime('from', '2026-11-22T10:00+02:00')).toBe(Date.UTC(2026, 10, 22, 8, 0));
    expect(parseTime('from', '2026-11-22T10:00:00Z')).toBe(Date.UTC(2026, 10, 22, 10, 0));
  });

  it('reads five digits or more as Unix ms, and four as a year', () => {
    expect(parseTime('to', '1763805600000')).toBe(1_763_805_600_000);
    expect(parseTime('to', '2026')).toBe(Date.UTC(2026, 0, 1));
    expect(parseTime('to', undefined)).toBeUndefined();
  });

  it('refuses what is no time, and a --from after --to', () => {
    expect(() => parseTime('from', 'yesterday')).toThrow(UsageError);
    expect(() => parseTimeRange({ from: '2026-11-23', to: '2026-11-22' })).toThrow('--from (2026-11-23) is after --to (2026-11-22)');
    expect(parseTimeRange({ from: '2026-11-22', to: '2026-11-22' })).toEqual({ from: Date.UTC(2026, 10, 22), to: Date.UTC(2026, 10, 22) });
  });
});
