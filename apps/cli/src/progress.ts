import type { Writable } from 'node:stream';
import type { RebuildProgress } from '@lib/event-sourcing';

const BAR_WIDTH = 30;
/** Plain lines at most this often, so a log does not fill with them. */
const LINE_EVERY_MS = 2_000;

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/**
 * Rebuild progress: a bar redrawn in place with rate and ETA on a terminal, a plain line every
 * few seconds otherwise (logs, pipes, CI). The first report of a phase and the last report are
 * shown at once, whatever the time since the previous one.
 */
export class ProgressReporter {
  private readonly startedAt: number;
  private lastDrawn = 0;
  private last: RebuildProgress | null = null;
  /** whether `last` is on the screen or in the log */
  private lastShown = false;

  constructor(
    private readonly stream: Writable & { isTTY?: boolean },
    private readonly now: () => number = () => performance.now(),
  ) {
    this.startedAt = now();
  }

  update(progress: RebuildProgress): void {
    const newPhase = progress.phase !== this.last?.phase;
    this.last = progress;
    const now = this.now();
    const interval = this.stream.isTTY ? 100 : LINE_EVERY_MS;
    this.lastShown = newPhase || now - this.lastDrawn >= interval;
    if (!this.lastShown) return;
    this.lastDrawn = now;
    this.draw(progress, now);
  }

  done(): void {
    if (this.last && !this.lastShown) this.draw(this.last, this.now());
    if (this.stream.isTTY) this.stream.write('\n');
  }

  private draw(progress: RebuildProgress, now: number): void {
    const elapsed = (now - this.startedAt) / 1000;
    const rate = elapsed > 0 ? progress.events / elapsed : 0;
    const total = Math.max(progress.head, progress.position);
    const fraction = total === 0 ? 1 : progress.position / total;
    const eta = rate > 0 ? (total - progress.position) / rate : Number.POSITIVE_INFINITY;
    const phase = progress.phase === 'switched' ? 'switched, following new events' : 'building';
    const numbers = `${progress.position}/${total} ${(fraction * 100).toFixed(1)}% ${Math.round(rate)} events/s ETA ${duration(eta)} (${phase})`;
    if (this.stream.isTTY) {
      const filled = Math.round(fraction * BAR_WIDTH);
      this.stream.write(`\r[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${numbers}\x1b[K`);
    } else {
      this.stream.write(`rebuild: ${numbers}\n`);
    }
  }
}
