import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ts from 'typescript';
import { parseTime, parseTimeRange } from './time-range';
import { UsageError } from './usage-error';

/**
 * parseTime run by a Node whose local time is the given zone's (null where it refuses the value):
 * Jest gives a test a copy of process.env, so the time zone of this process cannot be changed from here.
 */
function parseTimeIn(timeZone: string, values: string[]): Array<number | null> {
  const dir = mkdtempSync(join(tmpdir(), 'time-range-'));
  try {
    for (const name of ['time-range', 'usage-error']) {
      const source = readFileSync(join(__dirname, `${name}.ts`), 'utf8');
      writeFileSync(join(dir, `${name}.js`), ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText);
    }
    const script = `const { parseTime } = require(${JSON.stringify(join(dir, 'time-range.js'))});
      const parse = (v) => { try { return parseTime('from', v); } catch { return null; } };
      console.log(JSON.stringify(${JSON.stringify(values)}.map(parse)))`;
    return JSON.parse(execFileSync(process.execPath, ['-e', script], { env: { ...process.env, TZ: timeZone }, encoding: 'utf8' }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const refused = (value: string) => () => parseTime('from', value);

describe('audit:export --from / --to', () => {
  it('reads a date-time without an offset as UTC, like a date alone, whatever the time zone of the machine', () => {
    const values = ['2026-11-22T10:00', '2026-11-22T10:00:30.5', '2026-11-22', '2026-11-22T10:00+02:00', '2026-11-22T10:00:00Z', '2026-11-22T10:00:00.125-05:30'];
    const utc = [
      Date.UTC(2026, 10, 22, 10, 0),
      Date.UTC(2026, 10, 22, 10, 0, 30, 500),
      Date.UTC(2026, 10, 22),
      Date.UTC(2026, 10, 22, 8, 0),
      Date.UTC(2026, 10, 22, 10, 0),
      Date.UTC(2026, 10, 22, 15, 30, 0, 125),
    ];
    expect(values.map((value) => parseTime('from', value))).toEqual(utc);
    expect(parseTimeIn('America/New_York', values)).toEqual(utc);
    expect(parseTimeIn('Asia/Tokyo', values)).toEqual(utc);
  });

  it('reads five digits or more as Unix ms', () => {
    expect(parseTime('to', '1763805600000')).toBe(1_763_805_600_000);
    expect(parseTime('to', '10000')).toBe(10_000);
    expect(parseTime('to', undefined)).toBeUndefined();
  });

  it('given a time past the last date there is, then it refuses it before anything is exported', () => {
    expect(parseTime('to', '8640000000000000')).toBe(8_640_000_000_000_000);
    for (const value of ['8640000000000001', '9000000000000000']) {
      expect(() => parseTime('to', value)).toThrow(new UsageError(`--to is past the last date there is (+275760-09-13T00:00:00.000Z); got "${value}"`));
    }
  });

  it('given a day or time the calendar does not have, then it refuses it instead of carrying over into the next', () => {
    for (const value of ['2026-02-30', '2026-11-31', '2026-13-01', '2026-00-10', '2026-11-00', '2026-11-26T24:00', '2026-11-26T10:60', '2026-11-26T10:00:60', '2026-11-26T10:00+24:00', '2026-11-26T10:00+02:60']) {
      expect(refused(value)).toThrow(new UsageError(`--from must be YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS[.sss]] (UTC, unless it ends in Z or ±HH:MM) or Unix ms (five digits or more); got "${value}"`));
    }
    expect(parseTime('from', '2028-02-29')).toBe(Date.UTC(2028, 1, 29));
    // not 1999: Date.UTC reads the years 0–99 as 1900–1999
    expect(new Date(parseTime('from', '0099-12-31')!).toISOString()).toBe('0099-12-31T00:00:00.000Z');
  });

  it('given a number shorter than five digits or a negative one, then it refuses it instead of reading a year', () => {
    for (const value of ['0', '1', '12', '2026', '-1', '-100000']) expect(refused(value)).toThrow(UsageError);
  });

  it('given a form Date.parse would read in the time zone of the machine, then it refuses it, whatever that zone', () => {
    const values = ['2026-11-26 08:19:30', 'Nov 26 2026 08:19:30', '2026-11-26T08:19:30 GMT', '26/11/2026', '2026-11-26T08', '2026-11-26t08:19z', ' 2026-11-26', ''];
    for (const value of values) expect(refused(value)).toThrow(UsageError);
    expect(parseTimeIn('UTC', values)).toEqual(values.map(() => null));
    expect(parseTimeIn('Asia/Tokyo', values)).toEqual(values.map(() => null));
  });

  it('refuses what is no time, and a --from after --to', () => {
    expect(refused('yesterday')).toThrow(UsageError);
    expect(() => parseTimeRange({ from: '2026-11-23', to: '2026-11-22' })).toThrow('--from (2026-11-23) is after --to (2026-11-22)');
    expect(parseTimeRange({ from: '2026-11-22', to: '2026-11-22' })).toEqual({ from: Date.UTC(2026, 10, 22), to: Date.UTC(2026, 10, 22) });
  });
});
