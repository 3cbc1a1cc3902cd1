import { mkdir, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { writeFileDurably } from '@lib/shared';
import { assertFileKey, FileStore } from './file-store.port';

/** Files in a directory of this machine: one file per key, written to a temporary name, synced and renamed. */
export class DirectoryFileStore extends FileStore {
  constructor(private readonly root: string) {
    super();
  }

  async put(key: string, bytes: Buffer): Promise<void> {
    const file = this.path(key);
    await mkdir(dirname(file), { recursive: true });
    await writeFileDurably(file, bytes);
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.path(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  private path(key: string): string {
    assertFileKey(key);
    return join(this.root, ...key.split('/'));
  }
}
