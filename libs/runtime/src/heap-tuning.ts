import { setFlagsFromString } from 'node:v8';

/**
 * Imported first by every server process (gateway, projector, outbox), before anything allocates.
 *
 * Turns off V8's allocation-site pretenuring. V8 watches which allocation sites' objects survive
 * scavenges and from then on allocates those sites' objects in the old generation. In these
 * servers the decision is taken while a burst of writes keeps objects alive for a while (such as
 * seeding 10,000 quotes through the API), and then stays for request objects that die within a
 * millisecond. A dead object in the old generation still counts as a root for the scavenger
 * until the next mark-compact, so everything it points to in the young generation survives and
 * is promoted in turn: measured with `--trace-gc-nvp` over 24 s of kept quote-list load after
 * such a seeding, 117–132 MB promoted (1,529 MB in about half of the runs, with 5 ms scavenges
 * and a p99 of 3–5 ms), against 2.1 MB with pretenuring off (docs/benchmarks.md, sixth round).
 *
 * The flag is read when V8 decides, during garbage collections, so setting it at start-up takes
 * effect for the whole process (a test checks that no site is tenured afterwards). The CLI keeps
 * V8's default: a rebuild measured the same either way.
 */
setFlagsFromString('--no-allocation-site-pretenuring');
