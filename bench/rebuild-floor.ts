/**
 * The floor under the embedded rebuild (issue 6): what reading the log and storing the finished
 * read model cost on this machine, with no projection handler run. A rebuild does at least this
 * much work, whatever its handlers do, as long as the read models are the documents they are.
 *
 * It generates the events, rebuilds once with the CLI (generation 1), then measures in this
 * process, one pass at a time:
 *  - reading and decoding every event, in the rebuild's pages;
 *  - reading and decoding every document of generation 1, in pages of what a rebuild page writes;
 *  - the same, and storing each page again into empty collections through the bulk writer a
 *    rebuild uses (encoding on this thread, inserts and index updates on the writer's), with the
 *    projections' indexes, with them less their included fields, and with none.
 * Storing minus decoding the documents is what encoding and storing them costs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { allProjections } from '@lib/bootstrap/projections';
import { atGeneration, collectionName, engineOf, POSITION_FIELD, type Projection } from '@lib/event-sourcing';
import { SqliteEventStore } from '@lib/event-store';
import type { GuardedUpsert, IndexSpec, ReadDocument, ReadStore } from '@lib/read-store';
import { EMBEDDED_FILES, openReadStore } from '@lib/runtime';
import { loadConfig } from '@lib/shared';
import { generateQuoteEvents } from './event-generator';
import { runCli } from './operations';

const EVENTS = Number(process.env.BENCH_REBUILD_EVENTS ?? 1_000_000);
/** a rebuild page: 2,000 events */
const EVENT_PAGE = 2_000;
/** about what a rebuild page of the generated quotes writes (2,000 events, 286 quotes, 5 documents each) */
const DOCUMENT_PAGE = 1_400;
const BUILT = 1;
const SCRATCH = 9;

interface Pass {
  seconds: number;
  /** user + system CPU of the whole process (this thread, the writer's, SQLite's checkpointer, V8's) */
  cpuSeconds: number;
}

async function measure(work: () => Promise<void>): Promise<Pass> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await work();
  const used = process.cpuUsage(cpu);
  return { seconds: (performance.now() - started) / 1000, cpuSeconds: (used.user + used.system) / 1e6 };
}

async function readEvents(dataDir: string): Promise<number> {
  const events = new SqliteEventStore({ file: join(dataDir, EMBEDDED_FILES.eventStore) });
  let count = 0;
  try {
    for (let after = 0; ; ) {
      const page = await events.readAll({ after, maxCount: EVENT_PAGE });
      if (page.length === 0) return count;
      count += page.length;
      after = page[page.length - 1].position;
    }
  } finally {
    await events.close();
  }
}

interface Collection {
  projection: Projection;
  name: string;
}

/** Every document of generation 1, decoded, a page at a time, each as a write into the scratch generation. */
function* builtPages(dataDir: string, collections: Collection[]): Generator<GuardedUpsert[]> {
  const db = new Database(join(dataDir, EMBEDDED_FILES.readStore), { readonly: true, fileMustExist: true });
  try {
    for (const { projection, name } of collections) {
      const read = db.prepare(`SELECT rowid, doc FROM "coll_${collectionName(atGeneration(projection, BUILT), name)}" WHERE rowid > ? ORDER BY rowid LIMIT ${DOCUMENT_PAGE}`).raw(true);
      const target = collectionName(atGeneration(projection, SCRATCH), name);
      for (let after = 0; ; ) {
        const rows = read.all(after) as Array<[number, string]>;
        if (rows.length === 0) break;
        after = rows[rows.length - 1][0];
        yield rows.map(([, doc]) => {
          const document = JSON.parse(doc) as ReadDocument;
          return { collection: target, document, guard: { field: POSITION_FIELD, value: document[POSITION_FIELD] as number } };
        });
      }
    }
  } finally {
    db.close();
  }
}

type Indexes = 'all' | 'without included fields' | 'none';

async function storeAgain(store: ReadStore, dataDir: string, collections: Collection[], indexes: Indexes, documents: number): Promise<Pass> {
  for (const { projection, name } of collections) await store.dropCollection(collectionName(atGeneration(projection, SCRATCH), name));
  if (indexes !== 'none') {
    for (const { projection, name } of collections) {
      const specs: IndexSpec[] = projection.collections[name].map((spec) => (indexes === 'all' ? spec : { fields: spec.fields, unique: spec.unique }));
      await store.ensureIndexes(collectionName(atGeneration(projection, SCRATCH), name), specs);
    }
  }
  const pass = await measure(async () => {
    const writer = store.openBulkWriter();
    let storing: Promise<unknown> = Promise.resolve();
    let applied = 0;
    try {
      for (const page of builtPages(dataDir, collections)) {
        await storing;
        storing = writer.write(page, []).then((count) => (applied += count));
      }
      await storing;
    } finally {
      await writer.close();
    }
    if (applied !== documents) throw new Error(`stored ${applied} of ${documents} documents`);
  });
  for (const { projection, name } of collections) await store.dropCollection(collectionName(atGeneration(projection, SCRATCH), name));
  return pass;
}

export async function benchRebuildFloor(): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-rebuild-floor-'));
  try {
    const events = new SqliteEventStore({ file: join(dataDir, EMBEDDED_FILES.eventStore) });
    const written = await generateQuoteEvents(events, EVENTS, { onProgress: (n) => process.stderr.write(`generated ${n} events\r`) });
    await events.close();
    process.stderr.write(`\ngenerated ${written} events; rebuilding\n`);
    const rebuild = await runCli(dataDir, ['projections:rebuild', '--all']);
    if (rebuild.code !== 0) throw new Error(`rebuild failed: ${rebuild.stdout}`);

    const collections = allProjections().flatMap((projection) => Object.keys(projection.collections).map((name) => ({ projection, name })));
    const readEventsPass = await measure(async () => void (await readEvents(dataDir)));
    let documents = 0;
    const decodePass = await measure(async () => {
      for (const page of builtPages(dataDir, collections)) documents += page.length;
    });
    const store = engineOf(await openReadStore(loadConfig({ DATA_DIR: dataDir })));
    const stores: Array<[Indexes, Pass]> = [];
    try {
      for (const indexes of ['all', 'without included fields', 'none'] as const) stores.push([indexes, await storeAgain(store, dataDir, collections, indexes, documents)]);
    } finally {
      await store.close();
    }

    const cores = availableParallelism();
    const rate = (seconds: number) => Math.round(written / seconds).toLocaleString('en');
    const row = (name: string, pass: Pass) => `| ${name} | ${pass.seconds.toFixed(1)} | ${pass.cpuSeconds.toFixed(1)} |`;
    const floorCpu = readEventsPass.cpuSeconds + stores[0][1].cpuSeconds - decodePass.cpuSeconds;
    return [
      `### The floor under a rebuild of ${written.toLocaleString('en')} events (embedded, ${cores} cores)`,
      '',
      `The CLI's rebuild of the same store: ${rebuild.seconds.toFixed(1)} s wall (${rate(rebuild.seconds)} events/s), ${rebuild.cpuSeconds.toFixed(1)} s CPU, peak RSS ${rebuild.maxRssMb.toFixed(0)} MB.`,
      '',
      '| pass (no projection handler runs) | wall s | CPU s |',
      '|---|---:|---:|',
      row(`read and decode every event (pages of ${EVENT_PAGE.toLocaleString('en')})`, readEventsPass),
      row(`read and decode the ${documents.toLocaleString('en')} documents of the built read model (pages of ${DOCUMENT_PAGE.toLocaleString('en')})`, decodePass),
      ...stores.map(([indexes, pass]) => row(`the same, and store them again through the bulk writer; indexes: ${indexes}`, pass)),
      '',
      `Reading the events plus encoding and storing the documents with all indexes: ${floorCpu.toFixed(1)} s of CPU, so at most ` +
        `${rate(floorCpu / cores)} events/s on ${cores} cores kept fully busy, before any handler runs.`,
      '',
    ];
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
