import { Injectable } from '@nestjs/common';
import type { PayloadFinalizer, WebhookSource } from './webhook-sources';

/**
 * Where domain libraries register what turns their events into webhooks. The outbox's delivery
 * reactor asks every source whose filter matches a domain event.
 */
@Injectable()
export class WebhookSourceRegistry {
  private readonly sources = new Map<string, WebhookSource>();

  register(...sources: WebhookSource[]): void {
    for (const source of sources) {
      if (this.sources.has(source.name) && this.sources.get(source.name) !== source) throw new Error(`webhook source ${source.name} is registered twice`);
      this.sources.set(source.name, source);
    }
  }

  all(): WebhookSource[] {
    return [...this.sources.values()];
  }
}

/** Per-event-type finalizers that add per-attempt secrets (the pricing callback) just before signing. */
@Injectable()
export class PayloadFinalizerRegistry {
  private readonly finalizers = new Map<string, PayloadFinalizer>();

  register(...finalizers: PayloadFinalizer[]): void {
    for (const finalizer of finalizers) {
      if (this.finalizers.has(finalizer.eventType) && this.finalizers.get(finalizer.eventType) !== finalizer) {
        throw new Error(`a payload finalizer for ${finalizer.eventType} is registered twice`);
      }
      this.finalizers.set(finalizer.eventType, finalizer);
    }
  }

  get(eventType: string): PayloadFinalizer | undefined {
    return this.finalizers.get(eventType);
  }

  /** The payload as the delivery log may keep and show it. */
  redact<T extends Record<string, unknown>>(eventType: string, payload: T): T {
    const finalizer = this.finalizers.get(eventType);
    return finalizer?.redact ? (finalizer.redact(payload) as T) : payload;
  }
}
