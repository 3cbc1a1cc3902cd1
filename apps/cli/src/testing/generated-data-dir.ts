import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '@lib/event-store';
import { generateQuoteEvents } from '../../../../bench/event-generator';

/** A new DATA_DIR whose embedded event store holds about `count` generated quote events, and the log's head. */
export async function generatedDataDir(prefix: string, count: number): Promise<{ dataDir: string; head: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  const events = new SqliteEventStore({ file: join(dataDir, 'events.db') });
  try {
    await generateQuoteEvents(events, count);
    return { dataDir, head: await events.headPosition() };
  } finally {
    await events.close();
  }
}
