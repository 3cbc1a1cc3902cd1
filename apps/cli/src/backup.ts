import { chmodSync, closeSync, copyFileSync, constants, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { DATA_DIR_MODE, EMBEDDED_FILES, embeddedStoreFiles } from '@lib/runtime/stores';
import { copyAtOneInstant, type AppConfig } from '@lib/shared';
import { EXIT, type CliContext } from './commands';
import { UsageError } from './usage-error';

/** The store files in the order their write locks are taken: every backup takes them in the same order. */
const STORE_FILES = [EMBEDDED_FILES.eventStore, EMBEDDED_FILES.readStore, EMBEDDED_FILES.messageBus, EMBEDDED_FILES.idempotency];
const PDFS = 'pdfs';
/** The secrets the product generates into DATA_DIR (keys.ts, the admin token). */
const isKeyFile = (name: string) => name === 'admin-token' || name.endsWith('.key');

/**
 * With the event log on EventStoreDB nothing in DATA_DIR is the product's state worth a backup of
 * its own: the engines are backed up with their own tools.
 */
export function refuseEventStoreEngine(config: Pick<AppConfig, 'eventStoreUrl'>): void {
  if (!config.eventStoreUrl) return;
  throw new UsageError(
    'backup copies the event log in DATA_DIR, and EVENTSTORE_URL is set: back up the engines with their own tools ' +
      '(EventStoreDB: its backup of the database directory, see its documentation; MongoDB: mongodump)',
  );
}

/** What a backup leaves to the engines, and how (the real-engine stores of this configuration). */
function onEngines(config: Pick<AppConfig, 'mongodbUrl' | 'kafkaBrokers'>): Array<{ store: string; note: string }> {
  return [
    ...(config.mongodbUrl
      ? [
          {
            store: 'read store',
            note: 'MongoDB (MONGODB_URL): read models, checkpoints, delivery log, idempotency keys. Take a mongodump of that database BEFORE each backup, never after: a read store older than the log catches up, a newer one does not belong to it (docs/operations.md, Restore)',
          },
        ]
      : []),
    ...(config.kafkaBrokers ? [{ store: 'message bus', note: 'Kafka (KAFKA_BROKERS): nothing to back up; the relay checkpoint is in the read store' }] : []),
  ];
}

/**
 * backup <dir> — a copy of the embedded stores as they all were at one instant (copyAtOneInstant),
 * taken while the apps keep running, with the key files and the PDFs. Run against a DATA_DIR that
 * holds an event log (main.ts checks it); writes into a new or empty `dir`, never over a backup.
 */
export async function backup(
  context: Pick<CliContext, 'out' | 'err'>,
  config: Pick<AppConfig, 'dataDir' | 'eventStoreUrl' | 'mongodbUrl' | 'kafkaBrokers'>,
  dir: string,
  json: boolean,
): Promise<number> {
  const { dataDir } = config;
  const target = resolve(dir);
  // Only the stores this configuration keeps embedded: a file left from an earlier embedded run is not the product's state.
  const embedded = embeddedStoreFiles(config);
  const stores = STORE_FILES.filter((name) => embedded.includes(name) && existsSync(join(dataDir, name)));
  const engines = onEngines(config);
  const keys = readdirSync(dataDir, { withFileTypes: true })
    .filter((entry) => entry.isFile() && isKeyFile(entry.name))
    .map((entry) => entry.name)
    .sort();
  prepareTarget(context, target, [...STORE_FILES.flatMap((name) => [name, `${name}-wal`, `${name}-shm`]), ...keys, PDFS]);

  const copy = copyAtOneInstant(stores.map((name) => ({ source: join(dataDir, name), target: join(target, name) })));
  const head = headOf(join(target, EMBEDDED_FILES.eventStore));
  // Written once and never changed (keys) or immutable once written (PDFs): copied after the snapshot.
  for (const name of keys) copyPrivately(join(dataDir, name), join(target, name));
  const pdfs = copyTree(join(dataDir, PDFS), join(target, PDFS));

  const heldWritersMs = Math.ceil(copy.heldWritersMs);
  const copied = copy.databases.map((database, i) => ({ file: stores[i], rows: database.rows, bytes: database.bytes, tables: database.tables }));
  if (json) {
    context.out.write(`${JSON.stringify({ dataDir, dir: target, head, heldWritersMs, stores: copied, keys, pdfs, ...(engines.length > 0 && { engines }) })}\n`);
    return EXIT.ok;
  }
  for (const store of copied) {
    context.out.write(`${store.file}: ${store.rows} rows, ${store.bytes} bytes${store.file === EMBEDDED_FILES.eventStore ? `; head of the event log: position ${head}` : ''}\n`);
  }
  for (const name of STORE_FILES) if (embedded.includes(name) && !stores.includes(name)) context.out.write(`${name}: not in DATA_DIR, nothing to copy\n`);
  for (const { store, note } of engines) context.out.write(`${store}: not copied, on ${note}\n`);
  context.out.write(`keys: ${keys.length > 0 ? `${keys.join(', ')} (mode 0600)` : 'none in DATA_DIR'}\n`);
  context.out.write(`${PDFS}/: ${pdfs.files} files, ${pdfs.bytes} bytes\n`);
  context.out.write(`backed up ${dataDir} as of one instant to ${target} (writers held for ${heldWritersMs} ms)\n`);
  return EXIT.ok;
}

/** Creates `target` readable by its owner only, or takes an existing directory that holds none of `names`. */
function prepareTarget(context: Pick<CliContext, 'err'>, target: string, names: string[]): void {
  const existing = statSync(target, { throwIfNoEntry: false });
  if (!existing) {
    mkdirSync(target, { recursive: true, mode: DATA_DIR_MODE });
    // mkdir's mode passes through the umask, which may take bits away but never adds the ones wanted
    chmodSync(target, DATA_DIR_MODE);
    return;
  }
  if (!existing.isDirectory()) throw new UsageError(`backup: ${target} exists and is not a directory`);
  const taken = names.filter((name) => existsSync(join(target, name)));
  if (taken.length > 0) throw new UsageError(`backup: ${target} already holds ${taken.join(', ')}: back up into a new or empty directory (nothing was written)`);
  if ((existing.mode & 0o077) !== 0) {
    context.err.write(`warning: ${target} can be read by other users (mode ${(existing.mode & 0o777).toString(8)}); the backup holds every organization's data and the keys: chmod 700 it\n`);
  }
}

/** The head of the copied event log, as SqliteEventStore.headPosition reads it. */
function headOf(file: string): number {
  if (!existsSync(file)) return 0;
  const db = new Database(file, { fileMustExist: true });
  try {
    if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'").get()) return 0;
    return Number(db.prepare('SELECT COALESCE(MAX(position), 0) FROM events').pluck().get());
  } finally {
    db.close();
  }
}

/** Copies a key file as the product writes one: mode 0600 from its creation, synced. */
function copyPrivately(source: string, target: string): void {
  const bytes = readFileSync(source);
  const fd = openSync(target, 'wx', 0o600);
  try {
    writeSync(fd, bytes);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Copies the files of a directory tree (modes kept), skipping the temporary files of writes in
 * progress and files deleted while it runs. A PDF whose file is missing is generated again.
 */
function copyTree(source: string, target: string): { files: number; bytes: number } {
  const total = { files: 0, bytes: 0 };
  if (!statSync(source, { throwIfNoEntry: false })?.isDirectory()) return total;
  mkdirSync(target, { mode: DATA_DIR_MODE });
  for (const entry of readdirSync(source, { withFileTypes: true })) {
    const from = join(source, entry.name);
    const to = join(target, entry.name);
    if (entry.isDirectory()) {
      const below = copyTree(from, to);
      total.files += below.files;
      total.bytes += below.bytes;
    } else if (entry.isFile() && !entry.name.endsWith('.tmp')) {
      try {
        copyFileSync(from, to, constants.COPYFILE_EXCL);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      total.files++;
      total.bytes += statSync(to).size;
    }
  }
  return total;
}
