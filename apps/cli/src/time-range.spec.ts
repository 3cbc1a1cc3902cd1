import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ts from 'typescript';
import { parseTime, parseTimeRange } from './time-range';
import { UsageError } from './usage-error';

/**
 * parseTime run by a Node whose local time is New York's: Jest gives a test a copy of
 * process.env, so the time zone of this process cannot be changed from here.
 */
function parseTimeInNewYork(values: string[]): number[] {
  const dir = mkdtempSync(join(tmpdir(), 'time-range-'));
  try {
    for (const name of ['time-range', 'usage-error']) {
      const source = readFileSync(join(__dirname, `${name}.ts`), 'utf8');
      writeFileSync(join(dir, `${name}.js`), ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText);
    }
    const script = `const { parseTime } = require(${JSON.stringify(join(dir, 'time-range.js'))}); console.log(JSON.stringify(${JSON.stringify(values)}.map((v) => parseTime('from', v))))`;
    return JSON.parse(execFileSync(process.execPath, ['-e', script], { env: { ...process.env, TZ: 'America/New_York' }, encoding: 'utf8' }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('audit:export --from / --to', () => {
  it('reads a date-time without an offset as UTC, like a date alone, whatever the time zone of the machine', () => {
    const values = ['2026-11-22T10:00', '2026-11-22T10:00:30.5', '2026-11-22', '2026-11-22T10:00+02:00', '2026-11-22T10:00:00Z'];
    const utc = [Date.UTC(2026, 10, 22, 10, 0), Date.UTC(2026, 10, 22, 10, 0, 30, 500), Date.UTC(2026, 10, 22), Date.UTC(2026, 10, 22, 8, 0), Date.UTC(2026, 10, 22, 10, 0)];
    expect(values.map((value) => parseTime('from', value))).toEqual(utc);
    expect(parseTimeInNewYork(values)).toEqual(utc);
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
