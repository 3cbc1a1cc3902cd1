import { createHmac, timingSafeEqual } from 'node:crypto';
import { DomainError, loadKey } from '@lib/shared';

export const FILE_LINK_KEY_FILE = 'file-link.key';

/** A file link whose signature does not match (tampered, forged, or signed with another key). */
export class FileLinkInvalid extends DomainError {
  readonly code = 'link_invalid';
  constructor() {
    super('This download link is not valid.');
  }
}

/** A correctly signed file link past its expiry: read the quote again for a fresh one. */
export class FileLinkExpired extends DomainError {
  readonly code = 'link_expired';
  constructor() {
    super('This download link has expired; read the quote again for a fresh link.');
  }
}

/**
 * The key of the signed file links: `FILE_LINK_SECRET` (at least 32 characters) when set, else
 * 32 random bytes generated once into `DATA_DIR/file-link.key`, as for the pricing tokens. Every
 * gateway that hands out or checks links must use the same key. Replacing it voids every link.
 */
export function loadFileLinkKey(secret: string | undefined, dataDir: string): Buffer {
  return loadKey(secret, dataDir, 'FILE_LINK_SECRET', FILE_LINK_KEY_FILE);
}

export const quotePdfPath = (quoteId: string, version: number) => `/files/quotes/${encodeURIComponent(quoteId)}/v/${version}.pdf`;

/**
 * Short-lived download links: `{PUBLIC_BASE_URL}{path}?expires=<unix ms>&signature=<hex>`, the
 * signature an HMAC-SHA256 of the path and the expiry. Nothing is stored: any gateway with the
 * key checks a link, and a fresh link is made on every read.
 */
export class FileLinks {
  constructor(
    private readonly key: Buffer,
    private readonly publicBaseUrl: string,
    private readonly ttlMs: number,
  ) {}

  sign(path: string, now: number): string {
    const expires = now + this.ttlMs;
    return `${this.publicBaseUrl}${path}?expires=${expires}&signature=${this.signature(path, expires)}`;
  }

  /** Throws FileLinkInvalid for a bad or missing signature (checked first), FileLinkExpired after the expiry. */
  verify(path: string, expires: string | undefined, signature: string | undefined, now: number): void {
    if (!expires || !/^\d{1,16}$/.test(expires) || !signature || !/^[0-9a-f]{64}$/.test(signature)) throw new FileLinkInvalid();
    const expected = Buffer.from(this.signature(path, Number(expires)), 'hex');
    if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) throw new FileLinkInvalid();
    if (Number(expires) <= now) throw new FileLinkExpired();
  }

  private signature(path: string, expires: number): string {
    return createHmac('sha256', this.key).update(`GET\n${path}\n${expires}`).digest('hex');
  }
}
