import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeFileStoreContract } from './testing/file-store.contract';
import { DirectoryFileStore } from './directory-file-store';

describeFileStoreContract('DirectoryFileStore', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'file-store-'));
  return { store: new DirectoryFileStore(dir), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});

describe('DirectoryFileStore', () => {
  it('leaves no temporary file behind after a put', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'file-store-'));
    try {
      await new DirectoryFileStore(dir).put('quotes/q1/v1.pdf', Buffer.from('%PDF-'));
      expect(readdirSync(join(dir, 'quotes', 'q1'))).toEqual(['v1.pdf']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
