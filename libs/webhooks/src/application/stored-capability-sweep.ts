import { isDeepStrictEqual } from 'node:util';
import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ReadStore } from '@lib/read-store';
import type { DeliveryRecord } from '../domain/delivery';
import { PayloadFinalizerRegistry } from '../registries';
import { DELIVERIES, DeliveryStore } from './delivery-store';

/**
 * Saved as SWEEP_VERSION once every stored record has been looked at, so later starts skip the
 * sweep; a finalizer that starts redacting something new bumps the version to sweep again.
 */
export const SWEEP_DONE = `migration:${DELIVERIES}:stored-capabilities`;
export const SWEEP_VERSION = 1;
/**
 * The delivery types a record of which held a capability at rest. Pricing callbacks were never
 * stored (their finalizer's `redact` is a second line of defence only), so the pricing records,
 * by far the most numerous, are not read.
 */
const SWEPT_TYPES = ['quote.sent'];
const PAGE = 200;
const WRITE_RETRIES = 3;

/**
 * Removes capabilities from delivery records stored before the delivery log stopped keeping them:
 * `quote.sent` records written before `3a05850` hold the customer's quote link in
 * `data.quote.customerUrl`. The API never returned it (every read redacts), and the next attempt
 * or redelivery rewrites the record without it, but a delivered record is never written again, so
 * the link stayed at rest. This sweep rewrites every such record once, through its finalizer's
 * `redact`, in the background after the outbox has started; a record written meanwhile by an
 * attempt or a redelivery is read again. Interrupted or failed, it starts over at the next start;
 * once it has looked at every record it records that, and runs again only for a new SWEEP_VERSION.
 */
@Injectable()
export class StoredCapabilitySweep implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('StoredCapabilitySweep');
  private stopping = false;
  private running: Promise<void> | null = null;

  constructor(
    private readonly store: DeliveryStore,
    private readonly reads: ReadStore,
    private readonly finalizers: PayloadFinalizerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    this.running = this.run().then(
      (redacted) => {
        if (redacted > 0) this.logger.log(`removed capabilities from ${redacted} stored delivery record(s)`);
      },
      (error: unknown) => {
        this.logger.error(`the sweep of stored delivery records failed; it runs again at the next start: ${error instanceof Error ? error.message : String(error)}`);
      },
    );
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.running;
  }

  /** Returns how many records it rewrote; 0 when an earlier run finished the sweep. */
  async run(): Promise<number> {
    if (((await this.reads.getCheckpoint(SWEEP_DONE)) ?? 0) >= SWEEP_VERSION) return 0;
    let redacted = 0;
    for (const type of SWEPT_TYPES) {
      let after: unknown[] | undefined;
      do {
        if (this.stopping) return redacted;
        const page = await this.store.findByType(type, PAGE, after);
        for (const record of page.items) if (await this.redact(record)) redacted++;
        after = page.nextAfter ?? undefined;
      } while (after);
    }
    await this.reads.saveCheckpoint(SWEEP_DONE, SWEEP_VERSION);
    return redacted;
  }

  /** Rewrites the record without its capabilities; false when it held none. */
  private async redact(found: DeliveryRecord): Promise<boolean> {
    let record: DeliveryRecord | null = found;
    for (let attempt = 1; record; attempt++) {
      const payload = this.finalizers.redact(record.type, record.payload);
      if (isDeepStrictEqual(payload, record.payload)) return false;
      if (await this.store.compareAndSet(record, { ...record, payload })) return true;
      if (attempt >= WRITE_RETRIES) throw new Error(`delivery ${record.id} kept changing while the sweep rewrote it`);
      record = await this.store.get(record.id);
    }
    return false;
  }
}
