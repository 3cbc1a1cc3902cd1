import { PassThrough } from 'node:stream';
import type { RebuildProgress } from '@lib/event-sourcing';
import { ProgressReporter } from './progress';

const HEAD = 100_000;

/** A reporter on a stream that is not a terminal (a log, a pipe), with a clock the test moves. */
function reporterOnALog(): { reporter: ProgressReporter; tick: (ms: number) => void; lines: () => string[] } {
  let clock = 50_000;
  let written = '';
  const stream = new PassThrough();
  stream.on('data', (chunk) => (written += chunk));
  const reporter = new ProgressReporter(stream, () => clock);
  return {
    reporter,
    tick: (ms) => (clock += ms),
    lines: () => written.split('\n').filter((line) => line !== ''),
  };
}

const at = (position: number, phase: RebuildProgress['phase']): RebuildProgress => ({ position, head: HEAD, events: position, resumedFrom: 0, phase });

/** The position and phase each printed line tells. */
const told = (lines: string[]) =>
  lines.map((line) => {
    const [, position, phase] = /^rebuild: (\d+)\/\d+ .*\((.+)\)$/.exec(line) ?? [];
    return [Number(position), phase];
  });

describe('rebuild progress on a stream that is not a terminal', () => {
  it('given a report every 500 ms in both phases, then it prints the first report of each phase, then one line every 2 s, and the last report at the end', () => {
    const { reporter, tick, lines } = reporterOnALog();
    let position = 0;
    for (let report = 0; report < 10; report++, tick(500)) reporter.update(at((position += 100), 'building'));
    for (let report = 0; report < 10; report++, tick(500)) reporter.update(at((position += 100), 'switched'));
    reporter.done();

    expect(told(lines())).toEqual([
      [100, 'building'],
      [500, 'building'],
      [900, 'building'],
      [1100, 'switched, following new events'],
      [1500, 'switched, following new events'],
      [1900, 'switched, following new events'],
      [2000, 'switched, following new events'],
    ]);
  });

  it('given reports far apart, then each is printed once, and the end repeats none of them', () => {
    const { reporter, tick, lines } = reporterOnALog();
    reporter.update(at(40_000, 'building'));
    tick(2_000);
    reporter.update(at(HEAD, 'building'));
    tick(2_000);
    reporter.update(at(HEAD, 'switched'));
    reporter.done();

    expect(told(lines())).toEqual([
      [40_000, 'building'],
      [HEAD, 'building'],
      [HEAD, 'switched, following new events'],
    ]);
  });
});
