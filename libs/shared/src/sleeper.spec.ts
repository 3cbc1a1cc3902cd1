import { Sleeper } from './sleeper';

describe('Sleeper', () => {
  const settled = (promise: Promise<void>): (() => boolean) => {
    let done = false;
    void promise.then(() => (done = true));
    return () => done;
  };

  it('sleeps its full delay when nothing interrupts it', async () => {
    const startedAt = performance.now();
    await new Sleeper().sleep(30);
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(25);
  });

  it('one interrupt wakes every sleep in progress (one per partition backing off), not only the last', async () => {
    const sleeper = new Sleeper();
    const startedAt = performance.now();
    const sleeps = [sleeper.sleep(10_000), sleeper.sleep(10_000), sleeper.sleep(10_000)];

    sleeper.interrupt();
    await Promise.all(sleeps);

    expect(performance.now() - startedAt).toBeLessThan(1_000);
  });

  it('an interrupt does not cut short a sleep that starts after it', async () => {
    const sleeper = new Sleeper();
    await sleeper.sleep(0);
    sleeper.interrupt();

    const later = settled(sleeper.sleep(10_000));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(later()).toBe(false);

    sleeper.interrupt();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(later()).toBe(true);
  });
});
