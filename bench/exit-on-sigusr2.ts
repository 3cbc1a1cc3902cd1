/**
 * Preloaded (`node --cpu-prof -r dist/bench/exit-on-sigusr2.js …`) into a gateway whose CPU is
 * profiled: SIGUSR2 ends it with exit(0), so V8 writes the --cpu-prof file (a process that ends by
 * a signal, as the gateway does after its shutdown hooks, writes none). Benchmark use only.
 */
process.on('SIGUSR2', () => process.exit(0));
