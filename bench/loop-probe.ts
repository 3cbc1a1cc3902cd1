/**
 * Preloaded into the gateway by the webhook benchmarks when BENCH_LOOP_PROBE_FILE is set
 * (`node -r dist/bench/loop-probe.js …`): every PROBE_EVERY_MS a timer schedules a setImmediate and
 * records how long it waited — the wait of any code that defers work to the next turn of the event
 * loop (e.g. a group commit). Samples `[monotonic µs, wait ms]` are appended to the file once a
 * second. Benchmark instrumentation only; it does not touch the product's code.
 */
import { appendFileSync } from 'node:fs';

const file = process.env.BENCH_LOOP_PROBE_FILE;
const PROBE_EVERY_MS = 20;

if (file) {
  let samples: Array<[number, number]> = [];
  const probe = setInterval(() => {
    const scheduled = process.hrtime.bigint();
    setImmediate(() => {
      const ran = process.hrtime.bigint();
      samples.push([Number(scheduled / 1000n), Number(ran - scheduled) / 1e6]);
    });
  }, PROBE_EVERY_MS);
  probe.unref();
  const flush = setInterval(() => {
    if (samples.length === 0) return;
    appendFileSync(file, `${JSON.stringify(samples)}\n`);
    samples = [];
  }, 1_000);
  flush.unref();
}
