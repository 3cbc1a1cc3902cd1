import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileLinkExpired, FileLinkInvalid, FileLinks, loadFileLinkKey, quotePdfPath } from './file-links';

const KEY = Buffer.from('k'.repeat(32));
const NOW = Date.UTC(2026, 2, 1);
const links = new FileLinks(KEY, 'https://quotes.example.com', 300_000);

function parts(url: string) {
  const parsed = new URL(url);
  return { path: parsed.pathname, expires: parsed.searchParams.get('expires') ?? undefined, signature: parsed.searchParams.get('signature') ?? undefined };
}

describe('signed file links', () => {
  const path = quotePdfPath('quo_1', 2);

  it('given a link, then it points at the file under the public base URL and expires in five minutes', () => {
    const url = links.sign(path, NOW);
    expect(url).toMatch(/^https:\/\/quotes\.example\.com\/files\/quotes\/quo_1\/v\/2\.pdf\?expires=\d+&signature=[0-9a-f]{64}$/);
    expect(Number(parts(url).expires)).toBe(NOW + 300_000);
  });

  it('given a fresh link, then it verifies until its expiry and is refused as expired from then on', () => {
    const { expires, signature } = parts(links.sign(path, NOW));
    expect(() => links.verify(path, expires, signature, NOW + 299_999)).not.toThrow();
    expect(() => links.verify(path, expires, signature, NOW + 300_000)).toThrow(FileLinkExpired);
  });

  it('given a link for another file, a later expiry or a changed signature, then it is refused as invalid', () => {
    const { expires, signature } = parts(links.sign(path, NOW));
    expect(() => links.verify(quotePdfPath('quo_1', 1), expires, signature, NOW)).toThrow(FileLinkInvalid);
    expect(() => links.verify(path, String(Number(expires) + 3_600_000), signature, NOW)).toThrow(FileLinkInvalid);
    const flipped = `${signature!.slice(0, -1)}${signature!.endsWith('0') ? '1' : '0'}`;
    expect(() => links.verify(path, expires, flipped, NOW)).toThrow(FileLinkInvalid);
    expect(() => links.verify(path, undefined, signature, NOW)).toThrow(FileLinkInvalid);
    expect(() => links.verify(path, expires, 'zz', NOW)).toThrow(FileLinkInvalid);
  });

  it('given a link signed with another key, then it is refused', () => {
    const { expires, signature } = parts(new FileLinks(Buffer.from('x'.repeat(32)), 'https://quotes.example.com', 300_000).sign(path, NOW));
    expect(() => links.verify(path, expires, signature, NOW)).toThrow(FileLinkInvalid);
  });

  it('given no FILE_LINK_SECRET, then a key is generated once into DATA_DIR and reused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'file-link-key-'));
    try {
      const first = loadFileLinkKey(undefined, dir);
      expect(first.length).toBeGreaterThanOrEqual(32);
      expect(loadFileLinkKey(undefined, dir)).toEqual(first);
      expect(readFileSync(join(dir, 'file-link.key'), 'utf8').trim().length).toBeGreaterThan(0);
      expect(loadFileLinkKey('s'.repeat(32), dir)).toEqual(Buffer.from('s'.repeat(32)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
