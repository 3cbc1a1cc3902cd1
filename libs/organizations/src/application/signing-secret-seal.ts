import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { generatedKey, loadKey, LruMap } from '@lib/shared';

export const SIGNING_SECRET_KEY_FILE = 'signing-secret.key';

/**
 * The key webhook signing secrets are sealed with before they are stored in an event:
 * `SIGNING_SECRET_KEY` (at least 32 characters) when set, else 32 random bytes generated once
 * into `DATA_DIR/signing-secret.key` (mode 0600). Every process that mints secrets (gateway) or
 * signs with them (outbox) must use the same key: share the file or set the variable. Without
 * it the sealed secrets cannot be read back: the organizations must rotate them, unless the key
 * was replaced and is kept in `SIGNING_SECRET_PREVIOUS_KEYS` (SigningSecretSeal).
 */
export function loadSigningSecretKey(env: Record<string, string | undefined>, dataDir: string): Buffer {
  return loadKey(env.SIGNING_SECRET_KEY, dataDir, 'SIGNING_SECRET_KEY', SIGNING_SECRET_KEY_FILE);
}

/**
 * The keys the current one replaced: `SIGNING_SECRET_PREVIOUS_KEYS`, and, when `SIGNING_SECRET_KEY`
 * is set, the key an earlier start generated into `DATA_DIR/signing-secret.key` (the variable
 * replaced it; its bytes are not text, so it could not be listed in the variable).
 */
export function loadPreviousSigningSecretKeys(env: { SIGNING_SECRET_KEY?: string; previousKeys: readonly string[] }, dataDir: string): Buffer[] {
  const listed = env.previousKeys.map((key) => Buffer.from(key, 'utf8'));
  const generated = env.SIGNING_SECRET_KEY?.trim() ? generatedKey(dataDir, SIGNING_SECRET_KEY_FILE) : null;
  return generated === null ? listed : [...listed, generated];
}

/** The secret a sealed value stands for. It is bound into the seal: a sealed value copied to another secret or organization does not open. */
export interface SigningSecretRef {
  organizationId: string;
  secretId: string;
}

/** The form a sealed value is written in: `v1.<key id>.<base64url of IV, ciphertext and tag>`. */
const FORMAT = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Opened secrets kept per process: the outbox folds an organization's events on every attempt. */
const MAX_OPENED = 5_000;

/** Why a sealed value did not open. */
export class SealedSecretUnreadable extends Error {
  constructor(readonly reason: 'other_key' | 'damaged') {
    super(reason === 'other_key' ? 'sealed with another key' : 'damaged, or sealed for another secret');
    this.name = 'SealedSecretUnreadable';
  }
}

/**
 * Webhook signing secrets as the events keep them: AES-256-GCM under the signing-secret key, so
 * the event log, the message bus (Kafka keeps what it relays) and their backups never hold a
 * secret that signs webhooks partners accept (docs/decisions/webhooks.md, Signing).
 *
 * A keyring: secrets are always sealed with the current key; a sealed value opens with whichever
 * key its key id names, the current one or one it replaced (`SIGNING_SECRET_PREVIOUS_KEYS`), so
 * replacing the key does not make every organization rotate.
 */
export class SigningSecretSeal {
  private readonly logger = new Logger(SigningSecretSeal.name);
  private readonly current: SealingKey;
  /** Every key that opens, in the order they are tried: the current one, then the keys it replaced. */
  private readonly keys: readonly SealingKey[];
  private readonly opened = new LruMap<string, string | null>(MAX_OPENED);

  constructor(keyMaterial: Buffer, previousKeyMaterial: readonly Buffer[] = []) {
    this.current = sealingKey(keyMaterial);
    this.keys = [this.current, ...previousKeyMaterial.map(sealingKey)];
  }

  seal(secret: string, ref: SigningSecretRef): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv).setAAD(boundTo(ref));
    const sealed = Buffer.concat([iv, cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${FORMAT}.${this.current.id}.${sealed.toString('base64url')}`;
  }

  /** The secret; throws SealedSecretUnreadable when none of the keys opens it. */
  unseal(sealed: string, ref: SigningSecretRef): string {
    const [format, keyId, payload, ...rest] = sealed.split('.');
    if (format !== FORMAT || payload === undefined || rest.length > 0) throw new SealedSecretUnreadable('damaged');
    // A key id is 32 bits: two keys of the ring may share one, so each key that has it is tried.
    const candidates = this.keys.filter((key) => key.id === keyId);
    if (candidates.length === 0) throw new SealedSecretUnreadable('other_key');
    const bytes = Buffer.from(payload, 'base64url');
    if (bytes.length <= IV_BYTES + TAG_BYTES) throw new SealedSecretUnreadable('damaged');
    for (const { key } of candidates) {
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES)).setAAD(boundTo(ref));
        decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
        return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        // not this key: the next one with the same id, else damaged
      }
    }
    throw new SealedSecretUnreadable('damaged');
  }

  /**
   * The secret, or null when it cannot be opened: the outbox then treats it as no secret (its
   * deliveries fail with `no_signing_secret` and retry) instead of stopping. The first failure of
   * each secret is logged with what to do about it.
   */
  open(sealed: string, ref: SigningSecretRef): string | null {
    const memo = `${ref.organizationId}\u0000${ref.secretId}\u0000${sealed}`;
    const known = this.opened.get(memo);
    if (known !== undefined) return known;
    let secret: string | null = null;
    try {
      secret = this.unseal(sealed, ref);
    } catch (error) {
      if (!(error instanceof SealedSecretUnreadable)) throw error;
      this.logger.error(unreadableMessage(ref, error));
    }
    this.opened.set(memo, secret);
    return secret;
  }
}

interface SealingKey {
  /** A fingerprint of the key, written beside each sealed value: names the key that opens it, and tells "another key" apart from "damaged", without revealing the key. */
  id: string;
  key: Buffer;
}

function sealingKey(keyMaterial: Buffer): SealingKey {
  return {
    id: createHmac('sha256', keyMaterial).update('webhook signing secret seal: key id').digest('hex').slice(0, 8),
    key: Buffer.from(hkdfSync('sha256', keyMaterial, Buffer.alloc(0), 'webhook signing secret seal', 32)),
  };
}

function boundTo(ref: SigningSecretRef): Buffer {
  return Buffer.from(`${ref.organizationId}\u0000${ref.secretId}`, 'utf8');
}

function unreadableMessage(ref: SigningSecretRef, error: SealedSecretUnreadable): string {
  const cause =
    error.reason === 'other_key'
      ? 'it was sealed with a key this process does not have: give every process the same SIGNING_SECRET_KEY (or the same DATA_DIR/signing-secret.key), and list the keys it replaced in SIGNING_SECRET_PREVIOUS_KEYS'
      : 'the sealed value is damaged';
  return (
    `Webhook signing secret ${ref.secretId} of organization ${ref.organizationId} cannot be unsealed: ${cause}. ` +
    `It does not sign; while no other secret of the organization does, its deliveries fail with no_signing_secret and are retried. ` +
    `If the key is lost, rotate the secret (POST /admin/v1/organizations/${ref.organizationId}/signing-secret) and give the partner the new one.`
  );
}
