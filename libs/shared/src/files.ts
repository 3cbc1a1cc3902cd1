import { randomBytes } from 'node:crypto';
import { open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Writes `file` so that a reader sees the old content or the whole new one, and so that once this
 * returns the file survives a power loss: the bytes go to a temporary name and are synced, the
 * temporary is renamed over `file`, and the directory is synced so that the rename is on disk too.
 * Without the syncs a record saved afterwards in a store that syncs every commit (a PDF marked
 * ready, a mail marked sent) could outlive the file after a crash of the machine.
 */
export async function writeFileDurably(file: string, bytes: Buffer, mode = 0o600): Promise<void> {
  const draft = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(draft, 'w', mode);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(draft, file);
  const directory = await open(dirname(file), 'r');
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}
