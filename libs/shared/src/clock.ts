/** The source of time, injected so deciders and tests never read the wall clock themselves. */
export abstract class Clock {
  abstract now(): number;
}

export class SystemClock extends Clock {
  now(): number {
    return Date.now();
  }
}

/** A clock tests move by hand. */
export class ManualClock extends Clock {
  constructor(private current = Date.UTC(2026, 0, 1)) {
    super();
  }
  now(): number {
    return this.current;
  }
  set(ms: number): void {
    this.current = ms;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}
