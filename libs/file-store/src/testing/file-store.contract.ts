import type { FileStore } from '../file-store.port';

export interface FileStoreFixture {
  store: FileStore;
  cleanup: () => Promise<void>;
}

/** The one contract every FileStore adapter passes. */
export function describeFileStoreContract(name: string, create: () => Promise<FileStoreFixture>): void {
  describe(`FileStore contract: ${name}`, () => {
    let fixture: FileStoreFixture;
    beforeEach(async () => {
      fixture = await create();
    });
    afterEach(async () => {
      await fixture.cleanup();
    });

    it('given stored bytes, then get returns exactly them', async () => {
      const bytes = Buffer.from([0x25, 0x50, 0x44, 0x46, 0x00, 0xff, 0x0a]);
      await fixture.store.put('quotes/quo_1/v1.pdf', bytes);
      expect(await fixture.store.get('quotes/quo_1/v1.pdf')).toEqual(bytes);
    });

    it('given an unknown key, then get returns null', async () => {
      expect(await fixture.store.get('quotes/none.pdf')).toBeNull();
    });

    it('given a second put under the same key, then the new bytes replace the old', async () => {
      await fixture.store.put('a/b.pdf', Buffer.from('first'));
      await fixture.store.put('a/b.pdf', Buffer.from('second'));
      expect((await fixture.store.get('a/b.pdf'))?.toString()).toBe('second');
    });

    it('given a deleted key, then get returns null and deleting again is harmless', async () => {
      await fixture.store.put('a/c.pdf', Buffer.from('x'));
      await fixture.store.delete('a/c.pdf');
      await fixture.store.delete('a/c.pdf');
      expect(await fixture.store.get('a/c.pdf')).toBeNull();
    });

    it.each(['../escape.pdf', '/etc/passwd', 'a/../../b', 'a//b', ''])('refuses the key %p', async (key) => {
      await expect(fixture.store.put(key, Buffer.from('x'))).rejects.toThrow('invalid file key');
      await expect(fixture.store.get(key)).rejects.toThrow('invalid file key');
    });
  });
}
