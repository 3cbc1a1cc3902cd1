/**
 * How the embedded read store lays documents out in SQLite, shared by the store and its bulk
 * writer: one table per collection, the document as JSON text, writes guarded by a field.
 */
import { withPath } from './document-paths';
import type { GuardedUpsert } from './read-store.port';

const COLLECTION_NAME = /^[a-z][a-z0-9_]*$/;
const FIELD_PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;
export const TABLE_PREFIX = 'coll_';

export const SAVE_CHECKPOINT_SQL =
  'INSERT INTO read_checkpoints (name, position) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position';

export function tableName(collection: string): string {
  if (typeof collection !== 'string' || !COLLECTION_NAME.test(collection)) {
    throw new Error(`invalid collection name "${collection}": use lower-case letters, digits and _`);
  }
  return TABLE_PREFIX + collection;
}

/**
 * The SQL for a document field. Queries and expression indexes must spell it identically for
 * SQLite to use the index; field names are validated, so they can be inlined.
 */
export function fieldSql(field: string): string {
  if (field === 'id') return 'id';
  if (typeof field !== 'string' || !FIELD_PATH.test(field)) throw new Error(`invalid field name "${field}"`);
  return `json_extract(doc, '$.${field}')`;
}

/** The JSON text of a document field (SQL NULL when missing); findJson and included index columns spell it alike. */
export function jsonSql(field: string): string {
  if (typeof field !== 'string' || !FIELD_PATH.test(field)) throw new Error(`invalid field name "${field}"`);
  return `(doc -> '$.${field}')`;
}

export function createTableSql(table: string): string {
  return `CREATE TABLE IF NOT EXISTS "${table}" (id TEXT PRIMARY KEY, doc TEXT NOT NULL)`;
}

/** One write as SQLite runs it: the statement and its parameters (id, JSON text, and the guard's value when guarded). */
export interface UpsertRow {
  table: string;
  sql: string;
  params: [string, string] | [string, string, number];
}

/** Validates a write and prepares it; a guarded document is stored with the guard's value, so the next write is guarded against it. */
export function upsertRow({ collection, document, guard }: GuardedUpsert): UpsertRow {
  const table = tableName(collection);
  if (typeof document?.id !== 'string' || document.id === '') throw new TypeError('a document needs a string id');
  if (!guard) {
    return { table, sql: `INSERT INTO "${table}" (id, doc) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`, params: [document.id, JSON.stringify(document)] };
  }
  const path = fieldSql(guard.field);
  return {
    table,
    sql: `INSERT INTO "${table}" (id, doc) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc
           WHERE ${path} IS NULL OR ${path} < ?`,
    params: [document.id, JSON.stringify(withPath(document, guard.field, guard.value)), guard.value],
  };
}
