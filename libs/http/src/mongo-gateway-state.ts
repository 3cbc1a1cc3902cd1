import { createHash } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { Collection, Db, MongoServerError } from 'mongodb';
import { IdempotencyClaim, IdempotencyStore, StoredResponse } from './idempotency';
import { RateDecision, RateLimiter } from './rate-limit';

/**
 * Gateway state shared by every gateway instance when MongoDB is configured: rate-limit counters
 * and idempotency records live in the database, not in one process's memory.
 */

const DUPLICATE_KEY = 11000;
const WINDOW_MS = 60_000;
/** How often an instance deletes expired entries itself where the server has no TTL indexes (FerretDB 1.x). */
const SWEEP_EVERY_MS = 60_000;

const isDuplicateKey = (error: unknown): boolean => error instanceof MongoServerError && error.code === DUPLICATE_KEY;

/**
 * Expiry of a collection's entries by their `expiresAt` date: a TTL index where the server has
 * them, else a sweep by each instance at most once a minute.
 */
class Expiry {
  private ready: Promise<boolean> | null = null;
  private lastSweep = 0;

  constructor(
    private readonly collection: Collection<any>,
    private readonly logger: Logger,
  ) {}

  /** Called on use; creates the TTL index once, or sweeps when it is due. */
  async touch(now: number): Promise<void> {
    this.ready ??= this.collection
      .createIndex({ expiresAt: 1 }, { name: 'ttl_expiresAt', expireAfterSeconds: 0 })
      .then(() => true)
      .catch((error: unknown) => {
        this.logger.warn(`no TTL index on ${this.collection.collectionName} (${String(error)}); expired entries are swept instead`);
        return false;
      });
    if (await this.ready) return;
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    await this.collection.deleteMany({ expiresAt: { $lte: new Date(now) } });
  }
}

interface RateSlot {
  _id: string;
  expiresAt: Date;
}

/**
 * Fixed one-minute windows shared by every gateway. Each admitted request takes the next numbered
 * slot of its bucket's window with an insert (`bucket@window#n`), which the unique `_id` makes
 * atomic on any server; a request that finds every slot taken is refused without writing. (A
 * counter with `$inc` upserts is atomic on MongoDB but loses increments on FerretDB 1.x.) Slots
 * expire a minute after their window ends.
 */
export class MongoRateLimiter extends RateLimiter {
  private readonly logger = new Logger('RateLimiter');
  private readonly slots: Collection<RateSlot>;
  private readonly expiry: Expiry;

  constructor(db: Db, collection = 'gateway_rate_limits') {
    super();
    this.slots = db.collection<RateSlot>(collection);
    this.expiry = new Expiry(this.slots, this.logger);
  }

  async hit(bucket: string, limit: number, now: number): Promise<RateDecision> {
    const windowStart = now - (now % WINDOW_MS);
    const resetSeconds = Math.max(1, Math.ceil((windowStart + WINDOW_MS - now) / 1000));
    void this.expiry.touch(now).catch((error) => this.logger.warn(`sweeping rate-limit windows failed: ${String(error)}`));
    const slot = await this.takeSlot(`${bucket}@${windowStart}#`, limit, new Date(windowStart + 2 * WINDOW_MS));
    return slot === null
      ? { allowed: false, limit, remaining: 0, resetSeconds }
      : { allowed: true, limit, remaining: limit - slot, resetSeconds };
  }

  /** The number of the slot taken, or null when all `limit` slots of the window are taken. */
  private async takeSlot(prefix: string, limit: number, expiresAt: Date): Promise<number | null> {
    // Slots are taken in order, so the count of the window's slots is the highest number taken.
    const taken = await this.slots.countDocuments({ _id: { $gte: prefix, $lt: `${prefix}\uffff` } });
    for (let slot = taken + 1; slot <= limit; slot++) {
      try {
        await this.slots.insertOne({ _id: `${prefix}${slot}`, expiresAt });
        return slot;
      } catch (error) {
        // Another request took this slot first: try the next.
        if (!isDuplicateKey(error)) throw error;
      }
    }
    return null;
  }
}

interface IdempotencyRecord {
  _id: string;
  scope: string;
  key: string;
  state: 'running' | 'done';
  owner?: string;
  bodyHash?: string;
  status?: number;
  body?: string;
  etag?: string;
  /** when the claim lapses (running) or the stored response expires (done) */
  expiresAt: Date;
}

/**
 * One record per scope and key (`_id` is their hash, so the key is unique): first a claim taken
 * with an insert, which only one request can win, then the response that replaces it.
 */
export class MongoIdempotencyStore extends IdempotencyStore {
  private readonly logger = new Logger('Idempotency');
  private readonly records: Collection<IdempotencyRecord>;
  private readonly expiry: Expiry;

  constructor(db: Db, collection = 'gateway_idempotency_keys') {
    super();
    this.records = db.collection<IdempotencyRecord>(collection);
    this.expiry = new Expiry(this.records, this.logger);
  }

  async get(scope: string, key: string, now: number): Promise<StoredResponse | null> {
    const record = await this.records.findOne({ _id: recordId(scope, key), state: 'done' });
    if (!record || record.expiresAt.getTime() <= now) return null;
    return { bodyHash: record.bodyHash!, status: record.status!, body: record.body!, etag: record.etag, expiresAt: record.expiresAt.getTime() };
  }

  async put(scope: string, key: string, response: StoredResponse): Promise<void> {
    await this.records.updateOne(
      { _id: recordId(scope, key) },
      {
        $set: { scope, key, state: 'done', bodyHash: response.bodyHash, status: response.status, body: response.body, ...(response.etag ? { etag: response.etag } : {}), expiresAt: new Date(response.expiresAt) },
        $unset: response.etag ? { owner: '' } : { owner: '', etag: '' },
      },
      { upsert: true },
    );
  }

  async claim(scope: string, key: string, claim: IdempotencyClaim, now: number): Promise<boolean> {
    await this.expiry.touch(now);
    const _id = recordId(scope, key);
    const running = { scope, key, state: 'running' as const, owner: claim.owner, expiresAt: new Date(claim.until) };
    try {
      await this.records.insertOne({ _id, ...running });
      return true;
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
    }
    // The record exists: when it has expired (a lapsed claim, or a response older than 24 h) it is
    // deleted and claimed anew by insert, so of two gateways taking over at once only one wins.
    const expired = await this.records.deleteOne({ _id, expiresAt: { $lte: new Date(now) } });
    if (expired.deletedCount === 0) return false;
    try {
      await this.records.insertOne({ _id, ...running });
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }

  async release(scope: string, key: string, owner: string): Promise<void> {
    await this.records.deleteOne({ _id: recordId(scope, key), state: 'running', owner });
  }

  async renew(scope: string, key: string, owner: string, until: number): Promise<void> {
    await this.records.updateOne({ _id: recordId(scope, key), state: 'running', owner }, { $set: { expiresAt: new Date(until) } });
  }
}

function recordId(scope: string, key: string): string {
  return createHash('sha256').update(`${scope}\u0000${key}`).digest('base64url');
}
