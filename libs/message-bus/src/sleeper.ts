/** A sleep that can be cut short: by a new publish, or by stop(). */
export class Sleeper {
  private wakeUp: (() => void) | null = null;

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wakeUp = (): void => {
        clearTimeout(timer);
        if (this.wakeUp === wakeUp) this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(wakeUp, ms);
      this.wakeUp = wakeUp;
    });
  }

  interrupt(): void {
    this.wakeUp?.();
  }
}

/** Exponential backoff: base, 2×base, 4×base … capped at max. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(baseMs * 2 ** Math.min(attempt - 1, 20), maxMs);
}
