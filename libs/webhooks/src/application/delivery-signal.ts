import { Injectable } from '@nestjs/common';
import type { DeliveryRecord } from '../domain/delivery';

type Listener = (record: DeliveryRecord) => void;

/**
 * In-process notice that a delivery became pending (created, or redelivered), so a dispatcher in
 * the same process sends it at once. Without a listener (a gateway-only process) nothing is lost:
 * the dispatcher of the outbox process finds the record in the queue on its next look.
 */
@Injectable()
export class DeliverySignal {
  private readonly listeners = new Set<Listener>();

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  pending(record: DeliveryRecord): void {
    for (const listener of this.listeners) listener(record);
  }
}
